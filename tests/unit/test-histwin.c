/* Unit tests: the O(1)-memory histogram window. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <stdlib.h>

#define MS 1000
#define BOUND (1.0 / (1 << (AWAFS_HIST_SUB_BITS + 1)))

static void
test_small_sizes_are_exact(void **state)
{
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out[3];

    (void) state;
    for (uint64_t v = 1; v <= 10; v++) {
        awafs_histwin_add(h, 0, v, 0);
    }
    assert_int_equal(awafs_histwin_count(h), 10);
    awafs_histwin_percentiles(h, (uint32_t[]) { 10000, 50000, 55000 }, 3,
                              out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 5);
    assert_int_equal(out[2], 6);
    awafs_histwin_destroy(h);
}

/* Against the exact nearest-rank percentiles of the same samples, on many
 * random value sets spanning bytes to gigabytes. */
static void
test_error_bound_against_exact(void **state)
{
    static const uint32_t pct[7] = { 1000, 10000, 25000, 50000, 75000,
                                     90000, 99000 };
    enum { N = 3000 };
    uint64_t *v = malloc(N * sizeof *v);

    (void) state;
    awafs_test_srand(11);
    for (int round = 0; round < 50; round++) {
        struct awafs_histwin *h = awafs_histwin_create(250 * MS);
        uint64_t exact[7], approx[7];
        int bits = 8 + round % 28;

        for (int i = 0; i < N; i++) {
            v[i] = (((uint64_t) awafs_test_rand() << 31 | awafs_test_rand())
                    % (1ull << bits));
            awafs_histwin_add(h, 0, v[i], 0);
        }
        awafs_histwin_percentiles(h, pct, 7, approx);
        awafs_percentiles(v, N, pct, 7, exact);
        for (int i = 0; i < 7; i++) {
            double err = exact[i] ? ((double) approx[i] - exact[i])
                                    / exact[i] : approx[i];
            assert_true(err <= BOUND && err >= -BOUND);
        }
        awafs_histwin_destroy(h);
    }
    free(v);
}

static void
test_slices_expire_with_the_window(void **state)
{
    int64_t slice = 250 * MS / AWAFS_HIST_SLICES;
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out;

    (void) state;
    awafs_histwin_add(h, 0, 50, 0);             /* Slice 0. */
    awafs_histwin_add(h, slice, 60, 0);         /* Slice 1. */
    /* Slice 0's newest possible entry (slice - 1) is exactly W old: kept. */
    assert_int_equal(awafs_histwin_prune(h, slice - 1 + 250 * MS), 0);
    assert_int_equal(awafs_histwin_count(h), 2);
    assert_int_equal(awafs_histwin_prune(h, slice + 250 * MS), 1);
    awafs_histwin_percentiles(h, (uint32_t[]) { 1000 }, 1, &out);
    assert_int_equal(out, 60);
    assert_int_equal(awafs_histwin_prune(h, 2 * slice + 250 * MS), 1);
    assert_int_equal(awafs_histwin_count(h), 0);
    awafs_histwin_destroy(h);
}

static void
test_slots_are_reused_and_old_entries_ignored(void **state)
{
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);

    (void) state;
    /* A long run: the count stays that of one window, memory fixed. */
    for (int64_t t = 0; t < 10000 * MS; t += MS) {
        awafs_histwin_add(h, t, 1000, 0);
        awafs_histwin_prune(h, t);
    }
    assert_true(awafs_histwin_count(h) >= 250);
    assert_true(awafs_histwin_count(h) <= 250 + 250 / AWAFS_HIST_SLICES + 1);
    /* Something from long ago cannot enter. */
    awafs_histwin_add(h, 0, 5, 0);
    assert_true(awafs_histwin_count(h) <= 250 + 250 / AWAFS_HIST_SLICES + 1);
    awafs_histwin_destroy(h);
}

