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
 * share one buffer limit, a token bucket, and ECN marking.
 *
 * One thread at a time calls everything here except awafs_sched_backlog()
 * (the datapath holds a per-port lock); the backlog is also kept in an atomic
 * so that idle ports can be skipped without that lock. */

#include "awafs.h"
#include "awafs-private.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct sched_slot {
    void *pkt;
    uint32_t len;
};

/* Per-queue counters, kept to the minimum the fast path must update;
 * awafs_sched_get_queue_stats() derives the rest. */
struct sched_counters {
    uint64_t tx_packets, tx_bytes;
    uint64_t drop_packets, drop_bytes;
    uint64_t ecn_marks;
    uint64_t backlog_bytes;
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
    atomic_uint backlog_shared; /* Copy of 'backlog' for lock-free reads. */
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
    s = calloc(1, sizeof *s);
    if (!s) {
        return NULL;
    }
    cap = awafs_pow2_at_least(limit);
    s->n_queues = n_queues;
    s->limit = limit;
    s->mask = cap - 1;
    atomic_init(&s->backlog_shared, 0);
    for (uint32_t i = 0; i < n_queues; i++) {
        s->q[i].slots = calloc(cap, sizeof *s->q[i].slots);
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
            free(s->q[i].slots);
        }
        free(s);
    }
}

static void
set_backlog(struct awafs_sched *s, uint32_t backlog)
{
    s->backlog = backlog;
    atomic_store_explicit(&s->backlog_shared, backlog, memory_order_relaxed);
}

/* Appends 'pkt' to queue 'q', or returns the packet to drop (see
 * awafs_sched_enqueue()); updates 's->backlog' but not its shared copy. */
static inline void *
enqueue__(struct awafs_sched *s, unsigned int q, void *pkt, uint32_t len)
{
    struct sched_queue *queue;
    void *victim = NULL;

    if (q >= s->n_queues) {
        q = s->n_queues - 1;
    }
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
            s->q[q].c.drop_packets++;
            s->q[q].c.drop_bytes += len;
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
    queue = &s->q[q];
    queue->slots[(queue->head + queue->count) & s->mask] =
        (struct sched_slot) { .pkt = pkt, .len = len };
    queue->count++;
    queue->c.backlog_bytes += len;
    s->backlog++;
    return victim;
}

void *
awafs_sched_enqueue(struct awafs_sched *s, unsigned int q, void *pkt,
                    uint32_t len)
{
    void *victim = enqueue__(s, q, pkt, len);

    set_backlog(s, s->backlog);
    return victim;
}

size_t
awafs_sched_enqueue_burst(struct awafs_sched *s, const uint8_t *queues,
                          void **pkts, const uint32_t *lens, size_t n,
                          void **victims)
{
    size_t n_victims = 0;

    for (size_t i = 0; i < n; i++) {
        void *victim = enqueue__(s, queues[i], pkts[i], lens[i]);

        if (victim) {
            victims[n_victims++] = victim;
        }
    }
    set_backlog(s, s->backlog);
    return n_victims;
}

size_t
awafs_sched_peek(const struct awafs_sched *s, void **pkts, size_t max,
                 int64_t byte_budget)
{
    size_t n = 0;

    for (uint32_t i = 0; i < s->n_queues && n < max; i++) {
        const struct sched_queue *queue = &s->q[i];

        for (uint32_t j = 0; j < queue->count && n < max; j++) {
            const struct sched_slot *slot =
                &queue->slots[(queue->head + j) & s->mask];

            /* A packet may start while any budget is left, so a large
             * packet never waits for a bucket smaller than itself. */
            if (byte_budget <= 0) {
                return n;
            }
            byte_budget -= slot->len;
            pkts[n++] = slot->pkt;
        }
    }
    return n;
}

