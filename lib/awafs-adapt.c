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

/* The sliding window of completed flow sizes and the threshold recalculation
 * (thesis Algorithm 1, with Homa's guards: a minimum sample count and a
 * version on every published set).
 *
 * The thesis keeps a sorted linked list.  Here the window is a fixed circular
 * buffer in arrival order, so pruning is O(pruned) from the oldest end, and
 * percentiles are found by selection on a scratch copy: O(n) per round, no
 * allocation after creation.  A full window evicts its oldest sample (counted
 * in 'samples_evicted'). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PCT_SCALE 100000u               /* pct_milli: 1/1000 of a percent. */
#define WINDOW_MIN_CAPACITY 16
/* A round over an exact window selects its percentiles in O(n), or sorts
 * it for the FCT model, under the lock that the switch's qos/show takes:
 * these bound how long one round holds it (about 18 ms and 5 ms here,
 * bench/results/core.csv).  The histogram window's round does not grow. */
#define WINDOW_MAX_CAPACITY (1u << 20)
#define WINDOW_MAX_CAPACITY_MODEL (1u << 16)
#define DRAIN_BURST 256

/* A sample of the exact window (which does not weigh sources). */
struct window_entry {
    int64_t ts_us;
    uint64_t size;
};

struct awafs_adapt {
    struct awafs_config cfg;
    struct awafs_ring *ring;
    /* AWAFS_WINDOW_EXACT: */
    struct window_entry *win;           /* cfg.window_capacity entries. */
    uint32_t win_first;                 /* Index of the oldest entry. */
    uint32_t win_count;
    uint64_t *scratch;                  /* cfg.window_capacity sizes. */
    uint32_t log2_counts[AWAFS_WINDOW_LOG2_BUCKETS];  /* Its sizes. */
    /* AWAFS_WINDOW_HISTOGRAM: */
    struct awafs_histwin *hist;
    struct awafs_thresholds cur;
    struct awafs_adapt_stats stats;
    /* For cfg.minimise_fct: */
    struct awafs_fct_point *points;     /* AWAFS_FCT_MAX_INPUT. */
    double load;
    struct awafs_fct_plan plan;         /* Of the set in force. */
    bool have_plan;
};

static void heap_sort(uint64_t *v, size_t n);

void
awafs_config_default(struct awafs_config *cfg, uint32_t n_queues)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->n_queues = n_queues;
    cfg->adaptive = true;
    for (int i = 0; i < AWAFS_MAX_THRESHOLDS; i++) {
        cfg->pct_milli[i] = (i + 1) * 10 * 1000;   /* 10 %, 20 %, ... */
        cfg->init_thr[i] = (i + 1) * 7000;         /* 7 kB, 14 kB, ... */
        cfg->max_thr[i] = UINT64_MAX;
    }
    cfg->window_us = 250 * 1000;
    cfg->interval_us = 200 * 1000;
    cfg->min_samples = 20;
    cfg->window_capacity = 32768;
    cfg->ring_capacity = 4096;
    cfg->short_size = AWAFS_FCT_SHORT_SIZE;
}

void
awafs_config_share_window(struct awafs_config *beta,
                          const struct awafs_config *core)
{
    beta->adaptive = core->adaptive;
    beta->window_kind = core->window_kind;
    beta->window_us = core->window_us;
    beta->interval_us = core->interval_us;
    beta->min_samples = core->min_samples;
    beta->weigh_sources = core->weigh_sources;
    beta->window_capacity = core->window_capacity;
}

