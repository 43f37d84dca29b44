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

/* The egress side of AWAFS: k strict-priority FIFOs of opaque packets that
 * share one buffer limit, an optional starvation guard, a token bucket, and
 * ECN marking.
 *
 * One thread at a time calls everything here except awafs_sched_backlog()
 * (the datapath gives each tx queue an instance of its own, which only the
 * thread that sends on that queue uses); the backlog is also kept in an
 * atomic so that the statistics can read it from another thread. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <string.h>

struct sched_slot {
    void *pkt;
    uint32_t len : 31;
    uint32_t ce : 1;            /* Marked CE when it was queued. */
    uint32_t ts;                /* Queued at, in the caller's clock ticks. */
};

/* Per-queue counters, kept to the minimum the fast path must update: a
 * packet that arrived was sent, dropped, flushed or is queued, so the
 * arrivals are their sum (awafs_sched_get_queue_stats()). */
struct sched_counters {
    uint64_t tx_packets, tx_bytes;
    uint64_t drop_packets, drop_bytes;
    uint64_t flush_packets, flush_bytes;
    uint64_t ecn_marks;         /* Marked packets transmitted. */
    uint64_t aged_packets;      /* Sent early by the starvation guard. */
    uint64_t backlog_bytes;
    uint32_t sojourn_max;       /* Longest a sent packet waited, ticks. */
};

/* One run of packets of one queue in the order awafs_sched_peek() returned
 * them, for awafs_sched_commit(). */
struct sched_run {
    uint8_t q;
    uint8_t aged;
    uint32_t n;
    uint32_t marks;             /* Of the 'n' packets, marked CE. */
    uint64_t bytes;             /* Of the 'n' packets. */
};

struct sched_queue {
    struct sched_slot *slots;   /* 'mask + 1' slots. */
    uint32_t head;              /* Oldest packet. */
    uint32_t count;             /* Backlog, packets. */
    struct sched_counters c;
};

struct awafs_sched {
    uint32_t n_queues;
    uint32_t limit;             /* Packets, all queues together. */
    uint32_t mask;
    uint32_t backlog;           /* Packets, all queues. */
    AWAFS_ATOMIC(uint32_t) backlog_shared;  /* 'backlog', read lock-free. */
    uint32_t ecn_threshold;     /* Packets; 0: no marking. */
    bool ecn_per_queue;         /* Else the whole port's backlog. */
    uint32_t max_wait;          /* Starvation guard, ticks; 0: off. */
    struct sched_run runs[2 * AWAFS_MAX_QUEUES];   /* Of the last peek. */
    uint32_t n_runs;
    uint32_t peek_now;          /* 'now' of the last peek. */
    struct sched_queue q[AWAFS_MAX_QUEUES];
};

size_t
awafs_sched_memsize(uint32_t n_queues, uint32_t limit)
{
    return sizeof(struct awafs_sched)
           + (size_t) n_queues * awafs_pow2_at_least(limit)
             * sizeof(struct sched_slot);
}

struct awafs_sched *
awafs_sched_create(uint32_t n_queues, uint32_t limit)
{
    struct awafs_sched *s;
    uint32_t cap;

    if (n_queues < AWAFS_MIN_QUEUES || n_queues > AWAFS_MAX_QUEUES
        || !limit || limit > AWAFS_SCHED_MAX_LIMIT) {
        return NULL;
    }
    s = awafs_zalloc(sizeof *s);
    if (!s) {
        return NULL;
    }
    cap = awafs_pow2_at_least(limit);
    s->n_queues = n_queues;
    s->limit = limit;
    s->mask = cap - 1;
    atomic_init(&s->backlog_shared, 0);
    for (uint32_t i = 0; i < n_queues; i++) {
        s->q[i].slots = awafs_zalloc(cap * sizeof *s->q[i].slots);
        if (!s->q[i].slots) {
            awafs_sched_destroy(s);
            return NULL;
        }
    }
    return s;
}

void
awafs_sched_destroy(struct awafs_sched *s)
{
    if (s) {
        for (uint32_t i = 0; i < s->n_queues; i++) {
            awafs_free(s->q[i].slots);
        }
        awafs_free(s);
    }
}

static void
set_backlog(struct awafs_sched *s, uint32_t backlog)
{
    s->backlog = backlog;
    atomic_store_explicit(&s->backlog_shared, backlog, memory_order_relaxed);
}

