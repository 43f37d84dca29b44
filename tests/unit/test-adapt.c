/* Unit tests: the completed-size window, percentiles and threshold updates
 * (thesis Algorithm 1 with Homa's guards). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <math.h>
#include <stdlib.h>

#define MS 1000

static struct awafs_config
config(uint32_t n_queues)
{
    struct awafs_config c;

    awafs_config_default(&c, n_queues);
    c.min_samples = 1;
    return c;
}

static int
cmp_u64(const void *a_, const void *b_)
{
    uint64_t a = *(const uint64_t *) a_, b = *(const uint64_t *) b_;

    return a < b ? -1 : a > b;
}

static void
test_percentile_small_sets(void **state)
{
    uint64_t v[10], out[3];

    (void) state;
    /* 1..10: nearest rank ceil(p * n). */
    for (int i = 0; i < 10; i++) {
        v[i] = 10 - i;
    }
    awafs_percentiles(v, 10, (uint32_t[]) { 10000, 50000, 55000 }, 3, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 5);
    assert_int_equal(out[2], 6);
    awafs_percentiles(v, 10, (uint32_t[]) { 1, 99999 }, 2, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 10);
    /* One sample is every percentile. */
    v[0] = 42;
    awafs_percentiles(v, 1, (uint32_t[]) { 1000, 99000 }, 2, out);
    assert_int_equal(out[0], 42);
    assert_int_equal(out[1], 42);
    /* Four samples: the 25th percentile is the first, the 25.001st the
     * second. */
    memcpy(v, (uint64_t[]) { 40, 10, 30, 20 }, 4 * sizeof v[0]);
    awafs_percentiles(v, 4, (uint32_t[]) { 25000, 25001 }, 2, out);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 20);
}

/* Selection against sorting, on shapes that break naive quickselects. */
static void
test_percentile_matches_sort(void **state)
{
    static const uint32_t pct[7] = { 1000, 10000, 25000, 50000, 75000,
                                     90000, 99000 };
    enum { N = 5000 };
    uint64_t *v = malloc(N * sizeof *v), *sorted = malloc(N * sizeof *v);

    (void) state;
    awafs_test_srand(7);
    for (int shape = 0; shape < 6; shape++) {
        for (size_t n = 1; n <= N; n = n * 3 + 1) {
            uint64_t out[7];

            for (size_t i = 0; i < n; i++) {
                v[i] = shape == 0 ? (uint64_t) awafs_test_rand()
                       : shape == 1 ? i                        /* sorted */
                       : shape == 2 ? n - i                    /* reversed */
                       : shape == 3 ? 7                        /* equal */
                       : shape == 4 ? (i < n / 2 ? i : n - i)  /* organ */
                       : (uint64_t) (awafs_test_rand() % 3);      /* few */
            }
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *v, cmp_u64);
            awafs_percentiles(v, n, pct, 7, out);
            for (int i = 0; i < 7; i++) {
                uint64_t rank = ((uint64_t) pct[i] * n + 99999) / 100000;

                assert_int_equal(out[i], sorted[rank - 1]);
            }
        }
    }
    free(v);
    free(sorted);
}

static void
test_initial_thresholds(void **state)
{
    struct awafs_config c = config(4);
    struct awafs_adapt *a;
    struct awafs_thresholds t;

    (void) state;
    c.init_thr[0] = 1000;
    c.init_thr[1] = 2000;
    c.init_thr[2] = 3000;
    a = awafs_adapt_create(&c);
    awafs_adapt_current(a, &t);
    assert_int_equal(t.version, 0);
    assert_int_equal(t.n_queues, 4);
    assert_int_equal(t.thr[0], 1000);
    assert_int_equal(t.thr[2], 3000);
    assert_int_equal(t.thr[3], UINT64_MAX);
    assert_int_equal(t.thr[6], UINT64_MAX);
    /* Empty window: nothing published, the old set stays. */
    assert_false(awafs_adapt_update(a, 200 * MS, &t));
    assert_int_equal(t.version, 0);
    assert_int_equal(t.thr[1], 2000);
    awafs_adapt_destroy(a);
}

static void
test_update_publishes_percentiles(void **state)
{
    struct awafs_config c = config(3);
    struct awafs_adapt *a;
    struct awafs_ring *r;
    struct awafs_thresholds t;

    (void) state;
    c.pct_milli[0] = 10000;
    c.pct_milli[1] = 50000;
    a = awafs_adapt_create(&c);
    r = awafs_adapt_ring(a);
    for (int i = 1; i <= 100; i++) {
        assert_true(awafs_ring_push(r, 100 * MS, i * 100));
    }
    assert_true(awafs_adapt_update(a, 200 * MS, &t));
    assert_int_equal(t.version, 1);
    assert_int_equal(t.n_samples, 100);
    assert_int_equal(t.updated_us, 200 * MS);
    assert_int_equal(t.thr[0], 1000);
    assert_int_equal(t.thr[1], 5000);
    assert_int_equal(t.thr[2], UINT64_MAX);
    assert_int_equal(awafs_adapt_window_count(a), 100);
    /* Every update is a new version, even with the same values. */
    assert_true(awafs_adapt_update(a, 300 * MS, &t));
    assert_int_equal(t.version, 2);
    assert_int_equal(t.thr[0], 1000);
    awafs_adapt_destroy(a);
}