const char *
awafs_config_check(const struct awafs_config *cfg)
{
    uint32_t n_thr = cfg->n_queues - 1;

    if (cfg->n_queues < AWAFS_MIN_QUEUES || cfg->n_queues > AWAFS_MAX_QUEUES) {
        return "queues must be between 2 and 8";
    }
    for (uint32_t i = 0; i < n_thr; i++) {
        if (!cfg->pct_milli[i] || cfg->pct_milli[i] >= PCT_SCALE) {
            return "percentiles must be in (0, 100)";
        }
        if (i && cfg->pct_milli[i] <= cfg->pct_milli[i - 1]) {
            return "percentiles must be strictly increasing";
        }
        if (i && cfg->init_thr[i] < cfg->init_thr[i - 1]) {
            return "thresholds must be non-decreasing";
        }
        /* Non-decreasing bounds keep a clamped set non-decreasing. */
        if (i && (cfg->min_thr[i] < cfg->min_thr[i - 1]
                  || cfg->max_thr[i] < cfg->max_thr[i - 1])) {
            return "min-thresholds and max-thresholds must be "
                   "non-decreasing";
        }
        if (cfg->min_thr[i] > cfg->max_thr[i]) {
            return "min-thresholds must not be above max-thresholds";
        }
        if (cfg->adaptive && (cfg->init_thr[i] < cfg->min_thr[i]
                              || cfg->init_thr[i] > cfg->max_thr[i])) {
            return "thresholds must lie within min-thresholds and "
                   "max-thresholds";
        }
    }
    if (cfg->window_us <= 0) {
        return "window must be positive";
    }
    if (cfg->interval_us <= 0) {
        return "interval must be positive";
    }
    if (cfg->window_capacity < WINDOW_MIN_CAPACITY
        || cfg->window_capacity > WINDOW_MAX_CAPACITY) {
        return "window capacity must be between 16 and 1048576";
    }
    if (cfg->ring_capacity
        && (cfg->ring_capacity < 2
            || cfg->ring_capacity > AWAFS_RING_MAX_CAPACITY)) {
        return "ring capacity must be 0 or between 2 and 16777216";
    }
    if (!cfg->min_samples || cfg->min_samples > cfg->window_capacity) {
        return "min-samples must be between 1 and the window capacity";
    }
    if (cfg->window_kind != AWAFS_WINDOW_EXACT
        && cfg->window_kind != AWAFS_WINDOW_HISTOGRAM) {
        return "unknown window type";
    }
    if (cfg->weigh_sources && cfg->window_kind != AWAFS_WINDOW_HISTOGRAM) {
        return "window-weight=source needs window-type=histogram";
    }
    if (cfg->minimise_fct && cfg->fct_model != AWAFS_FCT_MLFQ
        && cfg->fct_model != AWAFS_FCT_MLFQ_SLOWDOWN
        && cfg->fct_model != AWAFS_FCT_MLFQ_SHORT
        && cfg->fct_model != AWAFS_FCT_KARUNA) {
        return "percentiles=auto minimises the multilevel model's mean FCT, "
               "mean slowdown or short flows' mean FCT, or PIAS's objective";
    }
    if (cfg->minimise_fct && cfg->fct_model == AWAFS_FCT_MLFQ_SHORT
        && !cfg->short_size) {
        return "short-size must be at least 1 byte";
    }
    if (cfg->minimise_fct && cfg->window_kind == AWAFS_WINDOW_EXACT
        && cfg->window_capacity > WINDOW_MAX_CAPACITY_MODEL) {
        return "percentiles=auto sorts an exact window each round: its "
               "capacity must be at most 65536 (or window-type=histogram)";
    }
    return NULL;
}

/* Keeps each threshold of 'thr' within the bounds of 'cfg'.  Returns true
 * if that changed any. */
static bool
clamp_to_bounds(const struct awafs_config *cfg, uint64_t *thr)
{
    bool changed = false;

    for (uint32_t i = 0; i < cfg->n_queues - 1; i++) {
        uint64_t t = (thr[i] < cfg->min_thr[i] ? cfg->min_thr[i]
                      : thr[i] > cfg->max_thr[i] ? cfg->max_thr[i] : thr[i]);

        changed |= t != thr[i];
        thr[i] = t;
    }
    return changed;
}

static void
set_initial(struct awafs_adapt *a, int64_t now_us)
{
    struct awafs_thresholds *t = &a->cur;

    t->n_queues = a->cfg.n_queues;
    t->updated_us = now_us;
    t->n_samples = 0;
    for (int i = 0; i < AWAFS_MAX_THRESHOLDS; i++) {
        t->thr[i] = i < t->n_queues - 1 ? a->cfg.init_thr[i] : UINT64_MAX;
    }
}

