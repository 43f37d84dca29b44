/*
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/* Thresholds that minimise a model of the mean flow completion time, for
 * the size distribution in the window and the port's load (percentiles=auto).
 *
 * The model (AWAFS_FCT_MLFQ) is the port as an M/G/1 queue served by
 * multilevel feedback: every flow's bytes below threshold a_1 are served
 * first, then those in [a_1, a_2), and so on, first come first served at
 * each level.  A flow of size x in (a_(j-1), a_j] then takes on average
 *
 *     T(x) = (W(a_j) + x) / (1 - rho(a_(j-1)))
 *
 * byte times, where rho(a) = lambda E[min(S, a)] is the load of everything
 * below a and W(a) = lambda E[min(S, a)^2] / (2 (1 - rho(a))) the work below
 * a a flow finds on arrival (Pollaczek-Khinchine for the service truncated
 * at a; the truncated work is served ahead of everything above a, so it
 * queues as an M/G/1 of its own).  A flow waits for that work and its own,
 * stretched by the work below a_(j-1) that arrives meanwhile.  Unlike the
 * objective of PIAS and Karuna's appendix (AWAFS_FCT_KARUNA here, kept to
 * check against sim/karuna_thresholds.py), which sees only the fraction of
 * flows that end in each queue and so gives the same percentiles for every
 * workload, it weighs the bytes each level carries: the size distribution
 * decides the thresholds, not only the load.
 *
 * AWAFS_FCT_MLFQ_SLOWDOWN solves the same model for the mean slowdown (each
 * flow's FCT over its size) instead: a flow then weighs the inverse of its
 * size, and the short flows' waits decide the thresholds, where in the mean
 * FCT the few largest flows' own bytes can outweigh them.
 * AWAFS_FCT_MLFQ_SHORT solves it for the mean FCT of the flows up to a size
 * (the measure of the literature's short flows), each larger flow weighing
 * AWAFS_FCT_LONG_WEIGHT: the mean FCT of every flow is nearly flat in the
 * thresholds that short flows pass, so its optimum places them where its
 * ties fall, and the slowdown favours the smallest flows over the
 * 10-100 kB ones that take most of the short flows' time.
 *
 * Every objective is a sum over consecutive threshold pairs, so the optimum
 * over thresholds placed at the distribution's points is a dynamic program:
 * best[j][l] is the least cost of j levels that finish the first l points,
 * best[j][l] = min over i <= l of best[j - 1][i] + cost(i, l), in
 * O(k n^2) for n points.  The solution is exact for the points it is given;
 * more than AWAFS_FCT_MAX_POINTS are first merged into groups of about equal
 * counts, whose ends are the candidate thresholds (their sums stay exact).
 * With the default histogram window a point is a bucket (0.78 % wide). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"

#include <string.h>

/* The model's load is kept below 1, where it diverges. */
#define MAX_LOAD 0.99

/* A boundary between levels: the groups below it, and rho(a) and W(a) at its
 * threshold a. */
struct fct_boundary {
    size_t l;
    double rho;
    double wait;
};

/* Prefix sums over the (grouped) points: index l covers points [0, l). */
struct fct_sums {
    size_t n;
    double total;                           /* Flows. */
    double mean;                            /* E[S]. */
    double lambda;                          /* Flows per byte time. */
    double load;
    uint64_t size[AWAFS_FCT_MAX_POINTS];    /* Largest size of each group. */
    double count[AWAFS_FCT_MAX_POINTS + 1];
    double bytes[AWAFS_FCT_MAX_POINTS + 1];
    double squares[AWAFS_FCT_MAX_POINTS + 1];
    double inverses[AWAFS_FCT_MAX_POINTS + 1];  /* Of the sizes, for the
                                                 * slowdown. */
    /* AWAFS_FCT_MLFQ_SHORT: the flows and bytes weighted as its mean
     * weighs them, and those of the short flows alone. */
    double weighted_total;
    double weighted_count[AWAFS_FCT_MAX_POINTS + 1];
    double weighted_bytes[AWAFS_FCT_MAX_POINTS + 1];
    double short_total;
    double short_count[AWAFS_FCT_MAX_POINTS + 1];
    double short_bytes[AWAFS_FCT_MAX_POINTS + 1];
    /* The boundary after each group, at the group's largest size. */
    struct fct_boundary at[AWAFS_FCT_MAX_POINTS + 1];
};


