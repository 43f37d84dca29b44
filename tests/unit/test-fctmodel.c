/* Unit tests: thresholds that minimise a model of mean FCT
 * (lib/awafs-fctmodel.c). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <math.h>
#include <stdlib.h>

/* The multilevel M/G/1 model's mean FCT of thresholds 'thr', computed
 * flow by flow from its definition (not from the solver's prefix sums),
 * and its mean slowdown in '*slowdown' if nonnull. */
static double
direct_fct(const struct awafs_fct_point *p, size_t n, uint32_t k,
           double load, const uint64_t *thr, double *slowdown)
{
    double total = 0, bytes = 0, fct = 0, sd = 0, lambda;

    for (size_t i = 0; i < n; i++) {
        total += p[i].count;
        bytes += (double) p[i].count * p[i].size;
    }
    lambda = load / (bytes / total);
    for (size_t i = 0; i < n; i++) {
        double x = p[i].size, lo = 0, hi = INFINITY;
        double rho_lo = 0, rho_hi = 0, m2_hi = 0, t;
        uint32_t j = 0;

        while (j < k - 1 && x > thr[j]) {
            j++;
        }
        lo = j ? thr[j - 1] : 0;
        hi = j < k - 1 ? thr[j] : INFINITY;
        for (size_t m = 0; m < n; m++) {
            double s = p[m].size, c = p[m].count / total;

            rho_lo += lambda * c * (s < lo ? s : lo);
            rho_hi += lambda * c * (s < hi ? s : hi);
            m2_hi += c * (s < hi ? s * s : hi * hi);
        }
        t = (lambda * m2_hi / (2 * (1 - rho_hi)) + x) / (1 - rho_lo);
        fct += p[i].count / total * t;
        sd += p[i].count / total * t / x;
    }
    if (slowdown) {
        *slowdown = sd;
    }
    return fct;
}

static double
direct_mean_fct(const struct awafs_fct_point *p, size_t n, uint32_t k,
                double load, const uint64_t *thr)
{
    return direct_fct(p, n, k, load, thr, NULL);
}

static bool
next_split(size_t *b, uint32_t n_thr, size_t n)
{
    /* The next non-decreasing b[0..n_thr) over 0..n, or false. */
    for (uint32_t j = n_thr; j-- > 0;) {
        if (b[j] < n) {
            b[j]++;
            for (uint32_t m = j + 1; m < n_thr; m++) {
                b[m] = b[j];
            }
            return true;
        }
    }
    return false;
}

static void
random_points(struct awafs_fct_point *p, size_t n, unsigned int *seed)
{
    uint64_t size = 0;

    for (size_t i = 0; i < n; i++) {
        size += 1 + rand_r(seed) % 50000;
        p[i].size = size;
        p[i].count = 1 + rand_r(seed) % 100;
    }
}

/* Every split of up to 32 points into k <= 4 queues: the plan of 'model'
 * (AWAFS_FCT_MLFQ or its _SLOWDOWN) is the cheapest in what it minimises,
 * and its mean and slowdown are the model's.  Returns the plans, for
 * 'trials' random cases, in 'plans'. */
static void
check_solver_against_brute_force(enum awafs_fct_model model,
                                 struct awafs_fct_plan *plans, int trials)
{
    bool by_slowdown = model == AWAFS_FCT_MLFQ_SLOWDOWN;
    unsigned int seed = 1;