size_t
awafs_adapt_memsize(const struct awafs_config *cfg)
{
    size_t window = (cfg->window_kind == AWAFS_WINDOW_HISTOGRAM
                     ? awafs_histwin_memsize()
                     : (size_t) cfg->window_capacity
                       * (sizeof(struct window_entry) + sizeof(uint64_t)));

    return sizeof(struct awafs_adapt)
           + (cfg->ring_capacity ? awafs_ring_memsize(cfg->ring_capacity) : 0)
           + window + (cfg->minimise_fct ? AWAFS_FCT_MAX_INPUT
                                            * sizeof(struct awafs_fct_point)
                                          : 0);
}

size_t
awafs_port_memsize(const struct awafs_port_mem *m)
{
    const struct awafs_config *cfgs[2] = { m->core, m->beta };
    size_t total = 0;

    if (m->n_queues < AWAFS_MIN_QUEUES || m->n_queues > AWAFS_MAX_QUEUES
        || !m->buffer || m->buffer > AWAFS_SCHED_MAX_LIMIT
        || m->flow_table_size > (1u << 24)
        || m->srclimit_slots > AWAFS_SRCLIMIT_MAX_SLOTS) {
        return SIZE_MAX;
    }
    for (int i = 0; i < 2; i++) {
        if (cfgs[i]) {
            if (cfgs[i]->ring_capacity > AWAFS_RING_MAX_CAPACITY
                || cfgs[i]->window_capacity > (1u << 24)) {
                return SIZE_MAX;
            }
            total += awafs_adapt_memsize(cfgs[i]);
        }
    }
    total += awafs_sched_memsize(m->n_queues, m->buffer);
    if (m->flow_table_size) {
        total += awafs_flowtab_memsize(m->flow_table_size);
    }
    if (m->srclimit_slots) {
        total += awafs_srclimit_memsize(m->srclimit_slots);
    }
    return total;
}

bool
awafs_memory_check(size_t bytes, size_t others, size_t port_max,
                   size_t total_max, char *msg, size_t msg_size)
{
    if (bytes > port_max) {
        if (bytes == SIZE_MAX) {
            snprintf(msg, msg_size, "a size is out of range");
        } else {
            snprintf(msg, msg_size, "needs %llu bytes of memory, more than "
                     "the %llu a port may use", (unsigned long long) bytes,
                     (unsigned long long) port_max);
        }
        return false;
    }
    if (others > total_max || bytes > total_max - others) {
        /* Cast to unsigned long long: OVS's printf-check forbids the size_t
         * length modifier. */
        snprintf(msg, msg_size, "needs %llu bytes of memory, and the other "
                 "awafs ports hold %llu of the %llu all may use",
                 (unsigned long long) bytes, (unsigned long long) others,
                 (unsigned long long) total_max);
        return false;
    }
    if (msg_size) {
        msg[0] = '\0';
    }
    return true;
}

/* Allocates the solver's input for 'minimise_fct', or frees it without. */
static bool
adapt_set_points(struct awafs_adapt *a, bool minimise_fct)
{
    if (!minimise_fct) {
        awafs_free(a->points);
        a->points = NULL;
        a->have_plan = false;
    } else if (!a->points) {
        a->points = awafs_zalloc(AWAFS_FCT_MAX_INPUT * sizeof *a->points);
    }
    return !minimise_fct || a->points;
}