uint64_t
awafs_sched_commit(struct awafs_sched *s, size_t n)
{
    uint64_t bytes = 0;

    for (uint32_t i = 0; i < s->n_queues && n; i++) {
        struct sched_queue *queue = &s->q[i];
        uint64_t qbytes = 0;
        uint32_t k = queue->count < n ? queue->count : n;

        for (uint32_t j = 0; j < k; j++) {
            qbytes += queue->slots[(queue->head + j) & s->mask].len;
        }
        queue->head = (queue->head + k) & s->mask;
        queue->count -= k;
        queue->c.tx_packets += k;
        queue->c.tx_bytes += qbytes;
        queue->c.backlog_bytes -= qbytes;
        s->backlog -= k;
        bytes += qbytes;
        n -= k;
    }
    set_backlog(s, s->backlog);
    return bytes;
}

uint32_t
awafs_sched_backlog(const struct awafs_sched *s)
{
    struct awafs_sched *rw = (struct awafs_sched *) s;

    return atomic_load_explicit(&rw->backlog_shared, memory_order_relaxed);
}

void
awafs_sched_count_ecn_mark(struct awafs_sched *s, unsigned int q)
{
    if (q < s->n_queues) {
        s->q[q].c.ecn_marks++;
    }
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
        stats->ecn_marks = queue->c.ecn_marks;
        stats->backlog_packets = queue->count;
        stats->backlog_bytes = queue->c.backlog_bytes;
        /* Every packet that arrived was sent, is queued or was dropped. */
        stats->enq_packets = (stats->tx_packets + stats->backlog_packets
                              + stats->drop_packets);
        stats->enq_bytes = (stats->tx_bytes + stats->backlog_bytes
                            + stats->drop_bytes);
    }
}

/* ---- Token bucket ---- */

#define MIN_I64(a, b) ((a) < (b) ? (a) : (b))

void
awafs_tb_init(struct awafs_tb *tb, uint64_t rate_bytes, uint64_t burst,
              uint64_t hz, uint64_t now)
{
    tb->rate = rate_bytes;
    tb->burst = burst;
    tb->hz = hz ? hz : 1;
    tb->tokens = burst;
    tb->last = now;
}

int64_t
awafs_tb_budget(struct awafs_tb *tb, uint64_t now)
{
    uint64_t added;

    if (!tb->rate) {
        return INT64_MAX;
    }
    if (now > tb->last) {
        added = (unsigned __int128) (now - tb->last) * tb->rate / tb->hz;
        /* Advance 'last' only when whole bytes were added, so slow rates
         * and frequent calls do not lose the fractions. */
        if (added) {
            tb->tokens = added >= tb->burst ? (int64_t) tb->burst
                         : MIN_I64(tb->tokens + (int64_t) added,
                                   (int64_t) tb->burst);
            tb->last = now;
        }
    }
    return tb->tokens;
}

void
awafs_tb_consume(struct awafs_tb *tb, uint64_t bytes)
{
    if (tb->rate) {
        tb->tokens -= (int64_t) bytes;
    }
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
    uint8_t *ip = frame + h->l3_ofs;

    if (h->ip_version == 4 && (size_t) h->l3_ofs + 20 <= len) {
        uint16_t old = ip[0] << 8 | ip[1];
        uint16_t new, csum;

        if (!(ip[1] & 3) || (ip[1] & 3) == 3) {
            return false;       /* Not ECT, or already CE. */
        }
        ip[1] |= 3;
        new = ip[0] << 8 | ip[1];
        csum = ip[10] << 8 | ip[11];
        csum = csum_update16(csum, old, new);
        ip[10] = csum >> 8;
        ip[11] = csum;
        return true;
    } else if (h->ip_version == 6 && (size_t) h->l3_ofs + 40 <= len) {
        /* Traffic class spans bytes 0 and 1; ECN is bits 4-5 of byte 1. */
        uint8_t ecn = (ip[1] >> 4) & 3;

        if (!ecn || ecn == 3) {
            return false;
        }
        ip[1] |= 3 << 4;
        return true;
    }
    return false;
}