/* The threshold at boundary 'l': the largest size of the first l groups. */
static double
fct_boundary_size(const struct fct_sums *s, size_t l)
{
    return l ? s->size[l - 1] : 0;
}

/* The boundary at threshold 'a' with the first 'l' groups below it, from
 * E[min(S, a)] and E[min(S, a)^2] (a group with sizes on both sides of 'a'
 * counts as above it). */
static struct fct_boundary
fct_boundary_at(const struct fct_sums *s, size_t l, double a)
{
    double above = s->total - s->count[l];
    double m1 = (s->bytes[l] + a * above) / s->total;
    double m2 = (s->squares[l] + a * a * above) / s->total;
    struct fct_boundary b = { .l = l, .rho = s->lambda * m1 };

    b.wait = s->lambda * m2 / (2 * (1 - b.rho));
    return b;
}

/* Groups 'points' (ascending sizes) into at most AWAFS_FCT_MAX_POINTS
 * groups of about equal counts and sums them up in 's', flows up to
 * 'short_size' bytes as short.  False if there is nothing to weigh. */
static bool
fct_sums_init(struct fct_sums *s, const struct awafs_fct_point *points,
              size_t n, uint64_t short_size, double load)
{
    double total = 0, seen = 0, per_group;
    size_t g = 0;

    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        total += points[i].count;
    }
    if (!(total > 0)) {
        return false;
    }
    /* Each point a group of its own if they fit, else groups of about
     * total / AWAFS_FCT_MAX_POINTS flows each. */
    per_group = total / AWAFS_FCT_MAX_POINTS;
    for (size_t i = 0; i < n; i++) {
        double c = points[i].count, x = points[i].size;
        bool is_short = points[i].size <= short_size;
        double w = is_short ? 1 : AWAFS_FCT_LONG_WEIGHT;

        if (!points[i].count) {
            continue;
        }
        seen += c;
        s->count[g + 1] += c;
        s->bytes[g + 1] += c * x;
        s->squares[g + 1] += c * x * x;
        s->inverses[g + 1] += c / (x > 1 ? x : 1);
        s->weighted_count[g + 1] += w * c;
        s->weighted_bytes[g + 1] += w * c * x;
        s->short_count[g + 1] += is_short ? c : 0;
        s->short_bytes[g + 1] += is_short ? c * x : 0;
        s->size[g] = points[i].size;
        if ((n <= AWAFS_FCT_MAX_POINTS || seen >= (g + 1) * per_group)
            && g + 1 < AWAFS_FCT_MAX_POINTS) {
            g++;
        }
    }
    if (s->count[g + 1] > 0) {
        g++;
    }
    s->n = g;
    for (size_t l = 1; l <= s->n; l++) {
        s->count[l] += s->count[l - 1];
        s->bytes[l] += s->bytes[l - 1];
        s->squares[l] += s->squares[l - 1];
        s->inverses[l] += s->inverses[l - 1];
        s->weighted_count[l] += s->weighted_count[l - 1];
        s->weighted_bytes[l] += s->weighted_bytes[l - 1];
        s->short_count[l] += s->short_count[l - 1];
        s->short_bytes[l] += s->short_bytes[l - 1];
    }
    s->total = s->count[s->n];
    s->weighted_total = s->weighted_count[s->n];
    s->short_total = s->short_count[s->n];
    s->mean = s->bytes[s->n] / s->total;
    s->load = load > 0 ? (load < MAX_LOAD ? load : MAX_LOAD) : 0;
    s->lambda = s->load / s->mean;
    for (size_t l = 0; l <= s->n; l++) {
        s->at[l] = fct_boundary_at(s, l, fct_boundary_size(s, l));
    }
    return true;
}

/* The share of a mean over 'total' flows, of which 'count[l]' and
 * 'bytes[l]' (prefix sums) are the flows and their bytes below boundary l,
 * that the flows ending at the level between boundaries 'lo' and 'hi' take
 * in AWAFS_FCT_MLFQ: each of size x takes (W(hi) + x) / (1 - rho(lo)). */