struct awafs_adapt *
awafs_adapt_create(const struct awafs_config *cfg)
{
    struct awafs_adapt *a;
    bool ok;

    if (awafs_config_check(cfg)) {
        return NULL;
    }
    a = awafs_zalloc(sizeof *a);
    if (!a) {
        return NULL;
    }
    a->cfg = *cfg;
    a->ring = (cfg->ring_capacity ? awafs_ring_create(cfg->ring_capacity)
               : NULL);
    ok = a->ring || !cfg->ring_capacity;
    if (cfg->window_kind == AWAFS_WINDOW_HISTOGRAM) {
        a->hist = awafs_histwin_create(cfg->window_us);
        ok = ok && a->hist;
        if (a->hist) {
            awafs_histwin_weigh_sources(a->hist, cfg->weigh_sources);
        }
    } else {
        a->win = awafs_zalloc(cfg->window_capacity * sizeof *a->win);
        a->scratch = awafs_zalloc(cfg->window_capacity
                                  * sizeof *a->scratch);
        ok = ok && a->win && a->scratch;
    }
    if (!ok || !adapt_set_points(a, cfg->minimise_fct)) {
        awafs_adapt_destroy(a);
        return NULL;
    }
    set_initial(a, 0);
    return a;
}

void
awafs_adapt_destroy(struct awafs_adapt *a)
{
    if (a) {
        awafs_ring_destroy(a->ring);
        awafs_free(a->win);
        awafs_free(a->scratch);
        awafs_histwin_destroy(a->hist);
        awafs_free(a->points);
        awafs_free(a);
    }
}

struct awafs_ring *
awafs_adapt_ring(struct awafs_adapt *a)
{
    return a->ring;
}

bool
awafs_adapt_reconfigure(struct awafs_adapt *a, const struct awafs_config *cfg,
                        int64_t now_us)
{
    struct awafs_thresholds old;

    if (awafs_config_check(cfg)
        || cfg->n_queues != a->cfg.n_queues
        || cfg->window_kind != a->cfg.window_kind
        || cfg->window_capacity != a->cfg.window_capacity
        || cfg->ring_capacity != a->cfg.ring_capacity
        || (a->hist && !awafs_histwin_set_window(a->hist, cfg->window_us))
        || !adapt_set_points(a, cfg->minimise_fct)) {
        return false;
    }
    a->cfg = *cfg;
    if (a->hist) {
        awafs_histwin_weigh_sources(a->hist, cfg->weigh_sources);
    }
    /* Static mode always runs on the configured set; adaptive mode keeps a
     * learned set, so a new InitThr matters only until the first update,
     * and new bounds apply to the learned set at once.  Any change to the
     * published set is a new version. */
    old = a->cur;
    if (!cfg->adaptive || !a->stats.updates) {
        set_initial(a, now_us);
    } else if (clamp_to_bounds(cfg, a->cur.thr)) {
        a->cur.updated_us = now_us;
    }
    if (memcmp(old.thr, a->cur.thr, sizeof old.thr)) {
        a->cur.version = old.version + 1;
    } else {
        a->cur = old;
    }
    return true;
}

/* Drops the exact window's oldest entry. */
static void
window_drop_oldest(struct awafs_adapt *a)
{
    a->log2_counts[awafs_log2_bucket(a->win[a->win_first].size)]--;
    a->win_first = (a->win_first + 1) % a->cfg.window_capacity;
    a->win_count--;
}

static void
window_add(struct awafs_adapt *a, int64_t ts_us, uint64_t size,
           uint32_t source)
{
    uint32_t cap = a->cfg.window_capacity;
    uint32_t idx;

    if (a->hist) {
        awafs_histwin_add(a->hist, ts_us, size, source);
        return;
    }
    if (a->win_count == cap) {
        window_drop_oldest(a);
        a->stats.samples_evicted++;
    }
    idx = (a->win_first + a->win_count) % cap;
    a->win[idx].ts_us = ts_us;
    a->win[idx].size = size;
    a->win_count++;
    a->log2_counts[awafs_log2_bucket(size)]++;
}

/* Drops entries with ts < now - window (thesis Algorithm 1, line 28: an entry
 * exactly 'window' old is kept).  Entries arrive in near time order; an
 * entry older than one in front of it waits for that one to age out. */
static void
window_prune(struct awafs_adapt *a, int64_t now_us)
{
    int64_t cutoff = now_us - a->cfg.window_us;

    if (a->hist) {
        a->stats.samples_pruned += awafs_histwin_prune(a->hist, now_us);
        return;
    }
    while (a->win_count && a->win[a->win_first].ts_us < cutoff) {
        window_drop_oldest(a);
        a->stats.samples_pruned++;
    }
}