void
awafs_sched_set_ecn(struct awafs_sched *s, uint32_t threshold, bool per_queue)
{
    s->ecn_threshold = threshold;
    s->ecn_per_queue = per_queue;
}

void
awafs_sched_set_max_wait(struct awafs_sched *s, uint32_t max_wait)
{
    s->max_wait = max_wait;
}

/* Appends 'pkt' to queue 'q', or returns the packet to drop (see
 * awafs_sched_enqueue()); updates 's->backlog' but not its shared copy.
 * '*ecn' is in: nonzero if 'pkt' is ECN-capable; out: nonzero if the caller
 * must mark it CE, which is decided only for a packet that was queued, on
 * the backlog it found. */
static inline void *
enqueue__(struct awafs_sched *s, unsigned int q, void *pkt, uint32_t len,
          uint8_t *ecn, uint32_t now)
{
    struct sched_queue *queue;
    void *victim = NULL;
    uint32_t found;

    if (q >= s->n_queues) {
        q = s->n_queues - 1;
    }
    queue = &s->q[q];
    if (s->backlog >= s->limit) {
        /* Full: the newest packet of the lowest-priority non-empty queue
         * goes, unless the new packet's queue is that low or lower. */
        unsigned int low = s->n_queues - 1;
        struct sched_queue *lq;
        struct sched_slot *slot;

        while (!s->q[low].count) {
            low--;
        }
        if (low <= q) {
            queue->c.drop_packets++;
            queue->c.drop_bytes += len;
            if (ecn) {
                *ecn = 0;
            }
            return pkt;
        }
        lq = &s->q[low];
        lq->count--;
        slot = &lq->slots[(lq->head + lq->count) & s->mask];
        victim = slot->pkt;
        lq->c.drop_packets++;
        lq->c.drop_bytes += slot->len;
        lq->c.backlog_bytes -= slot->len;
        s->backlog--;
    }
    if (ecn) {
        found = s->ecn_per_queue ? queue->count : s->backlog;
        *ecn = *ecn && s->ecn_threshold && found > s->ecn_threshold;
    }
    queue->slots[(queue->head + queue->count) & s->mask] =
        (struct sched_slot) { .pkt = pkt, .len = len, .ce = ecn && *ecn,
                              .ts = now };
    queue->count++;
    queue->c.backlog_bytes += len;
    s->backlog++;
    return victim;
}

void *
awafs_sched_enqueue(struct awafs_sched *s, unsigned int q, void *pkt,
                    uint32_t len)
{
    void *victim = enqueue__(s, q, pkt, len, NULL, 0);

    set_backlog(s, s->backlog);
    return victim;
}

size_t
awafs_sched_enqueue_burst(struct awafs_sched *s, const uint8_t *queues,
                          void **pkts, const uint32_t *lens, uint8_t *ecn,
                          size_t n, uint32_t now, void **victims)
{
    size_t n_victims = 0;

    for (size_t i = 0; i < n; i++) {
        void *victim = enqueue__(s, queues[i], pkts[i], lens[i],
                                 ecn ? &ecn[i] : NULL, now);

        if (victim) {
            victims[n_victims++] = victim;
        }
    }
    set_backlog(s, s->backlog);
    return n_victims;
}

size_t
awafs_sched_send_direct(struct awafs_sched *s, const uint8_t *queues,
                        void **pkts, const uint32_t *lens, uint8_t *ecn,
                        size_t n, size_t n_sent, uint32_t now, void **victims,
                        uint64_t *sent_bytes)
{
    uint64_t bytes = 0;
    size_t i = 0;

    /* A batch is mostly one queue's: counted a run at a time, since adds
     * per packet to one counter each wait for the previous one's store. */
    while (i < n_sent) {
        unsigned int q = queues[i] < s->n_queues ? queues[i]
                                                 : s->n_queues - 1;
        uint64_t run_bytes = 0;
        size_t start = i;

        do {
            run_bytes += lens[i++];
        } while (i < n_sent && queues[i] == queues[start]);
        s->q[q].c.tx_packets += i - start;
        s->q[q].c.tx_bytes += run_bytes;
        bytes += run_bytes;
    }
    *sent_bytes = bytes + (uint64_t) n_sent * AWAFS_WIRE_OVERHEAD;
    if (n_sent == n) {
        return 0;
    }
    return awafs_sched_enqueue_burst(s, queues + n_sent, pkts + n_sent,
                                     lens + n_sent, ecn ? ecn + n_sent : NULL,
                                     n - n_sent, now, victims);
}

