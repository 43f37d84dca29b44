/* Unit tests: strict-priority queues, buffer drops, token bucket, ECN. */

#include "unit.h"

#include <stdlib.h>

/* Packets are small integers cast to pointers: (queue << 8) | seq. */
#define PKT(q, seq) ((void *) (uintptr_t) ((q) << 8 | (seq)))

static void
test_strict_priority_and_fifo(void **state)
{
    struct awafs_sched *s = awafs_sched_create(4, 100);
    void *out[16];

    (void) state;
    assert_null(awafs_sched_enqueue(s, 3, PKT(3, 0), 100));
    assert_null(awafs_sched_enqueue(s, 1, PKT(1, 0), 100));
    assert_null(awafs_sched_enqueue(s, 3, PKT(3, 1), 100));
    assert_null(awafs_sched_enqueue(s, 0, PKT(0, 0), 100));
    assert_null(awafs_sched_enqueue(s, 1, PKT(1, 1), 100));
    assert_null(awafs_sched_enqueue(s, 9, PKT(3, 2), 100));  /* Clamped. */
    assert_int_equal(awafs_sched_backlog(s), 6);

    assert_int_equal(awafs_sched_peek(s, out, 16, INT64_MAX), 6);
    assert_ptr_equal(out[0], PKT(0, 0));
    assert_ptr_equal(out[1], PKT(1, 0));
    assert_ptr_equal(out[2], PKT(1, 1));
    assert_ptr_equal(out[3], PKT(3, 0));
    assert_ptr_equal(out[5], PKT(3, 2));

    /* Only what was sent leaves; the rest stays in order. */
    assert_int_equal(awafs_sched_commit(s, 2), 200);
    assert_int_equal(awafs_sched_backlog(s), 4);
    /* A later high-priority packet overtakes the queued low ones. */
    assert_null(awafs_sched_enqueue(s, 0, PKT(0, 1), 100));
    assert_int_equal(awafs_sched_peek(s, out, 2, INT64_MAX), 2);
    assert_ptr_equal(out[0], PKT(0, 1));
    assert_ptr_equal(out[1], PKT(1, 1));
    awafs_sched_commit(s, 5);
    assert_int_equal(awafs_sched_backlog(s), 0);
    assert_int_equal(awafs_sched_peek(s, out, 16, INT64_MAX), 0);
    awafs_sched_destroy(s);
}

static void
test_byte_budget(void **state)
{
    struct awafs_sched *s = awafs_sched_create(2, 10);
    void *out[8];

    (void) state;
    for (int i = 0; i < 4; i++) {
        awafs_sched_enqueue(s, 0, PKT(0, i), 1000);
    }
    assert_int_equal(awafs_sched_peek(s, out, 8, 0), 0);
    assert_int_equal(awafs_sched_peek(s, out, 8, 1), 1);
    assert_int_equal(awafs_sched_peek(s, out, 8, 1000), 1);
    assert_int_equal(awafs_sched_peek(s, out, 8, 1001), 2);
    awafs_sched_commit(s, 4);
    awafs_sched_destroy(s);
}

