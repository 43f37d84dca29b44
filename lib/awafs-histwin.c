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

/* A window of completed flow sizes in O(1) memory: time-sliced histograms
 * with logarithmic buckets (in the spirit of HDR histograms and Homa's byte
 * histograms).
 *
 * Buckets.  A size below 2^M (M = AWAFS_HIST_SUB_BITS) has a bucket of its
 * own; sizes of 2^AWAFS_HIST_MAX_BITS and more share the last one.  Above,
 * a size with its highest set bit at position e >= M falls in one of 2^M
 * equal buckets of [2^e, 2^(e+1)), each 2^(e-M) wide.  A
 * percentile is reported as the middle of its bucket, so it differs from the
 * exact nearest-rank percentile of the same samples by at most half a bucket:
 * a relative error of at most 2^-(M+1) (0.78 % for M = 6).
 *
 * Time.  The window is cut into slices of 'window / AWAFS_HIST_SLICES'.  A
 * slice leaves the window when its newest possible entry is older than the
 * window, so the window holds between W and W + one slice of completions.
 * The sum of the live slices is kept up to date on every add and expiry, so a
 * percentile query is one scan of the buckets: no sort, no per-sample
 * memory.
 *
 * Weights.  A bucket holds weights, ONE per sample unless sources are
 * weighed (awafs_histwin_weigh_sources()).  Then each slice also counts its
 * samples per source slot (a keyed hash of the sender's address, told apart
 * by AWAFS_HIST_SOURCES slots), and a sample from a source that has more
 * samples in the window than the other sources' mean weighs ONE * that mean /
 * its count: in steady state such a source's samples weigh as much together
 * as an average other source's, so one source among n holds about 1/n of
 * the window however many completions it makes.  Weights only go down, so a
 * rare source's few samples never weigh more than one each. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <string.h>

#define SUB (1u << AWAFS_HIST_SUB_BITS)
#define N_BUCKETS ((AWAFS_HIST_MAX_BITS - AWAFS_HIST_SUB_BITS + 1) * SUB)
#define MAX_SIZE ((1ull << AWAFS_HIST_MAX_BITS) - 1)
#define N_SLOTS (AWAFS_HIST_SLICES * 2 + 1)   /* Room for W up to 2x. */
#define ONE 256u                /* A sample's full weight. */
#define SRC_MASK (AWAFS_HIST_SOURCES - 1)

struct hist_slice {
    int64_t index;              /* ts / slice_us of its entries; -1: empty. */
    uint32_t count;
    uint32_t buckets[N_BUCKETS];        /* Weights. */
    uint32_t sources[AWAFS_HIST_SOURCES];       /* Samples per source slot,
                                                 * if sources are weighed. */
};

struct awafs_histwin {
    int64_t window_us;
    int64_t slice_us;
    bool weigh_sources;
    uint64_t total;             /* Samples. */
    uint64_t total_weight;
    uint64_t sum[N_BUCKETS];    /* Weights. */
    uint64_t source_sum[AWAFS_HIST_SOURCES];    /* Samples per source slot. */
    uint32_t n_sources;         /* Slots with samples in the window. */
    struct hist_slice slots[N_SLOTS];
};

static uint32_t
bucket_of(uint64_t v)
{
    int e;

    if (v < SUB) {
        return v;
    }
    if (v > MAX_SIZE) {
        v = MAX_SIZE;           /* Saturates in the last bucket. */
    }
    e = 63 - __builtin_clzll(v);
    return (e - AWAFS_HIST_SUB_BITS + 1) * SUB
           + ((v >> (e - AWAFS_HIST_SUB_BITS)) & (SUB - 1));
}

/* The middle of bucket 'b'. */
static uint64_t
bucket_value(uint32_t b)
{
    uint32_t e, m;
    uint64_t lo, width;

    if (b < SUB) {
        return b;
    }
    e = b / SUB + AWAFS_HIST_SUB_BITS - 1;
    m = b % SUB;
    width = 1ull << (e - AWAFS_HIST_SUB_BITS);
    lo = (1ull << e) + m * width;
    return lo + width / 2;
}

size_t
awafs_histwin_memsize(void)
{
    return sizeof(struct awafs_histwin);
}

static void
slot_clear(struct awafs_histwin *h, struct hist_slice *s)
{
    if (s->count) {
        for (uint32_t b = 0; b < N_BUCKETS; b++) {
            h->sum[b] -= s->buckets[b];
            h->total_weight -= s->buckets[b];
        }
        for (uint32_t i = 0; i < AWAFS_HIST_SOURCES; i++) {
            if (s->sources[i]) {
                h->source_sum[i] -= s->sources[i];
                h->n_sources -= !h->source_sum[i];
            }
        }
        h->total -= s->count;
        memset(s->buckets, 0, sizeof s->buckets);
        memset(s->sources, 0, sizeof s->sources);
        s->count = 0;
    }
    s->index = -1;
}