static void
test_saturation_and_window_changes(void **state)
{
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out;

    (void) state;
    awafs_histwin_add(h, 0, UINT64_MAX, 0);
    awafs_histwin_percentiles(h, (uint32_t[]) { 50000 }, 1, &out);
    assert_true(out < (1ull << AWAFS_HIST_MAX_BITS));
    assert_true(out > (1ull << (AWAFS_HIST_MAX_BITS - 1)));
    assert_true(awafs_histwin_set_window(h, 500 * MS));
    assert_false(awafs_histwin_set_window(h, 600 * MS));
    assert_false(awafs_histwin_set_window(h, 0));
    assert_null(awafs_histwin_create(0));
    assert_true(awafs_histwin_memsize() < 320 * 1024);
    awafs_histwin_destroy(h);
}

/* Adds, over one window, 'n_liar' completions of 1 byte from source 1 and
 * 'n_honest' of 10,000 bytes from each of sources 2 and 3, interleaved. */
static void
add_liar_and_honest(struct awafs_histwin *h, int n_liar, int n_honest)
{
    int total = n_liar + 2 * n_honest;

    for (int i = 0; i < total; i++) {
        int64_t ts = (int64_t) i * 200 * MS / total;
        int k = i % (total / (2 * n_honest));

        if (k == 0 && n_honest) {
            awafs_histwin_add(h, ts, 10000, 2 + (i / 2) % 2);
            n_honest -= (i / 2) % 2;
        } else {
            awafs_histwin_add(h, ts, 1, 1);
        }
    }
}

/* The bound of docs/reliability.md: a source with more completions than
 * the others' mean weighs about that mean, so one source of three holds
 * about a third of the window, however many completions it makes. */
static void
test_one_source_of_three_weighs_a_third(void **state)
{
    static const uint32_t pct[] = { 10000, 25000, 40000, 50000 };
    struct awafs_histwin *plain = awafs_histwin_create(250 * MS);
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out[4];

    (void) state;
    awafs_histwin_weigh_sources(h, true);
    add_liar_and_honest(plain, 900, 50);
    add_liar_and_honest(h, 900, 50);
    assert_int_equal(awafs_histwin_count(plain), 1000);
    assert_int_equal(awafs_histwin_count(h), 1000);
    /* By completions the liar holds 90 % of the window. */
    awafs_histwin_percentiles(plain, pct, 4, out);
    assert_int_equal(out[3], 1);
    /* By source, about a third: percentiles above 40 % are honest. */
    awafs_histwin_percentiles(h, pct, 4, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 1);
    assert_true(out[2] > 9900 && out[2] < 10100);
    assert_true(out[3] > 9900 && out[3] < 10100);
    awafs_histwin_destroy(plain);
    awafs_histwin_destroy(h);
}

/* Sources with the same sizes at different rates, or a source alone: the
 * same percentiles as by completions. */
static void
test_weights_keep_a_shared_distribution(void **state)
{
    static const uint32_t pct[] = { 20000, 50000, 80000 };
    struct awafs_histwin *plain = awafs_histwin_create(250 * MS);
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t a[3], b[3];

    (void) state;
    awafs_histwin_weigh_sources(h, true);
    for (int i = 0; i < 2000; i++) {
        /* Sizes 1..10 kB in turn; source 7 sends nine times source 8's. */
        uint64_t size = 1000 * (1 + (i / 10) % 10);
        uint32_t source = i % 10 ? 7 : 8;

        awafs_histwin_add(plain, i * 100, size, source);
        awafs_histwin_add(h, i * 100, size, source);
    }
    awafs_histwin_percentiles(plain, pct, 3, a);
    awafs_histwin_percentiles(h, pct, 3, b);
    for (int i = 0; i < 3; i++) {
        assert_true(b[i] >= a[i] - 1000 && b[i] <= a[i] + 1000);
    }
    awafs_histwin_destroy(plain);
    awafs_histwin_destroy(h);

    /* Alone, every completion weighs one. */
    h = awafs_histwin_create(250 * MS);
    awafs_histwin_weigh_sources(h, true);
    for (uint64_t v = 1; v <= 10; v++) {
        awafs_histwin_add(h, 0, v, 5);
    }
    awafs_histwin_percentiles(h, pct, 3, a);
    assert_int_equal(a[0], 2);
    assert_int_equal(a[1], 5);
    assert_int_equal(a[2], 8);
    awafs_histwin_destroy(h);
}

