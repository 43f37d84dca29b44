/* Unit tests: MLFQ classification by bytes sent. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

static struct awafs_thresholds
thresholds(uint32_t n_queues, const uint64_t *thr)
{
    struct awafs_thresholds t = { .n_queues = n_queues };

    for (int i = 0; i < AWAFS_MAX_THRESHOLDS; i++) {
        t.thr[i] = i < n_queues - 1 ? thr[i] : UINT64_MAX;
    }
    return t;
}

static void
test_two_queues(void **state)
{
    struct awafs_thresholds t = thresholds(2, (uint64_t[]) { 10000 });

    (void) state;
    assert_int_equal(awafs_classify(&t, 0), 0);
    assert_int_equal(awafs_classify(&t, 9999), 0);
    /* Equality demotes: a flow that has sent thr bytes is past it. */
    assert_int_equal(awafs_classify(&t, 10000), 1);
    assert_int_equal(awafs_classify(&t, UINT64_MAX - 1), 1);
    assert_int_equal(awafs_classify(&t, UINT64_MAX), 1);
}

static void
test_eight_queues(void **state)
{
    static const uint64_t thr[7] = { 10, 20, 30, 40, 50, 60, 70 };
    struct awafs_thresholds t = thresholds(8, thr);

    (void) state;
    for (uint64_t b = 0; b < 100; b++) {
        unsigned int want = b < 10 ? 0 : b >= 70 ? 7 : b / 10;

        assert_int_equal(awafs_classify(&t, b), want);
    }
}

/* Only the thresholds of the queues in use are compared: entries past them
 * that are not UINT64_MAX never move a flow past the last queue. */
static void
test_unused_thresholds_not_read(void **state)
{
    (void) state;
    for (uint32_t n = AWAFS_MIN_QUEUES; n <= AWAFS_MAX_QUEUES; n++) {
        struct awafs_thresholds t = { .n_queues = n };

        for (uint32_t i = 0; i < AWAFS_MAX_THRESHOLDS; i++) {
            t.thr[i] = i < n - 1 ? 100 * (i + 1) : 0;
        }
        assert_int_equal(awafs_classify(&t, 0), 0);
        for (uint32_t q = 1; q < n; q++) {
            assert_int_equal(awafs_classify(&t, 100 * q - 1), q - 1);
            assert_int_equal(awafs_classify(&t, 100 * q), q);
        }
        assert_int_equal(awafs_classify(&t, UINT64_MAX), n - 1);
    }
}

static void
test_equal_thresholds_skip_a_queue(void **state)
{
    struct awafs_thresholds t = thresholds(4, (uint64_t[]) { 5, 5, 9 });

    (void) state;
    assert_int_equal(awafs_classify(&t, 4), 0);
    assert_int_equal(awafs_classify(&t, 5), 2);   /* Queue 1 is empty. */
    assert_int_equal(awafs_classify(&t, 8), 2);
    assert_int_equal(awafs_classify(&t, 9), 3);
}

static void
test_zero_threshold(void **state)
{
    struct awafs_thresholds t = thresholds(3, (uint64_t[]) { 0, 100 });

    (void) state;
    assert_int_equal(awafs_classify(&t, 0), 1);
    assert_int_equal(awafs_classify(&t, 100), 2);
}

/* Karuna: deadline flows in queue 0, the others below it, known sizes by
 * {beta} (by what is left once aged), unknown sizes by bytes and {alpha}. */
static void
test_karuna(void **state)
{
    /* Four queues: 0 reserved, 1..3 for the others (two thresholds). */
    struct awafs_thresholds alpha = thresholds(3, (uint64_t[]) { 10, 100 });
    struct awafs_thresholds beta = thresholds(3,
                                              (uint64_t[]) { 1000, 5000 });

    (void) state;
    assert_int_equal(awafs_karuna_classify(&alpha, &beta,
                                           AWAFS_FLOW_DEADLINE, 1 << 20,
                                           1 << 19, false), 0);
    /* Known size: by the size, whatever it sent. */
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           999, 0, false), 1);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           999, 999, false), 1);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           1000, 0, false), 2);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           6000, 0, false), 3);
    /* Aged: by what it has left. */
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           6000, 5500, true), 1);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           6000, 2000, true), 2);
    /* More than it said: its size is not known after all. */
    assert_true(awafs_karuna_oversize(AWAFS_FLOW_SIZED, 6000, 6001));
    assert_false(awafs_karuna_oversize(AWAFS_FLOW_SIZED, 6000, 6000));
    assert_false(awafs_karuna_oversize(AWAFS_FLOW_UNKNOWN, 0, 6001));
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           6000, 6001, false), 3);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta, AWAFS_FLOW_SIZED,
                                           6000, 6001, true), 3);
    /* Unknown size: the sieve, one queue down. */
    assert_int_equal(awafs_karuna_classify(&alpha, &beta,
                                           AWAFS_FLOW_UNKNOWN, 0, 0, false),
                     1);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta,
                                           AWAFS_FLOW_UNKNOWN, 0, 10, false),
                     2);
    assert_int_equal(awafs_karuna_classify(&alpha, &beta,
                                           AWAFS_FLOW_UNKNOWN, 0, 100, true),
                     3);
}