/* Appends to 'pkts' (holding '*n' of 'max') the packets of queue 'q' from
 * its 'skip'th, while 'budget' lasts; with 'aged', only those queued more
 * than the guard's time before 'now'.  Records the run.  Returns false
 * once the budget or 'max' is exhausted. */
static inline bool
peek_queue(struct awafs_sched *s, uint32_t q, uint32_t skip, bool aged,
           uint32_t now, void **pkts, size_t max, size_t *np,
           int64_t *budgetp)
{
    const struct sched_queue *queue = &s->q[q];
    int64_t budget = *budgetp;
    uint32_t marks = 0;
    uint64_t bytes = 0;
    size_t n = *np;
    bool more = true;
    uint32_t j;

    for (j = skip; j < queue->count; j++) {
        const struct sched_slot *slot =
            &queue->slots[(queue->head + j) & s->mask];

        /* A packet may start while any budget is left, so a large packet
         * never waits for a bucket smaller than itself. */
        if (n >= max || budget <= 0) {
            more = false;
            break;
        }
        if (aged && (uint32_t) (now - slot->ts) <= s->max_wait) {
            break;
        }
        budget -= slot->len + AWAFS_WIRE_OVERHEAD;
        bytes += slot->len;
        marks += slot->ce;
        pkts[n++] = slot->pkt;
    }
    if (j > skip) {
        s->runs[s->n_runs++] = (struct sched_run) {
            .q = q, .aged = aged, .n = j - skip, .marks = marks,
            .bytes = bytes,
        };
    }
    *np = n;
    *budgetp = budget;
    return more;
}

size_t
awafs_sched_peek(struct awafs_sched *s, void **pkts, size_t max,
                 int64_t byte_budget, uint32_t now)
{
    uint32_t skip[AWAFS_MAX_QUEUES] = { 0 };
    size_t n = 0;

    s->n_runs = 0;
    s->peek_now = now;
    if (s->max_wait) {
        /* Heads that waited too long go first, higher queues first. */
        for (uint32_t i = 1; i < s->n_queues; i++) {
            if (!peek_queue(s, i, 0, true, now, pkts, max, &n,
                            &byte_budget)) {
                return n;
            }
            if (s->n_runs && s->runs[s->n_runs - 1].q == i) {
                skip[i] = s->runs[s->n_runs - 1].n;
            }
        }
    }
    for (uint32_t i = 0; i < s->n_queues; i++) {
        if (!peek_queue(s, i, skip[i], false, now, pkts, max, &n,
                        &byte_budget)) {
            break;
        }
    }
    return n;
}

/* Removes the 'n' packets at the head of queue 'q' into its counters
 * 'tx' (sent) or 'flush' (freed unsent); returns their bytes.  'run', if
 * nonnull, is the peek's run that starts there: its totals serve when all
 * of it goes. */
static uint64_t
remove_head(struct awafs_sched *s, uint32_t q, uint32_t n, bool sent,
            const struct sched_run *run)
{
    struct sched_queue *queue = &s->q[q];
    uint64_t bytes = 0, marks = 0;

    if (run && run->n == n) {
        bytes = run->bytes;
        marks = run->marks;
    } else {
        for (uint32_t j = 0; j < n; j++) {
            const struct sched_slot *slot =
                &queue->slots[(queue->head + j) & s->mask];

            bytes += slot->len;
            marks += slot->ce;
        }
    }
    if (sent && n) {
        /* The run's first packet waited longest. */
        uint32_t waited = s->peek_now - queue->slots[queue->head].ts;

        if (waited > queue->c.sojourn_max && waited < 1u << 31) {
            queue->c.sojourn_max = waited;
        }
    }
    queue->head = (queue->head + n) & s->mask;
    queue->count -= n;
    queue->c.backlog_bytes -= bytes;
    s->backlog -= n;
    if (sent) {
        queue->c.tx_packets += n;
        queue->c.tx_bytes += bytes;
        queue->c.ecn_marks += marks;
        if (run && run->aged) {
            queue->c.aged_packets += n;
        }
    } else {
        queue->c.flush_packets += n;
        queue->c.flush_bytes += bytes;
    }
    return bytes;
}