static void
test_prune_exact_boundary(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_adapt *a;
    struct awafs_ring *r;
    struct awafs_thresholds t;
    struct awafs_adapt_stats st;

    (void) state;
    c.window_us = 250 * MS;
    a = awafs_adapt_create(&c);
    r = awafs_adapt_ring(a);
    awafs_ring_push(r, 1000, 10);
    awafs_ring_push(r, 1001, 20);
    awafs_ring_push(r, 1002, 30);
    /* At now = 1001 + W, the entry at 1001 is exactly W old: kept. */
    awafs_adapt_update(a, 1001 + 250 * MS, &t);
    assert_int_equal(awafs_adapt_window_count(a), 2);
    assert_int_equal(t.thr[0], 20);
    awafs_adapt_update(a, 1002 + 250 * MS, &t);
    assert_int_equal(awafs_adapt_window_count(a), 1);
    assert_int_equal(t.thr[0], 30);
    /* All aged out: the previous set is kept. */
    assert_false(awafs_adapt_update(a, 1003 + 250 * MS, &t));
    assert_int_equal(awafs_adapt_window_count(a), 0);
    assert_int_equal(t.thr[0], 30);
    assert_int_equal(t.version, 2);
    awafs_adapt_get_stats(a, &st);
    assert_int_equal(st.samples_in, 3);
    assert_int_equal(st.samples_pruned, 3);
    assert_int_equal(st.skipped_empty, 1);
    awafs_adapt_destroy(a);
}

/* Completions from rings of their own (one per producer thread) join the
 * window in time order across the rings: the exact window ages out the
 * oldest first. */
static void
test_collect_merges_rings_by_time(void **state)
{
    static const enum awafs_window_kind kinds[] = {
        AWAFS_WINDOW_EXACT, AWAFS_WINDOW_HISTOGRAM,
    };

    (void) state;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        struct awafs_ring *rings[2] = { awafs_ring_create(8),
                                        awafs_ring_create(8) };
        struct awafs_config c = config(2);
        struct awafs_adapt_stats st;
        struct awafs_ring_entry e;
        struct awafs_thresholds t;
        struct awafs_adapt *a;

        c.window_kind = kinds[k];
        c.window_us = 250 * MS;
        a = awafs_adapt_create(&c);
        for (int i = 0; i < 3; i++) {
            assert_true(awafs_ring_push(rings[0], (10 + 195 * i) * MS, 1000));
        }
        for (int i = 0; i < 2; i++) {
            assert_true(awafs_ring_push(rings[1], (100 + 200 * i) * MS,
                                        2000));
        }
        /* And one through the adapt's own ring. */
        assert_true(awafs_ring_push(awafs_adapt_ring(a), 390 * MS, 3000));
        awafs_adapt_collect(a, rings, 2);
        assert_false(awafs_ring_peek(rings[0], &e));
        assert_false(awafs_ring_peek(rings[1], &e));
        awafs_adapt_collect(a, rings, 2);
        awafs_adapt_get_stats(a, &st);
        assert_int_equal(st.samples_in, 5);

        assert_true(awafs_adapt_update(a, 390 * MS, &t));
        awafs_adapt_get_stats(a, &st);
        assert_int_equal(st.samples_in, 6);
        if (kinds[k] == AWAFS_WINDOW_EXACT) {
            /* At 390 ms those before 140 ms are gone (10 and 100 ms): in
             * the order they came, 10, 205, 400, 100, 300, the one at 100
             * ms would wait behind the one at 205. */
            assert_int_equal(awafs_adapt_window_count(a), 4);
            assert_int_equal(st.samples_pruned, 2);
        }
        awafs_adapt_destroy(a);
        awafs_ring_destroy(rings[0]);
        awafs_ring_destroy(rings[1]);
    }
}

/* With a ring capacity of 0 the adapt has no ring of its own, and costs
 * none: its completions come from the datapath's rings. */
static void
test_adapt_without_a_ring_of_its_own(void **state)
{
    struct awafs_ring *r = awafs_ring_create(4);
    struct awafs_config c = config(2);
    struct awafs_thresholds t;
    struct awafs_adapt *a;
    size_t with_ring;

    (void) state;
    with_ring = awafs_adapt_memsize(&c);
    c.ring_capacity = 0;
    assert_null(awafs_config_check(&c));
    assert_int_equal(with_ring - awafs_adapt_memsize(&c),
                     awafs_ring_memsize(config(2).ring_capacity));
    a = awafs_adapt_create(&c);
    assert_null(awafs_adapt_ring(a));
    assert_false(awafs_adapt_update(a, 10, &t));
    assert_true(awafs_ring_push(r, 10, 1500));
    awafs_adapt_collect(a, &r, 1);
    assert_true(awafs_adapt_update(a, 20, &t));
    assert_int_equal(t.thr[0], 1500);
    c.ring_capacity = 1;
    assert_non_null(awafs_config_check(&c));
    awafs_adapt_destroy(a);
    awafs_ring_destroy(r);
}