static double
fct_partial_mean(const double *count, const double *bytes, double total,
                 const struct fct_boundary *lo, const struct fct_boundary *hi)
{
    double flows = total > 0 ? (count[hi->l] - count[lo->l]) / total : 0;

    if (flows <= 0) {
        return 0;
    }
    return (hi->wait * flows + (bytes[hi->l] - bytes[lo->l]) / total)
           / (1 - lo->rho);
}

/* The share of the mean FCT of the flows that end at the level between
 * boundaries 'lo' and 'hi'. */
static double
fct_cost(enum awafs_fct_model model, const struct fct_sums *s,
         const struct fct_boundary *lo, const struct fct_boundary *hi)
{
    if (model == AWAFS_FCT_KARUNA) {
        double flows = (s->count[hi->l] - s->count[lo->l]) / s->total;
        double above = s->count[lo->l] / s->total;

        return (flows > 0
                ? flows * s->load / (1 - s->load * above) * (1 - above)
                : 0);
    }
    return fct_partial_mean(s->count, s->bytes, s->total, lo, hi);
}

/* The share of the mean slowdown (FCT over size) of the flows that end at
 * the level between boundaries 'lo' and 'hi', in AWAFS_FCT_MLFQ: each of
 * them, of size x, takes (W + x) / (1 - rho) there (fct_cost()). */
static double
fct_slowdown(const struct fct_sums *s, const struct fct_boundary *lo,
             const struct fct_boundary *hi)
{
    double flows = s->count[hi->l] - s->count[lo->l];
    double inverses = s->inverses[hi->l] - s->inverses[lo->l];

    return (hi->wait * inverses + flows) / (1 - lo->rho) / s->total;
}

/* What awafs_fct_solve() minimises for 'model' at the level between
 * boundaries 'lo' and 'hi'. */
static double
fct_objective(enum awafs_fct_model model, const struct fct_sums *s,
              const struct fct_boundary *lo, const struct fct_boundary *hi)
{
    switch (model) {
    case AWAFS_FCT_MLFQ_SLOWDOWN:
        return fct_slowdown(s, lo, hi);
    case AWAFS_FCT_MLFQ_SHORT:
        return fct_partial_mean(s->weighted_count, s->weighted_bytes,
                                s->weighted_total, lo, hi);
    case AWAFS_FCT_MLFQ:
    case AWAFS_FCT_KARUNA:
    default:
        return fct_cost(model, s, lo, hi);
    }
}

/* Fills what 'plan' says of each queue from its boundaries 'b' (the first
 * at 0 bytes, the last above every size). */
static void
fct_describe(enum awafs_fct_model model, const struct fct_sums *s,
             const struct fct_boundary *b, struct awafs_fct_plan *plan)
{
    plan->mean = 0;
    plan->slowdown = 0;
    plan->short_mean = 0;
    plan->goal = 0;
    for (uint32_t j = 0; j < plan->n_queues; j++) {
        double cost = fct_cost(model, s, &b[j], &b[j + 1]);
        double flows = (s->count[b[j + 1].l] - s->count[b[j].l]) / s->total;

        plan->mean += cost;
        plan->goal += fct_objective(model, s, &b[j], &b[j + 1]);
        if (model != AWAFS_FCT_KARUNA) {
            plan->slowdown += fct_slowdown(s, &b[j], &b[j + 1]);
        }
        if (model == AWAFS_FCT_MLFQ_SHORT) {
            plan->short_mean += fct_partial_mean(s->short_count,
                                                 s->short_bytes,
                                                 s->short_total,
                                                 &b[j], &b[j + 1]);
        }
        plan->queue_flows[j] = flows;
        plan->queue_fct[j] = flows > 0 ? cost / flows : 0;
    }
}

/* Starts 'plan' for 'n_queues' queues and sums 'points' up in 's'; false if
 * the queues are out of range or 'points' hold no flow. */
static bool
fct_begin(struct fct_sums *s, const struct awafs_fct_point *points, size_t n,
          uint64_t short_size, uint32_t n_queues, double load,
          struct awafs_fct_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (n_queues < AWAFS_MIN_QUEUES || n_queues > AWAFS_MAX_QUEUES
        || !fct_sums_init(s, points, n, short_size, load)) {
        return false;
    }
    plan->n_queues = n_queues;
    return true;
}