void
awafs_adapt_set_load(struct awafs_adapt *a, double load)
{
    a->load = load;
}

/* Copies the exact window's sizes into 'a->scratch', oldest first. */
static void
window_sizes(struct awafs_adapt *a)
{
    for (uint32_t i = 0; i < a->win_count; i++) {
        a->scratch[i] = a->win[(a->win_first + i)
                               % a->cfg.window_capacity].size;
    }
}

/* The window as points for the solver, in 'a->points': the histogram's
 * buckets, or the exact window's distinct sizes (neighbours merged in pairs,
 * at the larger size, while there are more than AWAFS_FCT_MAX_INPUT). */
static size_t
window_points(struct awafs_adapt *a)
{
    struct awafs_fct_point *p = a->points;
    size_t n = 0;

    if (a->hist) {
        return awafs_histwin_points(a->hist, p, AWAFS_FCT_MAX_INPUT);
    }
    window_sizes(a);
    heap_sort(a->scratch, a->win_count);
    for (uint32_t i = 0; i < a->win_count; i++) {
        if (n && p[n - 1].size == a->scratch[i]) {
            p[n - 1].count++;
            continue;
        }
        if (n == AWAFS_FCT_MAX_INPUT) {
            for (size_t j = 0; j < n / 2; j++) {
                p[j].size = p[2 * j + 1].size;
                p[j].count = p[2 * j].count + p[2 * j + 1].count;
            }
            n /= 2;
        }
        p[n].size = a->scratch[i];
        p[n].count = 1;
        n++;
    }
    return n;
}

/* Fills 'thr' with the FCT model's optimum for the window of 'n_samples'
 * and the load (within the configured bounds), and returns true, if it
 * beats the set in force by more than the margin of AWAFS_FCT_HYSTERESIS in
 * what it minimises (the mean FCT, the mean slowdown, or the short flows'
 * weighted mean FCT), or by more than AWAFS_FCT_SLOWDOWN_GAIN times that
 * margin in the other (the mean slowdown for the first, the mean FCT
 * otherwise). */
static bool
adapt_by_model(struct awafs_adapt *a, uint32_t n_samples, uint64_t *thr)
{
    double margin = AWAFS_FCT_HYSTERESIS + 1 / sqrt(n_samples);
    enum awafs_fct_model model = a->cfg.fct_model;
    uint64_t short_size = a->cfg.short_size;
    uint32_t k = a->cfg.n_queues;
    struct awafs_fct_plan best, cur;
    size_t n = window_points(a);
    double cur_other, best_other;
    bool changed;

    if (!awafs_fct_solve(model, short_size, a->points, n, k, a->load, &best)
        || !awafs_fct_evaluate(model, short_size, a->points, n, k, a->load,
                               a->cur.thr, &cur)) {
        return false;
    }
    memcpy(thr, best.thr, (k - 1) * sizeof thr[0]);
    if (clamp_to_bounds(&a->cfg, thr)) {
        /* The optimum clamped: what the model predicts of that set. */
        awafs_fct_evaluate(model, short_size, a->points, n, k, a->load, thr,
                           &best);
    }
    a->have_plan = true;
    /* The measure beside what the solver minimised ('goal'). */
    cur_other = model == AWAFS_FCT_MLFQ ? cur.slowdown : cur.mean;
    best_other = model == AWAFS_FCT_MLFQ ? best.slowdown : best.mean;
    changed = !(cur.goal <= best.goal * (1 + margin)
                && cur_other <= (AWAFS_FCT_SLOWDOWN_GAIN * best_other
                                 * (1 + margin)));
    if (!changed) {
        a->stats.model_kept++;
    }
    if (model == AWAFS_FCT_KARUNA) {
        /* PIAS's objective is no time: the plan shown is what the
         * multilevel model predicts of the set it chose. */
        awafs_fct_evaluate(AWAFS_FCT_MLFQ, short_size, a->points, n, k,
                           a->load, changed ? thr : a->cur.thr, &a->plan);
    } else {
        a->plan = changed ? best : cur;
    }
    return changed;
}