    for (int trial = 0; trial < trials; trial++) {
        struct awafs_fct_point p[32];
        size_t n = 1 + rand_r(&seed) % 32;
        uint32_t k = 2 + trial % 3;
        double load = (rand_r(&seed) % 95) / 100.0;
        double brute = INFINITY, slowdown, mean, got;
        struct awafs_fct_plan *plan = &plans[trial];
        size_t b[AWAFS_MAX_THRESHOLDS] = { 0 };

        random_points(p, n, &seed);
        assert_true(awafs_fct_solve(model, p, n, k, load, plan));
        do {
            uint64_t thr[AWAFS_MAX_THRESHOLDS];

            for (uint32_t j = 0; j < k - 1; j++) {
                thr[j] = b[j] ? p[b[j] - 1].size : 0;
            }
            mean = direct_fct(p, n, k, load, thr, &slowdown);
            brute = fmin(brute, by_slowdown ? slowdown : mean);
        } while (next_split(b, k - 1, n));
        got = by_slowdown ? plan->slowdown : plan->mean;
        if (fabs(got - brute) > 1e-9 * brute) {
            fail_msg("trial %d: solver %.12g, brute force %.12g", trial,
                     got, brute);
        }
        mean = direct_fct(p, n, k, load, plan->thr, &slowdown);
        if (fabs(mean - plan->mean) > 1e-9 * plan->mean) {
            fail_msg("trial %d: the plan's mean is not the model's", trial);
        }
        if (fabs(slowdown - plan->slowdown) > 1e-9 * slowdown
            || plan->slowdown < 1) {
            fail_msg("trial %d: slowdown %.12g, the model's %.12g", trial,
                     plan->slowdown, slowdown);
        }
        for (uint32_t j = 1; j < k - 1; j++) {
            assert_true(plan->thr[j] >= plan->thr[j - 1]);
        }
    }
}

static void
test_solver_matches_brute_force(void **state)
{
    struct awafs_fct_plan plans[60];

    (void) state;
    check_solver_against_brute_force(AWAFS_FCT_MLFQ, plans, 60);
}

/* Solved for the mean slowdown: the least slowdown of every split, and on
 * the same cases never a lower mean FCT or a higher slowdown than the plan
 * solved for the mean. */
static void
test_slowdown_solver_matches_brute_force(void **state)
{
    struct awafs_fct_plan by_mean[60], by_slowdown[60];

    (void) state;
    check_solver_against_brute_force(AWAFS_FCT_MLFQ, by_mean, 60);
    check_solver_against_brute_force(AWAFS_FCT_MLFQ_SLOWDOWN, by_slowdown,
                                     60);
    for (int i = 0; i < 60; i++) {
        assert_true(by_slowdown[i].mean >= by_mean[i].mean * (1 - 1e-9));
        assert_true(by_slowdown[i].slowdown
                    <= by_mean[i].slowdown * (1 + 1e-9));
    }
}

/* The objective of PIAS and Karuna's appendix sees only flow fractions:
 * on 1000 equally likely sizes its optimum is the one
 * sim/karuna_thresholds.py finds with SLSQP (shares 0,0,1), within the
 * 1/128 that grouping into AWAFS_FCT_MAX_POINTS candidates allows:
 *   --load 0.8 --queues 4: cumulative fractions 0.4141, 0.691, 0.8762,
 *                          objective 0.668740;
 *   --load 0.5 --queues 8: 0.166, 0.3182, 0.4578, 0.5858, 0.7032, 0.8108,
 *                          0.9095, objective 0.336032. */
static void
test_karuna_objective_agrees_with_slsqp(void **state)
{
    static const struct {
        double load;
        uint32_t k;
        double cum[AWAFS_MAX_THRESHOLDS];
        double objective;
    } cases[] = {
        { 0.8, 4, { 0.4141, 0.691, 0.8762 }, 0.668740 },
        { 0.5, 8, { 0.166, 0.3182, 0.4578, 0.5858, 0.7032, 0.8108, 0.9095 },
          0.336032 },
    };
    struct awafs_fct_point p[1000];

    (void) state;
    for (size_t i = 0; i < 1000; i++) {
        p[i].size = 1000 * (i + 1);
        p[i].count = 1;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct awafs_fct_plan plan;

        assert_true(awafs_fct_solve(AWAFS_FCT_KARUNA, p, 1000, cases[c].k,
                                    cases[c].load, &plan));
        for (uint32_t j = 0; j < cases[c].k - 1; j++) {
            double cum = plan.thr[j] / 1000 / 1000.0;

            if (fabs(cum - cases[c].cum[j]) > 1.0 / AWAFS_FCT_MAX_POINTS) {
                fail_msg("case %d: threshold %u at %.4f, SLSQP %.4f",
                         (int) c, j, cum, cases[c].cum[j]);
            }
        }
        assert_true(plan.mean >= cases[c].objective * (1 - 1e-4));
        assert_true(plan.mean <= cases[c].objective * 1.01);
    }
}

/* Degenerate windows give valid thresholds and finite predictions, never a
 * NaN or a crash. */
