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
 * Both objectives are sums over consecutive threshold pairs, so the optimum
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
    double rho[AWAFS_FCT_MAX_POINTS + 1];   /* rho(a) at each boundary. */
    double wait[AWAFS_FCT_MAX_POINTS + 1];  /* W(a) at each boundary. */
};


/* The threshold at boundary 'l': the largest size of the first l groups. */
static double
fct_boundary_size(const struct fct_sums *s, size_t l)
{
    return l ? s->size[l - 1] : 0;
}

/* E[min(S, a)] and E[min(S, a)^2] at boundary 'l', a its size. */
static void
fct_truncated(const struct fct_sums *s, size_t l, double *m1, double *m2)
{
    double a = fct_boundary_size(s, l);
    double above = s->total - s->count[l];

    *m1 = (s->bytes[l] + a * above) / s->total;
    *m2 = (s->squares[l] + a * a * above) / s->total;
}

/* Groups 'points' (ascending sizes) into at most AWAFS_FCT_MAX_POINTS
 * groups of about equal counts and sums them up in 's'.  False if there is
 * nothing to weigh. */
static bool
fct_sums_init(struct fct_sums *s, const struct awafs_fct_point *points,
              size_t n, double load)
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

        if (!points[i].count) {
            continue;
        }
        seen += c;
        s->count[g + 1] += c;
        s->bytes[g + 1] += c * x;
        s->squares[g + 1] += c * x * x;
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
    }
    s->total = s->count[s->n];
    s->mean = s->bytes[s->n] / s->total;
    s->load = load > 0 ? (load < MAX_LOAD ? load : MAX_LOAD) : 0;
    s->lambda = s->load / s->mean;
    for (size_t l = 0; l <= s->n; l++) {
        double m1, m2;

        fct_truncated(s, l, &m1, &m2);
        s->rho[l] = s->lambda * m1;
        s->wait[l] = s->lambda * m2 / (2 * (1 - s->rho[l]));
    }
    return true;
}

/* The share of the mean FCT of the flows that end at a level between
 * boundaries 'i' and 'l' (i <= l). */
static double
fct_cost(enum awafs_fct_model model, const struct fct_sums *s, size_t i,
         size_t l)
{
    double flows = (s->count[l] - s->count[i]) / s->total;

    if (flows <= 0) {
        return 0;
    }
    if (model == AWAFS_FCT_KARUNA) {
        double above = s->count[i] / s->total;

        return flows * s->load / (1 - s->load * above) * (1 - above);
    } else {
        return (s->wait[l] * flows + (s->bytes[l] - s->bytes[i]) / s->total)
               / (1 - s->rho[i]);
    }
}

/* Fills what 'plan' says of each queue from its boundaries 'b' (b[0] = 0,
 * b[k] = s->n). */
static void
fct_describe(enum awafs_fct_model model, const struct fct_sums *s,
             const size_t *b, struct awafs_fct_plan *plan)
{
    uint32_t k = plan->n_queues;

    plan->mean = 0;
    for (uint32_t j = 0; j < k; j++) {
        double cost = fct_cost(model, s, b[j], b[j + 1]);
        double flows = (s->count[b[j + 1]] - s->count[b[j]]) / s->total;

        plan->mean += cost;
        plan->queue_flows[j] = flows;
        plan->queue_fct[j] = flows > 0 ? cost / flows : 0;
        if (j + 1 < k) {
            plan->thr[j] = fct_boundary_size(s, b[j + 1]);
        }
    }
}

/* Starts 'plan' for 'n_queues' queues and sums 'points' up in 's'; false if
 * the queues are out of range or 'points' hold no flow. */
static bool
fct_begin(struct fct_sums *s, const struct awafs_fct_point *points, size_t n,
          uint32_t n_queues, double load, struct awafs_fct_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (n_queues < AWAFS_MIN_QUEUES || n_queues > AWAFS_MAX_QUEUES
        || !fct_sums_init(s, points, n, load)) {
        return false;
    }
    plan->n_queues = n_queues;
    return true;
}

bool
awafs_fct_solve(enum awafs_fct_model model,
                const struct awafs_fct_point *points, size_t n,
                uint32_t n_queues, double load, struct awafs_fct_plan *plan)
{
    double best[AWAFS_MAX_QUEUES][AWAFS_FCT_MAX_POINTS + 1];
    uint16_t from[AWAFS_MAX_QUEUES][AWAFS_FCT_MAX_POINTS + 1];
    size_t b[AWAFS_MAX_QUEUES + 1];
    struct fct_sums s;
    uint32_t k = n_queues;

    if (!fct_begin(&s, points, n, k, load, plan)) {
        return false;
    }
    for (size_t l = 0; l <= s.n; l++) {
        best[0][l] = fct_cost(model, &s, 0, l);
        from[0][l] = 0;
    }
    for (uint32_t j = 1; j < k; j++) {
        for (size_t l = 0; l <= s.n; l++) {
            /* From the largest i down, so that of equal costs the plan
             * with the fuller higher queues wins. */
            best[j][l] = best[j - 1][l];
            from[j][l] = l;
            for (size_t i = l; i-- > 0;) {
                double c = best[j - 1][i] + fct_cost(model, &s, i, l);

                if (c < best[j][l]) {
                    best[j][l] = c;
                    from[j][l] = i;
                }
            }
        }
    }
    b[0] = 0;
    b[k] = s.n;
    for (uint32_t j = k - 1; j > 0; j--) {
        b[j] = from[j][b[j + 1]];
    }
    fct_describe(model, &s, b, plan);
    return true;
}

bool
awafs_fct_evaluate(enum awafs_fct_model model,
                   const struct awafs_fct_point *points, size_t n,
                   uint32_t n_queues, double load, const uint64_t *thr,
                   struct awafs_fct_plan *plan)
{
    size_t b[AWAFS_MAX_QUEUES + 1];
    struct fct_sums s;
    uint32_t k = n_queues;

    if (!fct_begin(&s, points, n, k, load, plan)) {
        return false;
    }
    /* Each threshold at the boundary of the groups wholly below it: a flow
     * of size x ends in the first queue whose threshold is at least x. */
    b[0] = 0;
    b[k] = s.n;
    for (uint32_t j = 1; j < k; j++) {
        size_t l = b[j - 1];

        while (l < s.n && s.size[l] <= thr[j - 1]) {
            l++;
        }
        b[j] = l;
    }
    fct_describe(model, &s, b, plan);
    memcpy(plan->thr, thr, (k - 1) * sizeof thr[0]);
    return true;
}