static void
test_min_samples_guard(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_adapt *a;
    struct awafs_thresholds t;
    struct awafs_adapt_stats st;

    (void) state;
    c.min_samples = 5;
    c.init_thr[0] = 777;
    a = awafs_adapt_create(&c);
    for (int i = 0; i < 4; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 0, 5000);
    }
    assert_false(awafs_adapt_update(a, 10, &t));
    assert_int_equal(t.thr[0], 777);
    assert_int_equal(t.version, 0);
    awafs_ring_push(awafs_adapt_ring(a), 0, 5000);
    assert_true(awafs_adapt_update(a, 20, &t));
    assert_int_equal(t.thr[0], 5000);
    awafs_adapt_get_stats(a, &st);
    assert_int_equal(st.skipped_few, 1);
    assert_int_equal(st.updates, 1);
    awafs_adapt_destroy(a);
}

static void
test_static_mode_never_moves(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_adapt *a;
    struct awafs_thresholds t;

    (void) state;
    c.adaptive = false;
    c.init_thr[0] = 1000;
    a = awafs_adapt_create(&c);
    for (int i = 0; i < 100; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 0, 1000000);
    }
    assert_false(awafs_adapt_update(a, 10, &t));
    assert_int_equal(t.thr[0], 1000);
    assert_int_equal(t.version, 0);
    /* The window is still kept, for observability and a later switch. */
    assert_int_equal(awafs_adapt_window_count(a), 100);
    awafs_adapt_destroy(a);
}

static void
test_full_window_evicts_oldest(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_adapt *a;
    struct awafs_thresholds t;
    struct awafs_adapt_stats st;

    (void) state;
    c.window_capacity = 16;
    c.ring_capacity = 64;
    c.pct_milli[0] = 1000;              /* The minimum, in practice. */
    a = awafs_adapt_create(&c);
    for (int i = 0; i < 40; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 0, i);
    }
    assert_true(awafs_adapt_update(a, 10, &t));
    assert_int_equal(awafs_adapt_window_count(a), 16);
    assert_int_equal(t.thr[0], 24);     /* 0..23 evicted. */
    awafs_adapt_get_stats(a, &st);
    assert_int_equal(st.samples_evicted, 24);
    awafs_adapt_destroy(a);
}

/* 'window-histogram': both kinds of window count the same sizes in the
 * same powers of 2, through evictions and pruning. */
static void
test_window_log2_counts(void **state)
{
    static const enum awafs_window_kind kinds[] = {
        AWAFS_WINDOW_EXACT, AWAFS_WINDOW_HISTOGRAM,
    };
    uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS];

    (void) state;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        struct awafs_config c = config(2);
        struct awafs_thresholds t;
        struct awafs_adapt *a;
        struct awafs_ring *r;

        c.window_kind = kinds[k];
        c.window_capacity = 16;
        c.window_us = 250 * MS;
        a = awafs_adapt_create(&c);
        r = awafs_adapt_ring(a);
        assert_int_equal(awafs_adapt_window_log2_counts(a, counts), 0);
        /* 0 and 1 share bucket 0; 1023 is in 9, 1024 in 10; beyond the
         * last power, the last bucket. */
        awafs_ring_push(r, 0, 0);
        awafs_ring_push(r, 0, 1);
        awafs_ring_push(r, 0, 1023);
        awafs_ring_push(r, 0, 1024);
        awafs_ring_push(r, 0, UINT64_MAX);
        awafs_adapt_update(a, 0, &t);
        assert_int_equal(awafs_adapt_window_log2_counts(a, counts),
                         AWAFS_WINDOW_LOG2_BUCKETS);
        assert_int_equal(counts[0], 2);
        assert_int_equal(counts[9], 1);
        assert_int_equal(counts[10], 1);
        assert_int_equal(counts[AWAFS_WINDOW_LOG2_BUCKETS - 1], 1);
        /* Later sizes; the old ones age out. */
        for (int i = 0; i < 3; i++) {
            awafs_ring_push(r, 200 * MS, 3000);
        }
        awafs_adapt_update(a, 300 * MS, &t);
        assert_int_equal(awafs_adapt_window_log2_counts(a, counts), 12);
        assert_int_equal(counts[11], 3);
        assert_int_equal(counts[0] + counts[9] + counts[10], 0);
        awafs_adapt_destroy(a);
    }
    /* The exact window's evictions leave its counts. */
    {
        struct awafs_config c = config(2);
        struct awafs_thresholds t;
        struct awafs_adapt *a;

        c.window_capacity = 16;
        a = awafs_adapt_create(&c);
        for (int i = 0; i < 40; i++) {
            awafs_ring_push(awafs_adapt_ring(a), 0, i < 24 ? 100 : 5000);
        }
        awafs_adapt_update(a, 10, &t);
        assert_int_equal(awafs_adapt_window_log2_counts(a, counts), 13);
        assert_int_equal(counts[6], 0);
        assert_int_equal(counts[12], 16);
        awafs_adapt_destroy(a);
    }
}