bool
awafs_fct_solve(enum awafs_fct_model model, uint64_t short_size,
                const struct awafs_fct_point *points, size_t n,
                uint32_t n_queues, double load, struct awafs_fct_plan *plan)
{
    double best[AWAFS_MAX_QUEUES][AWAFS_FCT_MAX_POINTS + 1];
    uint16_t from[AWAFS_MAX_QUEUES][AWAFS_FCT_MAX_POINTS + 1];
    struct fct_boundary b[AWAFS_MAX_QUEUES + 1];
    struct fct_sums s;
    size_t end;
    uint32_t k = n_queues;

    if (!fct_begin(&s, points, n, short_size, k, load, plan)) {
        return false;
    }
    for (size_t l = 0; l <= s.n; l++) {
        best[0][l] = fct_objective(model, &s, &s.at[0], &s.at[l]);
        from[0][l] = 0;
    }
    for (uint32_t j = 1; j < k; j++) {
        for (size_t l = 0; l <= s.n; l++) {
            /* From the largest i down, so that of equal costs the plan
             * with the fuller higher queues wins. */
            best[j][l] = best[j - 1][l];
            from[j][l] = l;
            for (size_t i = l; i-- > 0;) {
                double c = best[j - 1][i] + fct_objective(model, &s,
                                                          &s.at[i],
                                                          &s.at[l]);

                if (c < best[j][l]) {
                    best[j][l] = c;
                    from[j][l] = i;
                }
            }
        }
    }
    b[0] = s.at[0];
    b[k] = s.at[s.n];
    for (uint32_t j = k - 1; j > 0; j--) {
        end = from[j][b[j + 1].l];
        b[j] = s.at[end];
        plan->thr[j - 1] = fct_boundary_size(&s, end);
    }
    fct_describe(model, &s, b, plan);
    return true;
}

bool
awafs_fct_evaluate(enum awafs_fct_model model, uint64_t short_size,
                   const struct awafs_fct_point *points, size_t n,
                   uint32_t n_queues, double load, const uint64_t *thr,
                   struct awafs_fct_plan *plan)
{
    struct fct_boundary b[AWAFS_MAX_QUEUES + 1];
    struct fct_sums s;
    uint32_t k = n_queues;
    size_t l = 0;

    if (!fct_begin(&s, points, n, short_size, k, load, plan)) {
        return false;
    }
    /* A flow of size x ends in the first queue whose threshold is at least
     * x; the bytes below each threshold count as they are, wherever it
     * falls between the points. */
    b[0] = s.at[0];
    b[k] = s.at[s.n];
    for (uint32_t j = 1; j < k; j++) {
        while (l < s.n && s.size[l] <= thr[j - 1]) {
            l++;
        }
        b[j] = fct_boundary_at(&s, l, thr[j - 1]);
    }
    fct_describe(model, &s, b, plan);
    memcpy(plan->thr, thr, (k - 1) * sizeof thr[0]);
    return true;
}

bool
awafs_fct_model_from_string(const char *name, enum awafs_fct_model *model)
{
    static const char *const names[] = {
        [AWAFS_FCT_MLFQ] = "fct",
        [AWAFS_FCT_MLFQ_SLOWDOWN] = "slowdown",
        [AWAFS_FCT_MLFQ_SHORT] = "short",
        [AWAFS_FCT_KARUNA] = "pias",
    };

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!strcmp(name, names[i])) {
            *model = i;
            return true;
        }
    }
    return false;
}

double
awafs_load_update(struct awafs_load *l, int64_t now_us, uint64_t bytes,
                  uint64_t rate_bps, int64_t window_us)
{
    int64_t elapsed = now_us - l->last_us;

    if (!l->started) {
        l->started = true;
        l->start_us = now_us;
    } else if (elapsed > 0 && bytes >= l->bytes) {
        double load = (bytes - l->bytes) * 8.0 * 1e6 / rate_bps / elapsed;
        int64_t span = now_us - l->start_us < window_us
                       ? now_us - l->start_us : window_us;
        double weight = span > elapsed ? (double) elapsed / span : 1.0;

        l->load += weight * (load - l->load);
    }
    l->bytes = bytes;
    l->last_us = now_us;
    return l->load;
}

uint64_t
awafs_queue_wire_bytes(const struct awafs_queue_stats *qs)
{
    return (qs->tx_bytes + qs->drop_bytes
            + AWAFS_WIRE_OVERHEAD * (qs->tx_packets + qs->drop_packets));
}