static void
test_degenerate_input(void **state)
{
    static const enum awafs_fct_model models[] = {
        AWAFS_FCT_MLFQ, AWAFS_FCT_MLFQ_SLOWDOWN,
    };
    struct awafs_fct_point one = { 1500, 40 }, none = { 1500, 0 };
    struct awafs_fct_point empty_flows[] = { { 0, 5 }, { 1500, 40 } };
    struct awafs_fct_point flat[64];
    struct awafs_fct_plan plan;

    (void) state;
    for (int i = 0; i < 64; i++) {
        flat[i].size = 100 << (i / 4);
        flat[i].count = 7;
    }
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        enum awafs_fct_model model = models[m];

        /* Nothing to weigh. */
        assert_false(awafs_fct_solve(model, NULL, 0, 4, 0.5, &plan));
        assert_false(awafs_fct_solve(model, &none, 1, 4, 0.5, &plan));
        assert_false(awafs_fct_solve(model, &one, 1, 1, 0.5, &plan));
        assert_false(awafs_fct_solve(model, &one, 1, 9, 0.5, &plan));
        /* One size: every threshold there, the mean its M/G/1 FCFS time. */
        assert_true(awafs_fct_solve(model, &one, 1, 4, 0.5, &plan));
        for (int j = 0; j < 3; j++) {
            assert_int_equal(plan.thr[j], 1500);
        }
        assert_true(fabs(plan.mean - (0.5 * 1500 / 2 / 0.5 + 1500)) < 1e-6);
        /* Flows of no bytes (a bare FIN's completion): a slowdown as if
         * of one byte, finite. */
        assert_true(awafs_fct_solve(model, empty_flows, 2, 2, 0.5, &plan));
        assert_true(isfinite(plan.slowdown) && plan.slowdown >= 1);
        /* Load at or above 1, or below 0: kept in [0, 0.99]. */
        for (double load = -1; load <= 3; load += 0.5) {
            assert_true(awafs_fct_solve(model, flat, 64, 8, load, &plan));
            assert_true(isfinite(plan.mean) && plan.mean > 0);
            assert_true(isfinite(plan.slowdown) && plan.slowdown >= 1);
            for (int j = 0; j < 8; j++) {
                assert_true(isfinite(plan.queue_fct[j]));
            }
            for (int j = 1; j < 7; j++) {
                assert_true(plan.thr[j] >= plan.thr[j - 1]);
            }
        }
        /* No load, no waiting: every flow takes its own size. */
        assert_true(awafs_fct_solve(model, flat, 64, 4, 0, &plan));
        assert_true(plan.mean > 0);
    }
}

/* The model is distribution-aware: a workload of many small flows and a
 * few elephants puts its first threshold above the mice at any load, and
 * evaluating the solver's thresholds gives back its own prediction. */
static void
test_thresholds_follow_the_distribution(void **state)
{
    struct awafs_fct_point mice_elephants[] = {
        { 1000, 900 }, { 2000, 80 }, { 10000000, 20 },
    };
    struct awafs_fct_plan plan, again;

    (void) state;
    for (double load = 0.1; load < 1; load += 0.2) {
        assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, mice_elephants, 3, 2,
                                    load, &plan));
        assert_true(plan.thr[0] >= 2000 && plan.thr[0] < 10000000);
        assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, mice_elephants, 3, 2,
                                       load, plan.thr, &again));
        assert_true(fabs(again.mean - plan.mean) < 1e-9 * plan.mean);
        assert_true(fabs(plan.queue_flows[0] - 0.98) < 1e-9);
    }
}

/* A threshold between the points counts every byte below it: 1 MB, just
 * below elephants of 1,003,520 bytes, serves almost all their bytes at the
 * top, so the model predicts about FIFO for it, far worse than the mice's
 * own threshold (thresholds in force are rarely at a bucket's middle). */
static void
test_thresholds_between_points(void **state)
{
    struct awafs_fct_point micro[] = { { 10000, 80 }, { 1003520, 20 } };
    uint64_t just_below = 1000000, fifo = 1003520;
    struct awafs_fct_plan best, below, all;

    (void) state;
    assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, micro, 2, 2, 0.8, &best));
    assert_int_equal(best.thr[0], 10000);
    assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, micro, 2, 2, 0.8,
                                   &just_below, &below));
    assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, micro, 2, 2, 0.8, &fifo,
                                   &all));
    assert_true(fabs(below.mean - direct_mean_fct(micro, 2, 2, 0.8,
                                                  &just_below))
                < 1e-9 * below.mean);
    assert_true(below.mean > 0.95 * all.mean);
    assert_true(below.mean > 2 * best.mean);
}