static void
test_reconfigure_keeps_window(void **state)
{
    struct awafs_config c = config(2), c2;
    struct awafs_adapt *a;
    struct awafs_thresholds t;

    (void) state;
    a = awafs_adapt_create(&c);
    for (int i = 1; i <= 10; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 0, i);
    }
    awafs_adapt_update(a, 10, &t);
    assert_int_equal(t.thr[0], 1);

    /* New percentile: same window, new value at the next round. */
    c2 = c;
    c2.pct_milli[0] = 50000;
    assert_true(awafs_adapt_reconfigure(a, &c2, 20));
    assert_int_equal(awafs_adapt_window_count(a), 10);
    awafs_adapt_current(a, &t);
    assert_int_equal(t.thr[0], 1);      /* Learned set kept until then. */
    awafs_adapt_update(a, 30, &t);
    assert_int_equal(t.thr[0], 5);

    /* Switching to static applies the configured set as a new version. */
    c2.adaptive = false;
    c2.init_thr[0] = 4242;
    assert_true(awafs_adapt_reconfigure(a, &c2, 40));
    awafs_adapt_current(a, &t);
    assert_int_equal(t.thr[0], 4242);
    assert_int_equal(t.version, 3);
    assert_int_equal(t.updated_us, 40);

    /* Queue count and capacities need a new instance; bad configs are
     * refused without a change. */
    c2 = c;
    c2.n_queues = 3;
    assert_false(awafs_adapt_reconfigure(a, &c2, 50));
    c2 = c;
    c2.window_capacity *= 2;
    assert_false(awafs_adapt_reconfigure(a, &c2, 50));
    c2 = c;
    c2.pct_milli[0] = 0;
    assert_false(awafs_adapt_reconfigure(a, &c2, 50));
    awafs_adapt_current(a, &t);
    assert_int_equal(t.thr[0], 4242);
    awafs_adapt_destroy(a);
}

/* Karuna's known sizes' window: the sieve's mode and window, its own
 * queues, percentiles and ring. */
static void
test_config_share_window(void **state)
{
    struct awafs_config core, beta;

    (void) state;
    awafs_config_default(&core, 4);
    core.adaptive = false;
    core.window_kind = AWAFS_WINDOW_HISTOGRAM;
    core.window_us = 1000;
    core.interval_us = 500;
    core.min_samples = 3;
    core.weigh_sources = true;
    core.window_capacity = 64;
    awafs_config_default(&beta, 3);
    beta.pct_milli[0] = 5000;
    beta.ring_capacity = 0;
    awafs_config_share_window(&beta, &core);
    assert_false(beta.adaptive);
    assert_int_equal(beta.window_kind, AWAFS_WINDOW_HISTOGRAM);
    assert_int_equal(beta.window_us, 1000);
    assert_int_equal(beta.interval_us, 500);
    assert_int_equal(beta.min_samples, 3);
    assert_true(beta.weigh_sources);
    assert_int_equal(beta.window_capacity, 64);
    assert_int_equal(beta.n_queues, 3);
    assert_int_equal(beta.pct_milli[0], 5000);
    assert_int_equal(beta.ring_capacity, 0);
    assert_null(awafs_config_check(&beta));
}

static void
test_config_check(void **state)
{
    struct awafs_config c;

    (void) state;
    awafs_config_default(&c, 4);
    assert_null(awafs_config_check(&c));
    c.n_queues = 9;
    assert_string_equal(awafs_config_check(&c),
                        "queues must be between 2 and 8");
    c.n_queues = 1;
    assert_non_null(awafs_config_check(&c));
    assert_null(awafs_adapt_create(&c));

    awafs_config_default(&c, 4);
    c.pct_milli[1] = c.pct_milli[0];
    assert_string_equal(awafs_config_check(&c),
                        "percentiles must be strictly increasing");
    awafs_config_default(&c, 4);
    c.pct_milli[2] = 100000;
    assert_string_equal(awafs_config_check(&c),
                        "percentiles must be in (0, 100)");
    awafs_config_default(&c, 4);
    c.init_thr[1] = c.init_thr[0] - 1;
    assert_string_equal(awafs_config_check(&c),
                        "thresholds must be non-decreasing");
    awafs_config_default(&c, 4);
    c.window_us = 0;
    assert_non_null(awafs_config_check(&c));
    awafs_config_default(&c, 4);
    c.min_samples = 0;
    assert_non_null(awafs_config_check(&c));
    /* Entries past n_queues - 1 are ignored. */
    awafs_config_default(&c, 2);
    c.pct_milli[3] = 0;
    assert_null(awafs_config_check(&c));
    /* An exact window is bounded by the time a round takes. */
    awafs_config_default(&c, 4);
    c.window_kind = AWAFS_WINDOW_EXACT;
    c.window_capacity = 1u << 20;
    assert_null(awafs_config_check(&c));
    c.window_capacity++;
    assert_string_equal(awafs_config_check(&c),
                        "window capacity must be between 16 and 1048576");
    c.window_capacity = 1u << 16;
    c.minimise_fct = true;
    assert_null(awafs_config_check(&c));
    c.window_capacity++;
    assert_non_null(strstr(awafs_config_check(&c), "at most 65536"));
    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    assert_null(awafs_config_check(&c));
    /* The model is solved for its mean FCT, its mean slowdown or the
     * short flows' mean FCT, for which at least a byte is short, or for
     * PIAS's objective. */
    c.fct_model = AWAFS_FCT_MLFQ_SLOWDOWN;
    assert_null(awafs_config_check(&c));
    c.fct_model = AWAFS_FCT_MLFQ_SHORT;
    assert_null(awafs_config_check(&c));
    c.short_size = 0;
    assert_string_equal(awafs_config_check(&c),
                        "short-size must be at least 1 byte");
    c.short_size = 1;
    assert_null(awafs_config_check(&c));
    c.fct_model = AWAFS_FCT_KARUNA;
    assert_null(awafs_config_check(&c));
    c.fct_model = AWAFS_FCT_KARUNA + 1;
    assert_non_null(strstr(awafs_config_check(&c), "PIAS's objective"));
    /* Sources are weighed in the histogram window only. */
    awafs_config_default(&c, 2);
    c.weigh_sources = true;
    assert_string_equal(awafs_config_check(&c),
                        "window-weight=source needs window-type=histogram");
    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    assert_null(awafs_config_check(&c));
    /* Bounds of the learned thresholds. */
    awafs_config_default(&c, 3);
    c.min_thr[0] = 7000;
    c.min_thr[1] = 6999;
    assert_string_equal(awafs_config_check(&c), "min-thresholds and "
                        "max-thresholds must be non-decreasing");
    c.min_thr[1] = 14000;
    c.max_thr[0] = 6999;
    assert_string_equal(awafs_config_check(&c), "min-thresholds must not be "
                        "above max-thresholds");
    c.max_thr[0] = 8000;
    c.max_thr[1] = 13999;
    assert_string_equal(awafs_config_check(&c), "min-thresholds must not be "
                        "above max-thresholds");
    c.max_thr[1] = 20000;
    assert_null(awafs_config_check(&c));
    c.init_thr[0] = 9000;
    assert_string_equal(awafs_config_check(&c), "thresholds must lie within "
                        "min-thresholds and max-thresholds");
    c.adaptive = false;             /* Static mode moves nothing. */
    assert_null(awafs_config_check(&c));
}