/* A source that had the window to itself weighs fully until its
 * completions age out; after one window it holds its share. */
static void
test_a_head_start_lasts_one_window(void **state)
{
    static const uint32_t pct[] = { 40000 };
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out;

    (void) state;
    awafs_histwin_weigh_sources(h, true);
    for (int i = 0; i < 1000; i++) {
        awafs_histwin_add(h, i * 200, 1, 1);    /* Alone for 200 ms. */
    }
    add_liar_and_honest(h, 0, 5);               /* Two honest, at once. */
    awafs_histwin_percentiles(h, pct, 1, &out);
    assert_int_equal(out, 1);
    /* A window later the head start is gone, and the liar, still at the
     * same rate, weighs about what each honest source does. */
    for (int i = 0; i < 1000; i++) {
        int64_t ts = 500 * MS + i * 200;

        awafs_histwin_add(h, ts, 1, 1);
        if (i % 20 == 0) {
            awafs_histwin_add(h, ts, 10000, 2 + i / 20 % 2);
        }
    }
    awafs_histwin_prune(h, 700 * MS);
    assert_int_equal(awafs_histwin_count(h), 1050);
    awafs_histwin_percentiles(h, pct, 1, &out);
    assert_true(out > 9900 && out < 10100);
    /* Every source gone: n_sources is 0 again, one weighs one. */
    awafs_histwin_prune(h, 2000 * MS);
    assert_int_equal(awafs_histwin_count(h), 0);
    awafs_histwin_add(h, 2000 * MS, 3, 9);
    awafs_histwin_percentiles(h, pct, 1, &out);
    assert_int_equal(out, 3);
    awafs_histwin_destroy(h);
}

/* The frame sequence of tests/test_trust.py's SYN/FIN loops: 200 one-byte
 * completions from source 1 and, after every fifth, a 10,000-byte one from
 * sources 2 and 3 in turn.  Weighed by source the liar holds 37 % of the
 * window; 53 % if it shares source 2's slot ('collide'). */
static void
test_loop_sequence_shares(void **state)
{
    static const uint32_t pct[] = { 36000, 38000, 52000, 54000 };

    (void) state;
    for (int collide = 0; collide < 2; collide++) {
        struct awafs_histwin *h = awafs_histwin_create(5000 * MS);
        uint64_t out[4];

        awafs_histwin_weigh_sources(h, true);
        for (int i = 0; i < 200; i++) {
            awafs_histwin_add(h, i, 1, 1);
            if (i % 5 == 4) {
                uint32_t src = 2 + i / 5 % 2;

                awafs_histwin_add(h, i, 10000, collide && src == 2 ? 1 : src);
            }
        }
        awafs_histwin_percentiles(h, pct, 4, out);
        if (!collide) {
            assert_int_equal(out[0], 1);
            assert_true(out[1] > 9900 && out[1] < 10100);
        } else {
            assert_int_equal(out[2], 1);
            assert_true(out[3] > 9900 && out[3] < 10100);
        }
        awafs_histwin_destroy(h);
    }
}

AWAFS_UNIT_MAIN(histwin)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_sizes_are_exact),
        cmocka_unit_test(test_error_bound_against_exact),
        cmocka_unit_test(test_slices_expire_with_the_window),
        cmocka_unit_test(test_slots_are_reused_and_old_entries_ignored),
        cmocka_unit_test(test_saturation_and_window_changes),
        cmocka_unit_test(test_one_source_of_three_weighs_a_third),
        cmocka_unit_test(test_weights_keep_a_shared_distribution),
        cmocka_unit_test(test_a_head_start_lasts_one_window),
        cmocka_unit_test(test_loop_sequence_shares),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
