/* Unit tests: thresholds that minimise a model of mean FCT
 * (lib/awafs-fctmodel.c). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <math.h>
#include <stdlib.h>

/* What the multilevel M/G/1 model predicts of thresholds 'thr', computed
 * flow by flow from its definition (not from the solver's prefix sums). */
struct direct {
    double mean;            /* Of every flow. */
    double slowdown;
    double short_mean;      /* Of the flows up to the short size (0: none). */
    double weighted;        /* The same, the others weighing
                             * AWAFS_FCT_LONG_WEIGHT. */
};

static struct direct
direct_model(const struct awafs_fct_point *p, size_t n, uint32_t k,
             double load, const uint64_t *thr, uint64_t short_size)
{
    double total = 0, bytes = 0, lambda;
    double short_flows = 0, weighted_flows = 0;
    struct direct d = { 0, 0, 0, 0 };

    for (size_t i = 0; i < n; i++) {
        total += p[i].count;
        bytes += (double) p[i].count * p[i].size;
    }
    lambda = load / (bytes / total);
    for (size_t i = 0; i < n; i++) {
        double x = p[i].size, lo = 0, hi = INFINITY;
        double rho_lo = 0, rho_hi = 0, m2_hi = 0, t, w;
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
        d.mean += p[i].count / total * t;
        d.slowdown += p[i].count / total * t / (x > 1 ? x : 1);
        w = p[i].size <= short_size ? 1 : AWAFS_FCT_LONG_WEIGHT;
        d.weighted += w * p[i].count * t;
        weighted_flows += w * p[i].count;
        if (p[i].size <= short_size) {
            d.short_mean += p[i].count * t;
            short_flows += p[i].count;
        }
    }
    d.weighted /= weighted_flows;
    d.short_mean = short_flows ? d.short_mean / short_flows : 0;
    return d;
}