/* percentiles=auto publishes the optimum of what it is configured to
 * minimise: on an exact window of a mix, the solver's set for the mean FCT,
 * for the mean slowdown, for the short flows' mean (up to 30 kB here) or
 * for PIAS's objective, and what the model predicts of it. */
static void
test_model_minimises_the_configured_objective(void **state)
{
    static const struct awafs_fct_point mix[] = {
        { 100, 30 }, { 300, 15 }, { 1000, 15 }, { 3000, 10 },
        { 10000, 10 }, { 30000, 10 }, { 300000, 5 }, { 3000000, 5 },
    };
    static const enum awafs_fct_model models[] = {
        AWAFS_FCT_MLFQ, AWAFS_FCT_MLFQ_SLOWDOWN, AWAFS_FCT_MLFQ_SHORT,
        AWAFS_FCT_KARUNA,
    };
    uint64_t first[4];

    (void) state;
    for (int m = 0; m < 4; m++) {
        struct awafs_config c = config(3);
        struct awafs_fct_plan want, plan;
        struct awafs_thresholds t;
        struct awafs_adapt *a;

        c.window_kind = AWAFS_WINDOW_EXACT;
        c.minimise_fct = true;
        c.fct_model = models[m];
        c.short_size = 30000;
        c.init_thr[0] = 10000000;
        c.init_thr[1] = 20000000;
        a = awafs_adapt_create(&c);
        assert_non_null(a);
        awafs_adapt_set_load(a, 0.8);
        for (size_t i = 0; i < sizeof mix / sizeof mix[0]; i++) {
            for (uint64_t j = 0; j < mix[i].count; j++) {
                awafs_ring_push(awafs_adapt_ring(a), 100 * MS, mix[i].size);
            }
        }
        assert_true(awafs_adapt_update(a, 200 * MS, &t));
        assert_true(awafs_fct_solve(models[m], c.short_size, mix, 8, 3, 0.8,
                                    &want));
        assert_int_equal(t.thr[0], want.thr[0]);
        assert_int_equal(t.thr[1], want.thr[1]);
        if (models[m] == AWAFS_FCT_KARUNA) {
            /* Shown: what the multilevel model predicts of that set. */
            assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, c.short_size, mix,
                                           8, 3, 0.8, t.thr, &want));
        }
        assert_true(awafs_adapt_get_plan(a, &plan));
        assert_true(fabs(plan.mean - want.mean) <= 1e-9 * want.mean);
        assert_true(fabs(plan.slowdown - want.slowdown)
                    <= 1e-9 * want.slowdown);
        assert_true(fabs(plan.short_mean - want.short_mean)
                    <= 1e-9 * want.short_mean);
        first[m] = t.thr[0];
        awafs_adapt_destroy(a);
    }
    /* Solved for the slowdown, fewer flows share queue 0 with the heads of
     * the long ones: 10 kB and below, against 30 kB.  Solved for the flows
     * up to 30 kB, they all share queue 0. */
    assert_int_equal(first[0], 30000);
    assert_int_equal(first[1], 10000);
    assert_int_equal(first[2], 30000);
    /* PIAS's objective sees only the flows' fractions: 45 % of them end in
     * queue 0 (300 bytes and below), whatever their sizes. */
    assert_int_equal(first[3], 300);
}

/* Whatever the window holds, every learned set stays within the bounds:
 * percentiles, the FCT model's optimum, and the learned set when new
 * bounds are configured (at once, as a new version). */