uint64_t
awafs_sched_commit(struct awafs_sched *s, size_t n)
{
    uint64_t bytes = 0;

    for (uint32_t i = 0; i < s->n_runs && n; i++) {
        const struct sched_run *run = &s->runs[i];
        uint32_t k = run->n < n ? run->n : n;

        bytes += remove_head(s, run->q, k, true, run)
                 + (uint64_t) k * AWAFS_WIRE_OVERHEAD;
        n -= k;
    }
    s->n_runs = 0;
    set_backlog(s, s->backlog);
    return bytes;
}

size_t
awafs_sched_flush(struct awafs_sched *s, void **pkts, size_t max)
{
    size_t n = 0;

    for (uint32_t i = 0; i < s->n_queues && n < max; i++) {
        struct sched_queue *queue = &s->q[i];
        uint32_t k = queue->count < max - n ? queue->count : max - n;

        for (uint32_t j = 0; j < k; j++) {
            pkts[n++] = queue->slots[(queue->head + j) & s->mask].pkt;
        }
        remove_head(s, i, k, false, NULL);
    }
    s->n_runs = 0;
    set_backlog(s, s->backlog);
    return n;
}

uint32_t
awafs_sched_backlog(const struct awafs_sched *s)
{
    struct awafs_sched *rw = (struct awafs_sched *) s;
    uint32_t backlog;

    awafs_atomic_read(&rw->backlog_shared, &backlog, memory_order_relaxed);
    return backlog;
}

void
awafs_sched_get_queue_stats(const struct awafs_sched *s, unsigned int q,
                            struct awafs_queue_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    if (q < s->n_queues) {
        const struct sched_queue *queue = &s->q[q];

        stats->tx_packets = queue->c.tx_packets;
        stats->tx_bytes = queue->c.tx_bytes;
        stats->drop_packets = queue->c.drop_packets;
        stats->drop_bytes = queue->c.drop_bytes;
        stats->flush_packets = queue->c.flush_packets;
        stats->flush_bytes = queue->c.flush_bytes;
        stats->ecn_marks = queue->c.ecn_marks;
        stats->aged_packets = queue->c.aged_packets;
        stats->sojourn_max = queue->c.sojourn_max;
        stats->backlog_packets = queue->count;
        stats->backlog_bytes = queue->c.backlog_bytes;
        stats->enq_packets = (stats->tx_packets + stats->drop_packets
                              + stats->flush_packets
                              + stats->backlog_packets);
        stats->enq_bytes = (stats->tx_bytes + stats->drop_bytes
                            + stats->flush_bytes + stats->backlog_bytes);
    }
}

/* ---- Token bucket ---- */

void
awafs_tb_init(struct awafs_tb *tb, uint64_t rate_bytes, uint64_t burst,
              uint64_t hz, uint64_t now)
{
    tb->rate = rate_bytes;
    tb->hz = hz ? hz : 1;
    tb->tokens = INT64_MAX;     /* Full: awafs_tb_set_burst() caps it. */
    tb->last = now;
    tb->frac = 0;
    awafs_tb_set_burst(tb, burst);
}

void
awafs_tb_set_burst(struct awafs_tb *tb, uint64_t burst)
{
    tb->burst = burst < AWAFS_TB_MAX_BURST ? burst : AWAFS_TB_MAX_BURST;
    if (tb->tokens > (int64_t) tb->burst) {
        tb->tokens = tb->burst;
    }
    /* Once per configuration, so floating point is fine here. */
    tb->full_ticks = tb->rate
                     ? (uint64_t) ((double) tb->hz
                                   * (tb->burst + AWAFS_TB_MAX_DEBT)
                                   / tb->rate) + 1
                     : 0;
}

uint64_t
awafs_burst_for_gap(uint64_t rate, uint64_t gap_us, uint64_t min_us,
                    uint64_t max_us)
{
    gap_us = gap_us < min_us ? min_us : gap_us > max_us ? max_us : gap_us;
    /* Exact below about 2^44 bytes a second for gaps up to a second. */
    return rate / 1000000 * gap_us + rate % 1000000 * gap_us / 1000000;
}

void
awafs_gaps_sum(struct awafs_gaps *sum, const struct awafs_gaps *g)
{
    for (size_t b = 0; b < AWAFS_GAP_BUCKETS; b++) {
        sum->n[b] += g->n[b];
    }
}