static void
test_full_buffer_drops_lowest_first(void **state)
{
    struct awafs_sched *s = awafs_sched_create(3, 4);
    struct awafs_queue_stats st;
    void *out[8];

    (void) state;
    awafs_sched_enqueue(s, 0, PKT(0, 0), 10);
    awafs_sched_enqueue(s, 2, PKT(2, 0), 20);
    awafs_sched_enqueue(s, 2, PKT(2, 1), 20);
    awafs_sched_enqueue(s, 1, PKT(1, 0), 30);
    /* Full.  A queue-0 packet pushes out queue 2's newest. */
    assert_ptr_equal(awafs_sched_enqueue(s, 0, PKT(0, 1), 10), PKT(2, 1));
    assert_ptr_equal(awafs_sched_enqueue(s, 1, PKT(1, 1), 30), PKT(2, 0));
    /* Queue 2 is empty now: queue 1 is the lowest; a queue-1 packet is
     * not above it, so it is the one dropped. */
    assert_ptr_equal(awafs_sched_enqueue(s, 1, PKT(1, 2), 30), PKT(1, 2));
    assert_ptr_equal(awafs_sched_enqueue(s, 2, PKT(2, 2), 20), PKT(2, 2));
    assert_ptr_equal(awafs_sched_enqueue(s, 0, PKT(0, 2), 10), PKT(1, 1));
    assert_int_equal(awafs_sched_backlog(s), 4);

    awafs_sched_get_queue_stats(s, 2, &st);
    assert_int_equal(st.drop_packets, 3);
    assert_int_equal(st.drop_bytes, 60);
    assert_int_equal(st.backlog_packets, 0);
    awafs_sched_get_queue_stats(s, 1, &st);
    assert_int_equal(st.drop_packets, 2);
    assert_int_equal(st.backlog_packets, 1);
    assert_int_equal(st.backlog_bytes, 30);
    awafs_sched_get_queue_stats(s, 0, &st);
    assert_int_equal(st.drop_packets, 0);
    assert_int_equal(st.enq_packets, 3);
    assert_int_equal(st.backlog_packets, 3);

    assert_int_equal(awafs_sched_peek(s, out, 8, INT64_MAX), 4);
    assert_ptr_equal(out[0], PKT(0, 0));
    assert_ptr_equal(out[1], PKT(0, 1));
    assert_ptr_equal(out[2], PKT(0, 2));
    assert_ptr_equal(out[3], PKT(1, 0));
    awafs_sched_commit(s, 4);
    awafs_sched_get_queue_stats(s, 0, &st);
    assert_int_equal(st.tx_packets, 3);
    assert_int_equal(st.tx_bytes, 30);
    awafs_sched_destroy(s);
}

static void
test_wraparound(void **state)
{
    struct awafs_sched *s = awafs_sched_create(2, 5);    /* 8 slots. */
    void *out[8];
    uint32_t next = 0;

    (void) state;
    for (uint32_t i = 0; i < 1000; i++) {
        assert_null(awafs_sched_enqueue(s, 1, PKT(1, i & 0xff), 1));
        if (i % 3 == 2) {
            size_t n = awafs_sched_peek(s, out, 8, INT64_MAX);

            for (size_t j = 0; j < n; j++) {
                assert_ptr_equal(out[j], PKT(1, next & 0xff));
                next++;
            }
            awafs_sched_commit(s, n);
        }
    }
    awafs_sched_commit(s, 8);
    awafs_sched_destroy(s);
}