static void
test_learned_thresholds_stay_within_bounds(void **state)
{
    static const uint64_t lows[] = { 5000, 50000 };
    static const uint64_t highs[] = { 20000, 2000000 };

    (void) state;
    for (int model = 0; model < 2; model++) {
        struct awafs_config c = config(3);
        struct awafs_thresholds t;
        struct awafs_adapt *a;
        uint64_t version;
        bool above;

        c.window_kind = AWAFS_WINDOW_HISTOGRAM;
        c.minimise_fct = model;
        c.init_thr[0] = 20000;
        c.init_thr[1] = 2000000;
        memcpy(c.min_thr, lows, sizeof lows);
        memcpy(c.max_thr, highs, sizeof highs);
        a = awafs_adapt_create(&c);
        assert_non_null(a);
        awafs_adapt_set_load(a, 0.8);
        /* One-byte messages, and a tenth of 1 MB: the percentiles, and the
         * model's first threshold (it serves the one-byte messages first),
         * at their floors. */
        for (int i = 0; i < 200; i++) {
            awafs_ring_push(awafs_adapt_ring(a), 100 * MS,
                            i % 10 ? 1 : 1000000);
        }
        assert_true(awafs_adapt_update(a, 200 * MS, &t));
        assert_int_equal(t.thr[0], 5000);
        if (model) {
            assert_true(t.thr[1] >= 50000 && t.thr[1] <= 2000000);
        } else {
            assert_int_equal(t.thr[1], 50000);
        }
        /* Then only huge ones (the window forgets the first): each at its
         * ceiling, or between the bounds. */
        for (int i = 0; i < 200; i++) {
            awafs_ring_push(awafs_adapt_ring(a), 500 * MS,
                            i % 2 ? 1000000000 : 500000000);
        }
        awafs_adapt_update(a, 600 * MS, &t);
        assert_true(t.thr[0] >= 5000 && t.thr[0] <= 20000);
        assert_true(t.thr[1] >= 50000 && t.thr[1] <= 2000000);
        if (!model) {
            assert_int_equal(t.thr[0], 20000);
            assert_int_equal(t.thr[1], 2000000);
        }
        /* Lower ceilings apply to the learned set at once. */
        version = t.version;
        above = t.thr[0] > 12000 || t.thr[1] > 120000;
        c.init_thr[0] = 10000;      /* Within the new bounds. */
        c.init_thr[1] = 100000;
        c.max_thr[0] = 12000;
        c.max_thr[1] = 120000;
        assert_true(awafs_adapt_reconfigure(a, &c, 700 * MS));
        awafs_adapt_current(a, &t);
        assert_true(t.thr[0] <= 12000 && t.thr[1] <= 120000);
        assert_int_equal(t.version, version + above);
        awafs_adapt_destroy(a);
    }
}

/* Completions carry their source through the ring: weighed by source, a
 * source that makes nine in ten completions holds about half of a window
 * of two sources, and turning the weights on or off is done in place. */
static void
test_sources_weighed_through_the_ring(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_thresholds t;
    struct awafs_adapt *a;

    (void) state;
    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    c.pct_milli[0] = 60000;
    for (int weigh = 0; weigh < 2; weigh++) {
        c.weigh_sources = weigh;
        a = awafs_adapt_create(&c);
        for (int i = 0; i < 1000; i++) {
            if (i % 10) {
                awafs_ring_push_from(awafs_adapt_ring(a), i * 100, 100, 11);
            } else {
                awafs_ring_push_from(awafs_adapt_ring(a), i * 100, 5000, 12);
            }
        }
        assert_true(awafs_adapt_update(a, 100 * MS, &t));
        /* 60 % of the window: the 100-byte source's by completions, the
         * other's by source. */
        if (weigh) {
            assert_true(t.thr[0] > 4900 && t.thr[0] < 5100);
        } else {
            assert_int_equal(t.thr[0], 100);
        }
        c.weigh_sources = !weigh;
        assert_true(awafs_adapt_reconfigure(a, &c, 100 * MS));
        awafs_adapt_destroy(a);
    }
}

/* Samples of two workloads: mice and elephants (1 kB to 3 kB, and 10 MB),
 * and a spread of medium flows (10 kB to 640 kB). */
static uint64_t
workload_size(int workload, unsigned int *seed)
{
    int r = rand_r(seed) % 100;

    if (workload == 0) {
        return r < 95 ? 1000 + rand_r(seed) % 2000 : 10000000;
    }
    return 10000 << (r % 7);
}

/* With minimise_fct, each workload in turn moves the thresholds to the
 * model's optimum for the window (the solver on the same points), and a
 * steady workload keeps its set: fresh samples of it do not move it. */
static void
test_minimise_fct_follows_workloads_and_holds(void **state)
{
    struct awafs_config c = config(4);
    unsigned int seed = 3;
    struct awafs_thresholds t;
    struct awafs_fct_plan plan;
    struct awafs_adapt_stats st;
    struct awafs_adapt *a;
    int64_t now = 0;

    (void) state;
    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    c.window_us = 1000 * MS;
    c.minimise_fct = true;
    a = awafs_adapt_create(&c);
    assert_non_null(a);
    assert_false(awafs_adapt_get_plan(a, &plan));
    awafs_adapt_set_load(a, 0.7);
    for (int workload = 0; workload < 2; workload++) {
        uint64_t version = 0;

        for (int round = 0; round < 20; round++) {
            now += 200 * MS;
            for (int i = 0; i < 500; i++) {
                awafs_ring_push(awafs_adapt_ring(a), now - 1,
                                workload_size(workload, &seed));
            }
            if (awafs_adapt_update(a, now, &t) && round >= 10) {
                fail_msg("workload %d: a new set in round %d", workload,
                         round);
            }
            version = t.version;
        }
        /* The window holds this workload alone by now. */
        assert_true(awafs_adapt_get_plan(a, &plan));
        if (workload == 0) {
            assert_true(t.thr[0] >= 2000 && t.thr[0] < 10000000);
        } else {
            assert_true(t.thr[0] >= 10000 && t.thr[0] < 640000);
        }
        assert_true(plan.mean > 0);
        assert_int_equal(version, t.version);
    }
    awafs_adapt_get_stats(a, &st);
    assert_true(st.model_kept >= 20);
    assert_true(st.updates >= 2);
    awafs_adapt_destroy(a);
}