static double
direct_mean_fct(const struct awafs_fct_point *p, size_t n, uint32_t k,
                double load, const uint64_t *thr)
{
    return direct_model(p, n, k, load, thr, 0).mean;
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

/* What 'model' minimises of 'd'. */
static double
direct_goal(enum awafs_fct_model model, const struct direct *d)
{
    return (model == AWAFS_FCT_MLFQ_SLOWDOWN ? d->slowdown
            : model == AWAFS_FCT_MLFQ_SHORT ? d->weighted
            : d->mean);
}

/* Whether 'a' and 'b' agree to 1e-9 of the larger. */
static bool
same(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Every split of up to 32 points into k <= 4 queues: the plan of 'model'
 * (one of the MLFQ models) is the cheapest in what it minimises, and its
 * mean, slowdown and (AWAFS_FCT_MLFQ_SHORT) short flows' mean are the
 * model's.  The short size is one of the points' sizes, or below them all.
 * Returns the plans, for 'trials' random cases, in 'plans'. */
static void
check_solver_against_brute_force(enum awafs_fct_model model,
                                 struct awafs_fct_plan *plans, int trials)
{
    unsigned int seed = 1;

    for (int trial = 0; trial < trials; trial++) {
        struct awafs_fct_point p[32];
        size_t n = 1 + rand_r(&seed) % 32;
        uint32_t k = 2 + trial % 3;
        double load = (rand_r(&seed) % 95) / 100.0;
        size_t n_short = rand_r(&seed) % (n + 1);
        struct awafs_fct_plan *plan = &plans[trial];
        size_t b[AWAFS_MAX_THRESHOLDS] = { 0 };
        double brute = INFINITY;
        uint64_t short_size;
        struct direct d;

        random_points(p, n, &seed);
        short_size = n_short ? p[n_short - 1].size : 0;
        assert_true(awafs_fct_solve(model, short_size, p, n, k, load, plan));
        do {
            uint64_t thr[AWAFS_MAX_THRESHOLDS];

            for (uint32_t j = 0; j < k - 1; j++) {
                thr[j] = b[j] ? p[b[j] - 1].size : 0;
            }
            d = direct_model(p, n, k, load, thr, short_size);
            brute = fmin(brute, direct_goal(model, &d));
        } while (next_split(b, k - 1, n));
        d = direct_model(p, n, k, load, plan->thr, short_size);
        if (!same(direct_goal(model, &d), brute)) {
            fail_msg("trial %d: solver %.12g, brute force %.12g", trial,
                     direct_goal(model, &d), brute);
        }
        if (!same(d.mean, plan->mean)) {
            fail_msg("trial %d: the plan's mean is not the model's", trial);
        }
        if (!same(d.slowdown, plan->slowdown) || plan->slowdown < 1 - 1e-9) {
            fail_msg("trial %d: slowdown %.12g, the model's %.12g", trial,
                     plan->slowdown, d.slowdown);
        }
        if (!same(direct_goal(model, &d), plan->goal)) {
            fail_msg("trial %d: goal %.12g, the model's %.12g", trial,
                     plan->goal, direct_goal(model, &d));
        }
        if (model == AWAFS_FCT_MLFQ_SHORT
            && !same(d.short_mean, plan->short_mean)) {
            fail_msg("trial %d: short mean %.12g, the model's %.12g", trial,
                     plan->short_mean, d.short_mean);
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

/* Solved for the short flows: the least weighted mean of every split,
 * whatever the short size (none short, some, or all), and on the same
 * cases never a lower mean FCT than the plan solved for the mean. */
static void
test_short_solver_matches_brute_force(void **state)
{
    struct awafs_fct_plan by_mean[60], by_short[60];

    (void) state;
    check_solver_against_brute_force(AWAFS_FCT_MLFQ, by_mean, 60);
    check_solver_against_brute_force(AWAFS_FCT_MLFQ_SHORT, by_short, 60);
    for (int i = 0; i < 60; i++) {
        assert_true(by_short[i].mean >= by_mean[i].mean * (1 - 1e-9));
    }
}

/* Facebook's cache follower workload (the evaluation's "cache"), each
 * point of its CDF with its probability in flows out of 10,000: the mean
 * FCT of every flow barely tells its optimum's thresholds among the short
 * flows from others, and solved for the short flows the model gives them
 * a mean lower by a tenth for the same mean of every flow within 0.1 %. */
static void
test_short_solver_serves_the_short_flows(void **state)
{
    static const struct awafs_fct_point cache[] = {
        { 68, 204 }, { 144, 205 }, { 266, 130 }, { 340, 1264 }, { 490, 967 },
        { 577, 278 }, { 639, 130 }, { 707, 354 }, { 900, 111 }, { 1042, 130 },
        { 1110, 223 }, { 1303, 56 }, { 1414, 74 }, { 1440, 112 },
        { 2000, 130 }, { 2450, 93 }, { 3000, 74 }, { 3466, 37 }, { 4000, 38 },
        { 5000, 55 }, { 6000, 38 }, { 8000, 55 }, { 10000, 19 }, { 13855, 56 },
        { 16643, 37 }, { 18057, 18 }, { 25531, 56 }, { 28270, 56 },
        { 36101, 37 }, { 44260, 54 }, { 62583, 95 }, { 72178, 37 },
        { 81565, 37 }, { 92173, 37 }, { 102060, 38 }, { 110726, 55 },
        { 127700, 75 }, { 141398, 93 }, { 156563, 93 }, { 169860, 92 },
        { 184283, 93 }, { 199933, 87 }, { 212537, 99 }, { 225934, 93 },
        { 245121, 93 }, { 260573, 93 }, { 276998, 93 }, { 326042, 186 },
        { 391670, 186 }, { 531696, 186 }, { 588724, 186 }, { 1385457, 62 },
        { 1503111, 30 }, { 1597864, 186 }, { 1681372, 186 }, { 1787361, 185 },
        { 1842836, 187 }, { 1959004, 186 }, { 2125366, 186 }, { 2213771, 186 },
        { 2329467, 185 }, { 2553169, 559 }, { 2827011, 464 }, { 3006219, 148 },
        { 3260426, 56 }, { 3837698, 56 },
    };
    size_t n = sizeof cache / sizeof cache[0];
    struct awafs_fct_plan by_mean, by_short, evaluated;

    (void) state;
    for (double load = 0.5; load < 0.9; load += 0.3) {
        assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, 0, cache, n, 8, load,
                                    &by_mean));
        assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ_SHORT,
                                    AWAFS_FCT_SHORT_SIZE, cache, n, 8, load,
                                    &by_short));
        assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ_SHORT,
                                       AWAFS_FCT_SHORT_SIZE, cache, n, 8,
                                       load, by_mean.thr, &evaluated));
        assert_true(by_short.short_mean < 0.92 * evaluated.short_mean);
        assert_true(by_short.mean <= by_mean.mean * 1.001);
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

        assert_true(awafs_fct_solve(AWAFS_FCT_KARUNA, 0, p, 1000, cases[c].k,
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

/* awafs_fct_solve() with the default short size, which only
 * AWAFS_FCT_MLFQ_SHORT reads. */
static bool
solve(enum awafs_fct_model model, const struct awafs_fct_point *p, size_t n,
      uint32_t k, double load, struct awafs_fct_plan *plan)
{
    return awafs_fct_solve(model, AWAFS_FCT_SHORT_SIZE, p, n, k, load, plan);
}

/* Degenerate windows give valid thresholds and finite predictions, never a
 * NaN or a crash. */
static void
test_degenerate_input(void **state)
{
    static const enum awafs_fct_model models[] = {
        AWAFS_FCT_MLFQ, AWAFS_FCT_MLFQ_SLOWDOWN, AWAFS_FCT_MLFQ_SHORT,
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
        assert_false(solve(model, NULL, 0, 4, 0.5, &plan));
        assert_false(solve(model, &none, 1, 4, 0.5, &plan));
        assert_false(solve(model, &one, 1, 1, 0.5, &plan));
        assert_false(solve(model, &one, 1, 9, 0.5, &plan));
        /* One size: every threshold there, the mean its M/G/1 FCFS time. */
        assert_true(solve(model, &one, 1, 4, 0.5, &plan));
        for (int j = 0; j < 3; j++) {
            assert_int_equal(plan.thr[j], 1500);
        }
        assert_true(fabs(plan.mean - (0.5 * 1500 / 2 / 0.5 + 1500)) < 1e-6);
        /* Flows of no bytes (a bare FIN's completion): a slowdown as if
         * of one byte, finite. */
        assert_true(solve(model, empty_flows, 2, 2, 0.5, &plan));
        assert_true(isfinite(plan.slowdown) && plan.slowdown >= 1);
        /* Load at or above 1, or below 0: kept in [0, 0.99]. */
        for (double load = -1; load <= 3; load += 0.5) {
            assert_true(solve(model, flat, 64, 8, load, &plan));
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
        assert_true(solve(model, flat, 64, 4, 0, &plan));
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
        assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, 0, mice_elephants, 3, 2,
                                    load, &plan));
        assert_true(plan.thr[0] >= 2000 && plan.thr[0] < 10000000);
        assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, 0, mice_elephants, 3, 2,
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
    assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, 0, micro, 2, 2, 0.8, &best));
    assert_int_equal(best.thr[0], 10000);
    assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, 0, micro, 2, 2, 0.8,
                                   &just_below, &below));
    assert_true(awafs_fct_evaluate(AWAFS_FCT_MLFQ, 0, micro, 2, 2, 0.8, &fifo,
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
    assert_true(awafs_fct_solve(AWAFS_FCT_MLFQ, 0, p, 2000, 2, 0.7, &plan));
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

/* Each model by its configured name, the names AWAFS_FCT_MODEL_NAMES
 * lists; any other name, a prefix of one or another case refused. */
static void
test_model_names(void **state)
{
    static const struct {
        const char *name;
        enum awafs_fct_model model;
    } names[] = {
        { "fct", AWAFS_FCT_MLFQ },
        { "slowdown", AWAFS_FCT_MLFQ_SLOWDOWN },
        { "short", AWAFS_FCT_MLFQ_SHORT },
        { "pias", AWAFS_FCT_KARUNA },
    };
    static const char *const bad[] = { "", "fc", "fct ", "FCT", "karuna" };
    enum awafs_fct_model model;

    (void) state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        model = (names[i].model == AWAFS_FCT_MLFQ ? AWAFS_FCT_KARUNA
                 : AWAFS_FCT_MLFQ);
        assert_true(awafs_fct_model_from_string(names[i].name, &model));
        assert_int_equal(model, names[i].model);
        assert_non_null(strstr(AWAFS_FCT_MODEL_NAMES, names[i].name));
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        model = AWAFS_FCT_MLFQ_SHORT;
        assert_false(awafs_fct_model_from_string(bad[i], &model));
        assert_int_equal(model, AWAFS_FCT_MLFQ_SHORT);
    }
}

AWAFS_UNIT_MAIN(fctmodel)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_matches_brute_force),
        cmocka_unit_test(test_slowdown_solver_matches_brute_force),
        cmocka_unit_test(test_short_solver_matches_brute_force),
        cmocka_unit_test(test_short_solver_serves_the_short_flows),
        cmocka_unit_test(test_karuna_objective_agrees_with_slsqp),
        cmocka_unit_test(test_degenerate_input),
        cmocka_unit_test(test_thresholds_follow_the_distribution),
        cmocka_unit_test(test_thresholds_between_points),
        cmocka_unit_test(test_many_points_are_grouped),
        cmocka_unit_test(test_load_average_starts_at_the_first_reading),
        cmocka_unit_test(test_queue_wire_bytes),
        cmocka_unit_test(test_model_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