uint64_t
awafs_gaps_longest(const struct awafs_gaps *now,
                   const struct awafs_gaps *before)
{
    for (size_t b = AWAFS_GAP_BUCKETS; b-- > 0;) {
        if (now->n[b] > before->n[b]) {
            return b ? 1ULL << b : 0;
        }
    }
    return 0;
}

/* Fills the bucket to 'burst', dropping the fraction of a byte that only
 * counts while the bucket is not full. */
static void
tb_fill(struct awafs_tb *tb)
{
    tb->tokens = tb->burst;
    tb->frac = 0;
}

int64_t
awafs_tb_budget(struct awafs_tb *tb, uint64_t now)
{
    if (!tb->rate) {
        return INT64_MAX;
    }
    if (now > tb->last) {
        uint64_t ticks = now - tb->last;

        tb->last = now;
        if (ticks >= tb->full_ticks) {
            /* Past 'full_ticks' the bucket is full whatever its debt. */
            tb_fill(tb);
        } else {
            /* Credit in 1/hz bytes: below 'full_ticks', ticks x rate is at
             * most hz x (burst + AWAFS_TB_MAX_DEBT) + rate, and 'frac' is
             * below hz, so the sum stays within 64 bits.  What is left below
             * one byte stays in 'frac', so that frequent refills lose
             * nothing. */
            uint64_t credit = ticks * tb->rate + tb->frac;
            uint64_t added = credit / tb->hz;

            tb->frac = credit - added * tb->hz;
            if (added >= (uint64_t) (tb->burst - tb->tokens)) {
                tb_fill(tb);
            } else {
                tb->tokens += (int64_t) added;
            }
        }
    }
    return tb->tokens;
}

bool
awafs_tb_allows(struct awafs_tb *tb, uint64_t now, uint64_t bytes)
{
    int64_t budget = awafs_tb_budget(tb, now);

    /* Signed: a bucket below zero allows nothing. */
    return budget >= 0 && (uint64_t) budget >= bytes;
}

void
awafs_tb_consume(struct awafs_tb *tb, uint64_t bytes)
{
    if (tb->rate) {
        tb->tokens -= (int64_t) bytes;
    }
}

/* ---- Byte-free segments ---- */

void
awafs_byte_free_init(struct awafs_tb *budget, uint64_t rate, uint64_t hz,
                     uint64_t now)
{
    if (!rate) {
        rate = AWAFS_UNKNOWN_PORT_RATE;
    }
    awafs_tb_init(budget, rate / AWAFS_BYTE_FREE_SHARE ? rate
                  / AWAFS_BYTE_FREE_SHARE : 1, AWAFS_BYTE_FREE_BURST, hz, now);
}

unsigned int
awafs_byte_free_queue(struct awafs_tb *budget, uint64_t now, uint32_t len,
                      unsigned int n_queues, uint64_t *over)
{
    if (awafs_tb_allows(budget, now, len)) {
        awafs_tb_consume(budget, len);
        return 0;
    }
    (*over)++;
    return n_queues ? n_queues - 1 : 0;
}

/* ---- ECN ---- */

static uint16_t
csum_update16(uint16_t csum, uint16_t old, uint16_t new)
{
    /* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'). */
    uint32_t sum = (uint16_t) ~csum + (uint16_t) ~old + new;

    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return ~sum;
}

bool
awafs_ecn_set_ce(uint8_t *frame, size_t len, const struct awafs_hdr *h)
{
    uint8_t version = awafs_ecn_ip_version(h);
    uint8_t *ip = frame + awafs_ecn_l3_ofs(h);

    if (!awafs_ecn_capable(frame, len, h)) {
        return false;       /* Not IP, too short, not ECT, or already CE. */
    }
    if (version == 4) {
        uint16_t old = awafs_rd16(ip);
        uint16_t new, csum;

        ip[1] |= 3;
        new = awafs_rd16(ip);
        csum = awafs_rd16(ip + 10);
        csum = csum_update16(csum, old, new);
        ip[10] = csum >> 8;
        ip[11] = csum;
    } else {
        /* Traffic class spans bytes 0 and 1; ECN is bits 4-5 of byte 1. */
        ip[1] |= 3 << 4;
    }
    return true;
}