/* The micro benchmark's start: a threshold of 1 MB, just below the
 * elephants' bucket, is not taken for the mice's threshold (it serves the
 * elephants' bytes at the top): the first round moves it to 10 kB. */
static void
test_minimise_fct_leaves_a_threshold_below_the_elephants(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_thresholds t;
    struct awafs_adapt *a;

    (void) state;
    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    c.init_thr[0] = 1000000;
    c.minimise_fct = true;
    a = awafs_adapt_create(&c);
    awafs_adapt_set_load(a, 0.5);
    for (int i = 0; i < 100; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 100 * MS,
                        i % 5 ? 10000 : 1000000);
    }
    assert_true(awafs_adapt_update(a, 200 * MS, &t));
    assert_true(t.thr[0] >= 9900 && t.thr[0] <= 10100);
    awafs_adapt_destroy(a);
}

/* A port at 15 % load whose few completions are 5 kB mice and 10 MB
 * elephants: the elephants' own bytes make up nearly all of the mean FCT,
 * so a threshold of 1.3 MB predicts a mean only 2 % above the optimum's
 * (within the margin of 26 % for 16 samples), but the mice wait behind
 * 1.3 MB of each elephant: a mean slowdown 2.6 times the optimum's, above
 * twice the margin.  The first round moves the threshold to the mice, and
 * a later one to other mice. */
static void
test_minimise_fct_weighs_the_slowdown(void **state)
{
    static const struct awafs_fct_point points[] = {
        { 5000, 10 }, { 10000000, 6 },
    };
    struct awafs_config c = config(2);
    struct awafs_fct_plan plan, best, initial;
    struct awafs_thresholds t;
    struct awafs_adapt *a;

    (void) state;
    assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, 0, points, 2, 2, 0.15, &best));
    assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, 0, points, 2, 2, 0.15,
                                   (const uint64_t[]) { 1300000 },
                                   &initial));
    assert_true(initial.mean / best.mean > 1.01
                && initial.mean / best.mean < 1.03);
    assert_true(initial.slowdown / best.slowdown > 2.5
                && initial.slowdown / best.slowdown < 2.7);

    c.window_kind = AWAFS_WINDOW_HISTOGRAM;
    c.init_thr[0] = 1300000;
    c.minimise_fct = true;
    a = awafs_adapt_create(&c);
    awafs_adapt_set_load(a, 0.15);
    for (int i = 0; i < 16; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 100 * MS,
                        i < 10 ? 5000 : 10000000);
    }
    assert_true(awafs_adapt_update(a, 200 * MS, &t));
    assert_true(t.thr[0] >= 4950 && t.thr[0] <= 5050);
    assert_true(awafs_adapt_get_plan(a, &plan));
    assert_true(plan.slowdown >= 1 && plan.slowdown < 1.2);
    /* The same window again: kept. */
    assert_false(awafs_adapt_update(a, 300 * MS, &t));
    /* Mice of 20 kB instead: 5 kB predicts a mean 13 % above the new
     * optimum's, inside the margin, and a slowdown 27 times it. */
    for (int i = 0; i < 16; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 500 * MS,
                        i < 10 ? 20000 : 10000000);
    }
    assert_true(awafs_adapt_update(a, 600 * MS, &t));
    assert_true(t.thr[0] >= 19800 && t.thr[0] <= 20200);
    awafs_adapt_destroy(a);
}

/* Switching to minimise_fct and back is in place: the window stays. */
static void
test_minimise_fct_reconfigures_in_place(void **state)
{
    struct awafs_config c = config(2);
    struct awafs_thresholds t;
    struct awafs_fct_plan plan;
    struct awafs_adapt *a = awafs_adapt_create(&c);

    (void) state;
    for (int i = 0; i < 100; i++) {
        awafs_ring_push(awafs_adapt_ring(a), 100 * MS,
                        i < 90 ? 1000 : 5000000);
    }
    c.pct_milli[0] = 95000;
    assert_true(awafs_adapt_reconfigure(a, &c, 100 * MS));
    assert_true(awafs_adapt_update(a, 150 * MS, &t));
    assert_int_equal(t.thr[0], 5000000);
    c.minimise_fct = true;
    assert_true(awafs_adapt_reconfigure(a, &c, 160 * MS));
    assert_int_equal(awafs_adapt_window_count(a), 100);
    awafs_adapt_set_load(a, 0.5);
    assert_true(awafs_adapt_update(a, 200 * MS, &t));
    assert_int_equal(t.thr[0], 1000);
    assert_true(awafs_adapt_get_plan(a, &plan));
    assert_true(plan.queue_flows[0] > 0.89 && plan.queue_flows[0] < 0.91);
    c.minimise_fct = false;
    assert_true(awafs_adapt_reconfigure(a, &c, 210 * MS));
    assert_false(awafs_adapt_get_plan(a, &plan));
    assert_int_equal(awafs_adapt_window_count(a), 100);
    awafs_adapt_destroy(a);
}