/* Moves up to 'max' completions from 'r' into the window, in its order. */
static void
drain_ring(struct awafs_adapt *a, struct awafs_ring *r, uint64_t max)
{
    struct awafs_ring_entry burst[DRAIN_BURST];

    while (max) {
        size_t n = awafs_ring_pop_burst(r, burst, (max < DRAIN_BURST
                                                   ? max : DRAIN_BURST));

        if (!n) {
            break;
        }
        for (size_t i = 0; i < n; i++) {
            window_add(a, burst[i].ts_us, burst[i].size, burst[i].source);
        }
        a->stats.samples_in += n;
        max -= n;
    }
}

void
awafs_adapt_collect(struct awafs_adapt *a, struct awafs_ring *const *rings,
                    size_t n)
{
    uint64_t max = 0;

    if (a->hist) {
        /* The histogram files each sample by its time, in any order. */
        for (size_t i = 0; i < n; i++) {
            drain_ring(a, rings[i], awafs_ring_capacity(rings[i]));
        }
        return;
    }

    /* The exact window ages its entries out in the order they came: merge
     * the rings by time, the oldest head first. */
    for (size_t i = 0; i < n; i++) {
        max += awafs_ring_capacity(rings[i]);
    }
    for (; max; max--) {
        struct awafs_ring_entry e;
        int64_t oldest_us = 0;
        size_t from = n;

        for (size_t i = 0; i < n; i++) {
            if (awafs_ring_peek(rings[i], &e)
                && (from == n || e.ts_us < oldest_us)) {
                oldest_us = e.ts_us;
                from = i;
            }
        }
        if (from == n) {
            break;
        }
        awafs_ring_pop_burst(rings[from], &e, 1);
        window_add(a, e.ts_us, e.size, e.source);
        a->stats.samples_in++;
    }
}

bool
awafs_adapt_update(struct awafs_adapt *a, int64_t now_us,
                   struct awafs_thresholds *out)
{
    uint64_t pct_out[AWAFS_MAX_THRESHOLDS];
    uint32_t n_thr = a->cfg.n_queues - 1;
    uint32_t n_samples;

    if (a->ring) {
        drain_ring(a, a->ring, UINT64_MAX);
    }
    window_prune(a, now_us);
    n_samples = awafs_adapt_window_count(a);

    if (!a->cfg.adaptive) {
        *out = a->cur;
        return false;
    } else if (!n_samples) {
        a->stats.skipped_empty++;
        *out = a->cur;
        return false;
    } else if (n_samples < a->cfg.min_samples) {
        a->stats.skipped_few++;
        *out = a->cur;
        return false;
    }

    if (a->cfg.minimise_fct) {
        if (!adapt_by_model(a, n_samples, pct_out)) {
            *out = a->cur;
            return false;
        }
    } else {
        if (a->hist) {
            awafs_histwin_percentiles(a->hist, a->cfg.pct_milli, n_thr,
                                      pct_out);
        } else {
            window_sizes(a);
            awafs_percentiles(a->scratch, a->win_count, a->cfg.pct_milli,
                              n_thr, pct_out);
        }
        /* (adapt_by_model() clamps the optimum before weighing it.) */
        clamp_to_bounds(&a->cfg, pct_out);
    }
    memcpy(a->cur.thr, pct_out, n_thr * sizeof pct_out[0]);
    a->cur.version++;
    a->cur.updated_us = now_us;
    a->cur.n_samples = n_samples;
    a->stats.updates++;
    *out = a->cur;
    return true;
}

void
awafs_adapt_current(const struct awafs_adapt *a, struct awafs_thresholds *out)
{
    *out = a->cur;
}

bool
awafs_adapt_get_plan(const struct awafs_adapt *a, struct awafs_fct_plan *plan)
{
    *plan = a->plan;
    return a->have_plan;
}

