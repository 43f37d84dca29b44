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
        awafs_histwin_add(h, 0, v);
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
            awafs_histwin_add(h, 0, v[i]);
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
    awafs_histwin_add(h, 0, 50);                /* Slice 0. */
    awafs_histwin_add(h, slice, 60);            /* Slice 1. */
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
        awafs_histwin_add(h, t, 1000);
        awafs_histwin_prune(h, t);
    }
    assert_true(awafs_histwin_count(h) >= 250);
    assert_true(awafs_histwin_count(h) <= 250 + 250 / AWAFS_HIST_SLICES + 1);
    /* Something from long ago cannot enter. */
    awafs_histwin_add(h, 0, 5);
    assert_true(awafs_histwin_count(h) <= 250 + 250 / AWAFS_HIST_SLICES + 1);
    awafs_histwin_destroy(h);
}

static void
test_saturation_and_window_changes(void **state)
{
    struct awafs_histwin *h = awafs_histwin_create(250 * MS);
    uint64_t out;

    (void) state;
    awafs_histwin_add(h, 0, UINT64_MAX);
    awafs_histwin_percentiles(h, (uint32_t[]) { 50000 }, 1, &out);
    assert_true(out < (1ull << AWAFS_HIST_MAX_BITS));
    assert_true(out > (1ull << (AWAFS_HIST_MAX_BITS - 1)));
    assert_true(awafs_histwin_set_window(h, 500 * MS));
    assert_false(awafs_histwin_set_window(h, 600 * MS));
    assert_false(awafs_histwin_set_window(h, 0));
    assert_null(awafs_histwin_create(0));
    assert_true(awafs_histwin_memsize() < 300 * 1024);
    awafs_histwin_destroy(h);
}

AWAFS_UNIT_MAIN(histwin)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_sizes_are_exact),
        cmocka_unit_test(test_error_bound_against_exact),
        cmocka_unit_test(test_slices_expire_with_the_window),
        cmocka_unit_test(test_slots_are_reused_and_old_entries_ignored),
        cmocka_unit_test(test_saturation_and_window_changes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