static void
test_memory_is_fixed_and_documented(void **state)
{
    struct awafs_config c;
    size_t size;

    (void) state;
    awafs_config_default(&c, 8);
    size = awafs_adapt_memsize(&c);
    /* docs/design.md: 24 bytes per window entry plus 32 per ring slot, and
     * under 1 kB of state beside the ring's 192 bytes. */
    assert_true(size >= (size_t) 32768 * 24 + 4096 * 32);
    assert_true(size < (size_t) 32768 * 24 + 4096 * 32 + 192 + 1024);
    assert_true(size <= 1024 * 1024);
}

/* Attack 7: a configuration is measured before anything is allocated and
 * refused with a message when it would take more than a port may, or more
 * than is left of the total. */
static void
test_memory_checked_before_allocation(void **state)
{
    struct awafs_config cfg;
    struct awafs_port_mem m = { .core = &cfg, .n_queues = 4,
                                .buffer = 1024, .flow_table_size = 4096,
                                .srclimit_slots = 1024 };
    char msg[200];
    size_t bytes;

    (void) state;
    awafs_config_default(&cfg, 4);
    bytes = awafs_port_memsize(&m);
    assert_true(bytes == awafs_adapt_memsize(&cfg)
                         + awafs_sched_memsize(4, 1024)
                         + awafs_flowtab_memsize(4096)
                         + awafs_srclimit_memsize(1024));
    assert_true(awafs_memory_check(bytes, 0, AWAFS_MEM_PORT_MAX_DEFAULT,
                                   AWAFS_MEM_TOTAL_MAX_DEFAULT, msg,
                                   sizeof msg));
    assert_string_equal(msg, "");

    /* A completion ring of 2^24 slots: 400 MB, more than a port may. */
    cfg.ring_capacity = 1u << 24;
    bytes = awafs_port_memsize(&m);
    assert_true(bytes > (size_t) 400 * 1000 * 1000);
    assert_false(awafs_memory_check(bytes, 0, AWAFS_MEM_PORT_MAX_DEFAULT,
                                    AWAFS_MEM_TOTAL_MAX_DEFAULT, msg,
                                    sizeof msg));
    assert_non_null(strstr(msg, "more than the 134217728 a port may use"));
    /* Fits a port, but not beside what the others hold. */
    cfg.ring_capacity = 1u << 21;               /* 64 MiB. */
    bytes = awafs_port_memsize(&m);
    assert_true(awafs_memory_check(bytes, 0, AWAFS_MEM_PORT_MAX_DEFAULT,
                                   AWAFS_MEM_TOTAL_MAX_DEFAULT, msg,
                                   sizeof msg));
    assert_false(awafs_memory_check(bytes, (size_t) 1000 << 20,
                                    AWAFS_MEM_PORT_MAX_DEFAULT,
                                    AWAFS_MEM_TOTAL_MAX_DEFAULT, msg,
                                    sizeof msg));
    assert_non_null(strstr(msg, "other awafs ports hold 1048576000"));
    /* Sizes out of range are refused as such, never wrapped. */
    m.buffer = 0;
    assert_true(awafs_port_memsize(&m) == SIZE_MAX);
    assert_false(awafs_memory_check(SIZE_MAX, 0, SIZE_MAX - 1, SIZE_MAX,
                                    msg, sizeof msg));
    assert_string_equal(msg, "a size is out of range");
}

AWAFS_UNIT_MAIN(adapt)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_checked_before_allocation),
        cmocka_unit_test(test_percentile_small_sets),
        cmocka_unit_test(test_percentile_matches_sort),
        cmocka_unit_test(test_initial_thresholds),
        cmocka_unit_test(test_update_publishes_percentiles),
        cmocka_unit_test(test_prune_exact_boundary),
        cmocka_unit_test(test_collect_merges_rings_by_time),
        cmocka_unit_test(test_adapt_without_a_ring_of_its_own),
        cmocka_unit_test(test_min_samples_guard),
        cmocka_unit_test(test_static_mode_never_moves),
        cmocka_unit_test(test_full_window_evicts_oldest),
        cmocka_unit_test(test_reconfigure_keeps_window),
        cmocka_unit_test(test_window_log2_counts),
        cmocka_unit_test(test_config_check),
        cmocka_unit_test(test_config_share_window),
        cmocka_unit_test(test_sources_weighed_through_the_ring),
        cmocka_unit_test(test_minimise_fct_follows_workloads_and_holds),
        cmocka_unit_test(test_minimise_fct_weighs_the_slowdown),
        cmocka_unit_test(test_model_minimises_the_configured_objective),
        cmocka_unit_test(test_learned_thresholds_stay_within_bounds),
        cmocka_unit_test(test_minimise_fct_reconfigures_in_place),
        cmocka_unit_test(
            test_minimise_fct_leaves_a_threshold_below_the_elephants),
        cmocka_unit_test(test_memory_is_fixed_and_documented),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