struct awafs_histwin *
awafs_histwin_create(int64_t window_us)
{
    struct awafs_histwin *h;

    if (window_us <= 0) {
        return NULL;
    }
    h = awafs_zalloc(sizeof *h);
    if (!h) {
        return NULL;
    }
    h->window_us = window_us;
    h->slice_us = window_us / AWAFS_HIST_SLICES;
    if (!h->slice_us) {
        h->slice_us = 1;
    }
    for (int i = 0; i < N_SLOTS; i++) {
        h->slots[i].index = -1;
    }
    return h;
}

void
awafs_histwin_destroy(struct awafs_histwin *h)
{
    awafs_free(h);
}

bool
awafs_histwin_set_window(struct awafs_histwin *h, int64_t window_us)
{
    /* The slices keep their width; the window may grow as long as the
     * slots still cover it: W / slice + 1 slices can be live at once. */
    if (window_us <= 0 || window_us / h->slice_us + 1 > N_SLOTS) {
        return false;
    }
    h->window_us = window_us;
    return true;
}

void
awafs_histwin_weigh_sources(struct awafs_histwin *h, bool on)
{
    h->weigh_sources = on;
}

/* The weight of a new sample from source slot 'src', counted already. */
static uint32_t
sample_weight(const struct awafs_histwin *h, uint32_t src)
{
    uint64_t own = h->source_sum[src];
    uint64_t others = h->total - own;
    uint64_t n_others = h->n_sources - 1;
    uint64_t w;

    /* At most ONE * (others / n_others) / own, in integers. */
    if (!h->weigh_sources || !n_others || own * n_others <= others) {
        return ONE;
    }
    w = ONE * others / (own * n_others);
    return w ? w : 1;
}

void
awafs_histwin_add(struct awafs_histwin *h, int64_t ts_us, uint64_t size,
                  uint32_t source)
{
    int64_t index = ts_us >= 0 ? ts_us / h->slice_us : 0;
    struct hist_slice *s = &h->slots[index % N_SLOTS];
    uint32_t b = bucket_of(size);
    uint32_t src = source & SRC_MASK;
    uint32_t w;

    if (s->index != index) {
        if (s->index > index) {
            return;     /* Older than anything the slots can hold. */
        }
        slot_clear(h, s);
        s->index = index;
    }
    if (s->buckets[b] > UINT32_MAX - ONE) {
        return;         /* 2^24 samples of one size in one slice. */
    }
    s->count++;
    h->total++;
    s->sources[src]++;
    h->n_sources += !h->source_sum[src]++;
    w = sample_weight(h, src);
    s->buckets[b] += w;
    h->sum[b] += w;
    h->total_weight += w;
}

uint64_t
awafs_histwin_prune(struct awafs_histwin *h, int64_t now_us)
{
    int64_t cutoff = now_us - h->window_us;
    uint64_t pruned = 0;

    for (int i = 0; i < N_SLOTS; i++) {
        struct hist_slice *s = &h->slots[i];

        /* Its newest possible entry is older than the window. */
        if (s->index >= 0 && (s->index + 1) * h->slice_us - 1 < cutoff) {
            pruned += s->count;
            slot_clear(h, s);
        }
    }
    return pruned;
}

uint64_t
awafs_histwin_count(const struct awafs_histwin *h)
{
    return h->total;
}

void
awafs_histwin_percentiles(const struct awafs_histwin *h,
                          const uint32_t *pct_milli, size_t n_pct,
                          uint64_t *out)
{
    uint64_t seen = 0;
    uint32_t b = 0;

    for (size_t i = 0; i < n_pct && h->total; i++) {
        /* Nearest rank, as awafs_percentiles(), by weight. */
        uint64_t rank = ((uint64_t) pct_milli[i] * h->total_weight + 99999)
                        / 100000;

        if (!rank) {
            rank = 1;
        }
        while (b < N_BUCKETS && seen + h->sum[b] < rank) {
            seen += h->sum[b++];
        }
        out[i] = bucket_value(b < N_BUCKETS ? b : N_BUCKETS - 1);
    }
}

size_t
awafs_histwin_points(const struct awafs_histwin *h,
                     struct awafs_fct_point *points, size_t max)
{
    size_t n = 0;

    for (uint32_t b = 0; b < N_BUCKETS && n < max; b++) {
        if (h->sum[b]) {
            points[n].size = bucket_value(b);
            points[n].count = h->sum[b];
            n++;
        }
    }
    return n;
}

void
awafs_histwin_log2_counts(const struct awafs_histwin *h,
                          uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS])
{
    uint64_t weights[AWAFS_WINDOW_LOG2_BUCKETS] = { 0 };

    /* Each bucket lies within one power of 2, as its midpoint does. */
    for (uint32_t b = 0; b < N_BUCKETS; b++) {
        weights[awafs_log2_bucket(bucket_value(b))] += h->sum[b];
    }
    for (size_t i = 0; i < AWAFS_WINDOW_LOG2_BUCKETS; i++) {
        counts[i] += (weights[i] + ONE / 2) / ONE;
    }
}