/* Karuna's queue of a parsed segment: a flow of known size without the
 * word on its segment or past its size is sieved (and the latter counted),
 * a flow table's sieve queue stands in for {alpha}, and only segments with
 * payload count by type. */
static void
test_karuna_queue(void **state)
{
    struct awafs_thresholds alpha = thresholds(3, (uint64_t[]) { 10, 100 });
    struct awafs_thresholds beta = thresholds(3,
                                              (uint64_t[]) { 1000, 5000 });
    struct awafs_karuna_stats st = { .oversize = 0 };
    struct awafs_hdr h = { .payload_len = 100 };

    (void) state;
    h.has_karuna = true;
    h.karuna = awafs_karuna_word(20, 0);
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h,
                                        AWAFS_FLOW_DEADLINE, 1 << 20, 2,
                                        false, &st), 0);
    h.karuna = awafs_karuna_word(0, 2);                 /* 2048 bytes. */
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h, AWAFS_FLOW_SIZED,
                                        0, -1, false, &st), 2);
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h, AWAFS_FLOW_SIZED,
                                        2000, -1, true, &st), 1);
    /* Past its size: by bytes sent and {alpha}, or the sieve queue. */
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h, AWAFS_FLOW_SIZED,
                                        2049, -1, false, &st), 3);
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h, AWAFS_FLOW_SIZED,
                                        2049, 0, false, &st), 1);
    assert_int_equal(st.oversize, 2);
    /* A sized flow (by the switch's table) whose segment lost the word. */
    h.has_karuna = false;
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h, AWAFS_FLOW_SIZED,
                                        50, -1, false, &st), 2);
    assert_int_equal(st.oversize, 2);
    h.payload_len = 0;
    assert_int_equal(awafs_karuna_queue(&alpha, &beta, &h,
                                        AWAFS_FLOW_UNKNOWN, 50, 1, false,
                                        &st), 2);
    assert_int_equal(st.type_packets[AWAFS_FLOW_DEADLINE], 1);
    assert_int_equal(st.type_packets[AWAFS_FLOW_SIZED], 2);
    assert_int_equal(st.type_packets[AWAFS_FLOW_UNKNOWN], 3);
}

/* The counts of several instances add up by type. */
static void
test_karuna_stats_add(void **state)
{
    struct awafs_karuna_stats sum = { .oversize = 0 };
    struct awafs_karuna_stats one = { .type_packets = { 1, 2, 3 },
                                      .oversize = 4 };

    (void) state;
    awafs_karuna_stats_add(&sum, &one);
    awafs_karuna_stats_add(&sum, &one);
    assert_int_equal(sum.type_packets[0], 2);
    assert_int_equal(sum.type_packets[1], 4);
    assert_int_equal(sum.type_packets[2], 6);
    assert_int_equal(sum.oversize, 8);
}

/* Which window a completion teaches. */
static void
test_karuna_ring(void **state)
{
    struct awafs_ring *alpha = awafs_ring_create(4);
    struct awafs_ring *beta = awafs_ring_create(4);

    (void) state;
    assert_ptr_equal(awafs_karuna_ring(alpha, NULL, AWAFS_FLOW_SIZED), alpha);
    assert_ptr_equal(awafs_karuna_ring(alpha, NULL, AWAFS_FLOW_DEADLINE),
                     alpha);
    assert_ptr_equal(awafs_karuna_ring(alpha, beta, AWAFS_FLOW_UNKNOWN),
                     alpha);
    assert_ptr_equal(awafs_karuna_ring(alpha, beta, AWAFS_FLOW_SIZED), beta);
    assert_null(awafs_karuna_ring(alpha, beta, AWAFS_FLOW_DEADLINE));
    awafs_ring_destroy(alpha);
    awafs_ring_destroy(beta);
}

AWAFS_UNIT_MAIN(classify)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_queues),
        cmocka_unit_test(test_eight_queues),
        cmocka_unit_test(test_unused_thresholds_not_read),
        cmocka_unit_test(test_equal_thresholds_skip_a_queue),
        cmocka_unit_test(test_zero_threshold),
        cmocka_unit_test(test_karuna),
        cmocka_unit_test(test_karuna_queue),
        cmocka_unit_test(test_karuna_ring),
        cmocka_unit_test(test_karuna_stats_add),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