/* The burst path makes the same decisions as one enqueue at a time. */
static void
test_burst_equals_single(void **state)
{
    struct awafs_sched *a = awafs_sched_create(4, 20);
    struct awafs_sched *b = awafs_sched_create(4, 20);
    void *victims[32], *out_a[32], *out_b[32];
    uint8_t queues[32];
    uint32_t lens[32];
    void *pkts[32];
    size_t n_victims = 0;

    (void) state;
    srand(3);
    for (int i = 0; i < 32; i++) {
        queues[i] = rand() % 5;             /* 4 is clamped to 3. */
        lens[i] = 60 + i;
        pkts[i] = PKT(queues[i], i);
    }
    for (int i = 0; i < 32; i++) {
        void *v = awafs_sched_enqueue(a, queues[i], pkts[i], lens[i]);

        if (v) {
            victims[n_victims++] = v;
        }
    }
    assert_int_equal(awafs_sched_enqueue_burst(b, queues, pkts, lens, 32,
                                               out_b), n_victims);
    for (size_t i = 0; i < n_victims; i++) {
        assert_ptr_equal(out_b[i], victims[i]);
    }
    assert_int_equal(awafs_sched_backlog(b), 20);
    assert_int_equal(awafs_sched_peek(a, out_a, 32, INT64_MAX), 20);
    assert_int_equal(awafs_sched_peek(b, out_b, 32, INT64_MAX), 20);
    assert_memory_equal(out_a, out_b, 20 * sizeof out_a[0]);
    for (unsigned int q = 0; q < 4; q++) {
        struct awafs_queue_stats sa, sb;

        awafs_sched_get_queue_stats(a, q, &sa);
        awafs_sched_get_queue_stats(b, q, &sb);
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    awafs_sched_commit(a, 20);
    awafs_sched_commit(b, 20);
    awafs_sched_destroy(a);
    awafs_sched_destroy(b);
}

static void
test_create_limits(void **state)
{
    (void) state;
    assert_null(awafs_sched_create(1, 10));
    assert_null(awafs_sched_create(9, 10));
    assert_null(awafs_sched_create(2, 0));
    assert_null(awafs_sched_create(2, AWAFS_SCHED_MAX_LIMIT + 1));
    assert_int_equal(awafs_sched_memsize(8, 1000),
                     awafs_sched_memsize(8, 1024));
}

static void
test_token_bucket(void **state)
{
    struct awafs_tb tb;

    (void) state;
    /* 1000 bytes/s on a 1 MHz clock, 1500-byte bucket. */
    awafs_tb_init(&tb, 1000, 1500, 1000000, 0);
    assert_int_equal(awafs_tb_budget(&tb, 0), 1500);
    awafs_tb_consume(&tb, 1600);
    assert_int_equal(awafs_tb_budget(&tb, 0), -100);
    assert_int_equal(awafs_tb_budget(&tb, 100000), 0);      /* +100 B. */
    /* Many calls within one byte's time still add up. */
    for (uint64_t t = 100000; t <= 600000; t += 10) {
        awafs_tb_budget(&tb, t);
    }
    assert_int_equal(awafs_tb_budget(&tb, 600000), 500);
    /* Idle refills only up to the bucket. */
    assert_int_equal(awafs_tb_budget(&tb, 100000000), 1500);
    /* Unlimited. */
    awafs_tb_init(&tb, 0, 0, 1000, 0);
    assert_int_equal(awafs_tb_budget(&tb, 5), INT64_MAX);
}

static void
test_ecn_marking(void **state)
{
    uint8_t frame[1600];
    struct frame_spec s = { .ip_proto = 17, .payload_len = 20 };
    struct awafs_hdr h;
    size_t l3, len;

    (void) state;
    for (int ecn = 0; ecn < 4; ecn++) {
        uint32_t sum = 0;

        len = build_frame(frame, &s, &l3, NULL);
        frame[l3 + 1] = ecn;
        /* A valid IPv4 checksum to start from. */
        for (int i = 0; i < 20; i += 2) {
            sum += frame[l3 + i] << 8 | frame[l3 + i + 1];
        }
        sum = (sum & 0xffff) + (sum >> 16);
        sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
        put16(frame + l3 + 10, sum);

        assert_int_equal(awafs_parse(frame, len, &h, NULL),
                         AWAFS_PARSE_NOT_TCP);
        assert_int_equal(awafs_ecn_set_ce(frame, len, &h),
                         ecn == 1 || ecn == 2);
        assert_int_equal(frame[l3 + 1] & 3, ecn ? 3 : 0);
        /* The checksum still verifies. */
        sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += frame[l3 + i] << 8 | frame[l3 + i + 1];
        }
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        assert_int_equal(sum, 0xffff);
    }

    s.ipv6 = true;
    len = build_frame(frame, &s, &l3, NULL);
    frame[l3 + 1] = 0x20;                       /* ECT(0) in IPv6. */
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_ecn_set_ce(frame, len, &h));
    assert_int_equal(frame[l3 + 1], 0x30);
    frame[l3 + 1] = 0x00;                       /* Not ECT. */
    assert_false(awafs_ecn_set_ce(frame, len, &h));

    /* Not IP: nothing to mark. */
    put16(frame + 12, 0x0806);
    awafs_parse(frame, 60, &h, NULL);
    assert_false(awafs_ecn_set_ce(frame, 60, &h));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_priority_and_fifo),
        cmocka_unit_test(test_byte_budget),
        cmocka_unit_test(test_full_buffer_drops_lowest_first),
        cmocka_unit_test(test_wraparound),
        cmocka_unit_test(test_burst_equals_single),
        cmocka_unit_test(test_create_limits),
        cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_ecn_marking),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