uint32_t
awafs_adapt_window_count(const struct awafs_adapt *a)
{
    uint64_t n = a->hist ? awafs_histwin_count(a->hist) : a->win_count;

    return n > UINT32_MAX ? UINT32_MAX : n;
}

size_t
awafs_adapt_window_log2_counts(const struct awafs_adapt *a,
                               uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS])
{
    size_t n = 0;

    memset(counts, 0, AWAFS_WINDOW_LOG2_BUCKETS * sizeof counts[0]);
    if (a->hist) {
        awafs_histwin_log2_counts(a->hist, counts);
    } else {
        for (size_t i = 0; i < AWAFS_WINDOW_LOG2_BUCKETS; i++) {
            counts[i] = a->log2_counts[i];
        }
    }
    for (size_t i = 0; i < AWAFS_WINDOW_LOG2_BUCKETS; i++) {
        if (counts[i]) {
            n = i + 1;
        }
    }
    return n;
}

void
awafs_adapt_get_stats(const struct awafs_adapt *a,
                      struct awafs_adapt_stats *stats)
{
    *stats = a->stats;
}

/* ---- Selection ---- */

static inline void
swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;

    *a = *b;
    *b = t;
}

static void
sift_down(uint64_t *v, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;

        if (child >= n) {
            return;
        }
        if (child + 1 < n && v[child + 1] > v[child]) {
            child++;
        }
        if (v[root] >= v[child]) {
            return;
        }
        swap_u64(&v[root], &v[child]);
        root = child;
    }
}

static void
heap_sort(uint64_t *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) {
        sift_down(v, i, n);
    }
    for (size_t i = n; i-- > 1;) {
        swap_u64(&v[0], &v[i]);
        sift_down(v, 0, i);
    }
}

static uint64_t
median3(uint64_t a, uint64_t b, uint64_t c)
{
    if (a > b) {
        swap_u64(&a, &b);
    }
    if (b > c) {
        b = c;
    }
    return a > b ? a : b;
}

/* Places the element of rank 'k' of v[lo, hi) at v[k], with smaller or equal
 * elements before it and greater or equal ones after it (introselect:
 * three-way quickselect, which handles the many equal sizes of real
 * workloads, with a heap-sort fallback against bad pivots). */
static void
select_kth(uint64_t *v, size_t lo, size_t hi, size_t k)
{
    size_t depth = 0;

    for (size_t n = hi - lo; n > 1; n >>= 1) {
        depth += 2;
    }
    while (hi - lo > 1) {
        uint64_t pivot;
        size_t lt, gt, i;

        if (!depth--) {
            heap_sort(v + lo, hi - lo);
            return;
        }
        pivot = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
        /* Dutch national flag: [lo,lt) < pivot, [lt,gt) == pivot, [gt,hi) >
         * pivot. */
        lt = lo;
        gt = hi;
        i = lo;
        while (i < gt) {
            if (v[i] < pivot) {
                swap_u64(&v[i++], &v[lt++]);
            } else if (v[i] > pivot) {
                swap_u64(&v[i], &v[--gt]);
            } else {
                i++;
            }
        }
        if (k < lt) {
            hi = lt;
        } else if (k >= gt) {
            lo = gt;
        } else {
            return;
        }
    }
}

void
awafs_percentiles(uint64_t *v, size_t n, const uint32_t *pct_milli,
                  size_t n_pct, uint64_t *out)
{
    size_t lo = 0;

    for (size_t i = 0; i < n_pct && n; i++) {
        /* Rank ceil(p * n), 1-based, in integers. */
        uint64_t rank = ((uint64_t) pct_milli[i] * n + PCT_SCALE - 1)
                        / PCT_SCALE;
        size_t k = rank ? rank - 1 : 0;

        if (k >= n) {
            k = n - 1;
        }
        /* Ascending percentiles: everything before 'lo' is already <= the
         * previous result, so select within [lo, n). */
        select_kth(v, lo, n, k);
        out[i] = v[k];
        lo = k;
    }
}