/* More points than candidates: grouped, the plan still valid and close to
 * the exact optimum of the ungrouped points (checked on a grid). */
static void
test_many_points_are_grouped(void **state)
{
    static struct awafs_fct_point p[2000];
    struct awafs_fct_plan plan;
    unsigned int seed = 7;
    double best = INFINITY;

    (void) state;
    random_points(p, 2000, &seed);
    assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, p, 2000, 2, 0.7, &plan));
    for (size_t i = 0; i < 2000; i++) {
        uint64_t thr = p[i].size;

        best = fmin(best, direct_mean_fct(p, 2000, 2, 0.7, &thr));
    }
    assert_true(plan.mean <= best * 1.02);
    assert_true(fabs(direct_mean_fct(p, 2000, 2, 0.7, plan.thr) - plan.mean)
                < 1e-9 * plan.mean);
}

/* The load a port shows the model: a port at 80 % of 100 Mbit/s from its
 * first reading, every 200 ms, reads 80 % from the first round on (an
 * average from 0 over a 20 s window read only 0.8 % by then); after a
 * window at 80 %, a round of silence moves it by a round's share of the
 * window; a reading at the same time changes nothing, nor one whose
 * counters went back.  Time 0 is a time like any other (ns-3 starts
 * there). */
static void
test_load_average_starts_at_the_first_reading(void **state)
{
    const uint64_t rate = 100000000, per_round = rate / 8 / 5 * 8 / 10;
    const int64_t window = 20000000, round = 200000;
    struct awafs_load l;
    uint64_t bytes = 0;
    int64_t t = 0;

    (void) state;
    memset(&l, 0, sizeof l);
    assert_true(awafs_load_update(&l, t, bytes, rate, window) == 0);
    for (int i = 1; i <= 100; i++) {
        t += round;
        bytes += per_round;
        assert_true(fabs(awafs_load_update(&l, t, bytes, rate, window) - 0.8)
                    < 1e-9);
    }
    assert_true(fabs(awafs_load_update(&l, t, bytes, rate, window) - 0.8)
                < 1e-9);
    t += round;
    assert_true(fabs(awafs_load_update(&l, t, bytes, rate, window)
                     - 0.8 * (1 - (double) round / window)) < 1e-9);
    /* Counters that went back (new instances) measure nothing. */
    t += round;
    assert_true(fabs(awafs_load_update(&l, t, 0, rate, window)
                     - 0.8 * (1 - (double) round / window)) < 1e-9);
    t += round;
    assert_true(fabs(awafs_load_update(&l, t, per_round, rate, window)
                     - (0.8 * (1 - (double) round / window)
                        * (1 - (double) round / window)
                        + 0.8 * round / window)) < 1e-9);
}

/* A queue's wire bytes: sent and dropped frames with their overhead, not
 * those still queued or flushed unsent. */
static void
test_queue_wire_bytes(void **state)
{
    struct awafs_queue_stats qs = {
        .tx_packets = 3, .tx_bytes = 3000,
        .drop_packets = 1, .drop_bytes = 64,
        .flush_packets = 5, .flush_bytes = 5000,
        .backlog_packets = 2, .backlog_bytes = 2000,
    };

    (void) state;
    assert_int_equal(awafs_queue_wire_bytes(&qs),
                     3000 + 64 + 4 * AWAFS_WIRE_OVERHEAD);
}

AWAFS_UNIT_MAIN(fctmodel)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_matches_brute_force),
        cmocka_unit_test(test_slowdown_solver_matches_brute_force),
        cmocka_unit_test(test_karuna_objective_agrees_with_slsqp),
        cmocka_unit_test(test_degenerate_input),
        cmocka_unit_test(test_thresholds_follow_the_distribution),
        cmocka_unit_test(test_thresholds_between_points),
        cmocka_unit_test(test_many_points_are_grouped),
        cmocka_unit_test(test_load_average_starts_at_the_first_reading),
        cmocka_unit_test(test_queue_wire_bytes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
