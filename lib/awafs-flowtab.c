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

/* The switch's own count of what each TCP flow has sent, for ports that do
 * not trust end hosts (trust=switch) or check them (trust=verify).
 *
 * A bounded open-addressing table keyed by the 5-tuple.  A message's bytes
 * are counted from TCP sequence numbers (the offset of a segment from the
 * message's first sequence number), so retransmissions are not counted
 * twice.  A message is what the application means by one, even when it is
 * written in several calls or sent in bursts paced by the congestion window
 * (docs/design.md, "Message boundaries").  It ends:
 *
 *   - when its sender acknowledges new data from the peer: a request/response
 *     exchange turned around (the ACK number only moves when the peer sends
 *     data, never during a response);
 *   - after an idle gap longer than 'idle_us' that follows the end of a
 *     write -- a segment with PSH and shorter than the flow's full-sized
 *     ones -- when new data comes.  A sender paused by its congestion
 *     window sent full-sized segments before the pause (Linux also sets
 *     PSH inside long writes, every half window), and a retransmission
 *     after a timeout continues its message;
 *   - with FIN or RST;
 *   - in verify mode, with a host completion whose size matches the
 *     switch's own count.
 *
 * An idle gap is seen when the flow's next segment arrives, or by
 * awafs_flowtab_sweep(), which the datapath calls periodically, once the
 * flow has been quiet for longer than a retransmission timeout too.  A
 * connection that sent FIN or RST stays in the table, closed, so that a
 * segment retransmitted after its FIN starts no new message; a SYN on the
 * same 5-tuple reopens it.
 *
 * Tardy flows (TFS, seed 004): a data segment that starts before the
 * highest sequence number the flow has sent is a retransmission, and the
 * flow is tardy from then until its message ends: a flow here is a message,
 * as for the thresholds, so that the next response on a persistent
 * connection starts as any other, and a connection that once lost a packet
 * does not keep queue 0 for its lifetime.  With a tardy limit
 * set (awafs_flowtab_set_tardy()), a tardy flow's segments go to queue 0
 * while its message has sent less than the limit (TFS+; UINT64_MAX: always,
 * TFS), so that a flow that lost packets catches up.  A segment reordered
 * on the way looks the same as a retransmission: the switch keeps no
 * record of which sequence ranges it saw, only the highest.
 *
 * Timeouts and aging (Karuna, seed 003): a segment that sends a message's
 * data again after its flow was silent for at least 'rto_min_us' is a
 * retransmission timeout.  A fast retransmit (or a tail loss probe) follows
 * the flow's previous segment within about an RTT: the sender is still
 * clocked by ACKs, while a timeout waits out a retransmission timer, never
 * shorter than Linux's 200 ms minimum by default.  With aging on, a message
 * ages at every kappa-th timeout, kappa uniform in [kappa_min, kappa_max]
 * per flow (from its keyed hash): a message of known size is split again by
 * what it has left to send (the caller, awafs_karuna_classify()); a message
 * of unknown size restarts at the top of the sieve, its count from zero
 * (again at its next kappa timeouts if it starves again), so that its size
 * is no longer known and its end not reported (partial).
 *
 * A lookup probes at most AWAFS_FLOWTAB_PROBES slots; when they are all
 * taken, the least recently seen of them is evicted (and counted), so the
 * table never grows and never allocates.  One thread at a time. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <string.h>

#define AWAFS_FLOWTAB_PROBES 8
/* The sweep ends a message only after this much silence: longer than a
 * retransmission timeout (RFC 6298's initial 1 s; Linux's minimum is
 * 200 ms), which the next segment would continue the message after. */
#define AWAFS_FLOWTAB_QUIET_US 1000000
#define AWAFS_TCP_MAX_OPTIONS 40

/* A message's byte count saturates here (1 TB): 40 bits keep an entry in
 * one 64-byte cache line. */
#define AWAFS_FLOWTAB_MAX_BYTES ((UINT64_C(1) << 40) - 1)

struct flow_entry {
    struct awafs_flow_key key;
    bool used : 1;
    bool closed : 1;            /* Saw FIN or RST; late segments ignored. */
    bool psh : 1;               /* The segment that reached 'end' ended a
                                 * write: PSH, and shorter than 'full'. */
    bool whole : 1;             /* The switch saw the message's first byte:
                                 * after the SYN or the previous message. */
    bool tardy : 1;             /* Its message sent data again. */
    uint8_t queue : 3;          /* Lowest-priority queue the message used. */
    uint8_t bytes_hi;           /* The message's bytes up to 'end': */
    uint16_t full;              /* Payload of a full-sized segment. */
    uint8_t timeouts : 4;       /* Its message's timeouts, saturating at
                                 * AWAFS_FLOWTAB_MAX_KAPPA. */
    uint8_t type : 2;           /* Its message's enum awafs_flow_type. */
    bool aged : 1;              /* Its message aged at least once. */
    uint32_t bytes_lo;          /* bytes_hi << 32 | bytes_lo (msg_bytes()).
                                 * Not a sequence-number difference, which
                                 * wraps after 2^31 bytes. */
    uint32_t end;               /* Highest end sequence number seen. */
    uint32_t ack;               /* Latest ACK number. */
    int64_t last_us;
};

struct awafs_flowtab {
    uint32_t mask;
    uint32_t hash_key[10];      /* Secret: 5-tuples cannot be chosen to
                                 * collide with a victim's. */
    uint32_t sweep;             /* Next slot awafs_flowtab_sweep() checks. */
    uint64_t tardy_limit;       /* 0: tardy flows get no priority. */
    int64_t rto_min_us;         /* Silence before a timeout. */
    uint8_t kappa_min;          /* 0: no aging. */
    uint8_t kappa_span;         /* kappa_max - kappa_min + 1. */
    struct awafs_flowtab_stats stats;
    struct flow_entry slots[];
};

_Static_assert(sizeof(struct flow_entry) == 64, "one entry, one cache line");

/* The 5-tuple is hashed as five 64-bit words, keyed (awafs_keyed_hash()). */
_Static_assert(sizeof(struct awafs_flow_key) <= 40,
               "hash_key() reads the 5-tuple as five 64-bit words");

static uint32_t
hash_key(const struct awafs_flowtab *t, const struct awafs_flow_key *k)
{
    uint64_t w[5] = { 0 };

    memcpy(w, k, sizeof *k);
    return awafs_keyed_hash(t->hash_key, w, 5);
}

uint32_t
awafs_flowtab_slot(const struct awafs_flowtab *t,
                   const struct awafs_flow_key *k)
{
    return hash_key(t, k) & t->mask;
}

size_t
awafs_flowtab_memsize(uint32_t capacity)
{
    return sizeof(struct awafs_flowtab)
           + (size_t) awafs_pow2_at_least(capacity)
             * sizeof(struct flow_entry);
}

struct awafs_flowtab *
awafs_flowtab_create(uint32_t capacity, uint64_t seed)
{
    struct awafs_flowtab *t;

    if (capacity < AWAFS_FLOWTAB_PROBES || capacity > (1u << 24)) {
        return NULL;
    }
    t = awafs_zalloc(awafs_flowtab_memsize(capacity));
    if (t) {
        t->mask = awafs_pow2_at_least(capacity) - 1;
        awafs_hash_key_init(t->hash_key, 10, seed);
        t->rto_min_us = AWAFS_FLOWTAB_RTO_MIN_US;
    }
    return t;
}

void
awafs_flowtab_destroy(struct awafs_flowtab *t)
{
    awafs_free(t);
}

void
awafs_flowtab_set_tardy(struct awafs_flowtab *t, uint64_t limit)
{
    t->tardy_limit = limit;
}

bool
awafs_flowtab_set_aging(struct awafs_flowtab *t, int64_t rto_min_us,
                        unsigned int kappa_min, unsigned int kappa_max)
{
    if (rto_min_us <= 0 || kappa_min > kappa_max
        || kappa_max > AWAFS_FLOWTAB_MAX_KAPPA || (kappa_max && !kappa_min)) {
        return false;
    }
    t->rto_min_us = rto_min_us;
    t->kappa_min = kappa_min;
    t->kappa_span = kappa_max - kappa_min + 1;
    return true;
}

void
awafs_flowtab_get_stats(const struct awafs_flowtab *t,
                        struct awafs_flowtab_stats *stats)
{
    *stats = t->stats;
}

static uint64_t
msg_bytes(const struct flow_entry *e)
{
    return (uint64_t) e->bytes_hi << 32 | e->bytes_lo;
}

static void
set_msg_bytes(struct flow_entry *e, uint64_t bytes)
{
    if (bytes > AWAFS_FLOWTAB_MAX_BYTES) {
        bytes = AWAFS_FLOWTAB_MAX_BYTES;
    }
    e->bytes_hi = bytes >> 32;
    e->bytes_lo = (uint32_t) bytes;
}

/* Clears what 'e' knows of its message beyond its bytes: the queue it
 * used, whether it retransmitted, its timeouts and aging. */
static void
clear_message_state(struct flow_entry *e)
{
    e->queue = 0;
    e->tardy = false;
    e->timeouts = 0;
    e->aged = false;
}

/* Ends the message of 'e' and returns its size; 0 if it had no bytes, or
 * if the switch did not see it start (a flow first seen without its SYN:
 * adopted mid-stream, evicted and seen again, or a lone spoofed segment),
 * whose size it does not know -- counted as partial. */
static uint64_t
take_message(struct awafs_flowtab *t, struct flow_entry *e)
{
    uint64_t size = msg_bytes(e);
    bool whole = e->whole;

    e->whole = true;            /* The next message starts at 'end'. */
    clear_message_state(e);
    e->type = AWAFS_FLOW_UNKNOWN;
    if (!size) {
        return 0;
    }
    set_msg_bytes(e, 0);
    if (!whole) {
        t->stats.partial++;
        return 0;
    }
    t->stats.completions++;
    return size;
}

/* Ends the message of 'e', reporting its size in 'r' if it had bytes. */
static void
end_message(struct awafs_flowtab *t, struct flow_entry *e,
            struct awafs_flow_result *r)
{
    enum awafs_flow_type type = e->type;
    uint64_t size = take_message(t, e);

    if (size) {
        r->completed_type[r->n_completed] = type;
        r->completed[r->n_completed++] = size;
    }
}

static struct flow_entry *
lookup(struct awafs_flowtab *t, const struct awafs_flow_key *key,
       uint32_t *hash, bool *is_new)
{
    uint32_t h = hash_key(t, key);
    struct flow_entry *victim = NULL;

    *hash = h;
    for (uint32_t i = 0; i < AWAFS_FLOWTAB_PROBES; i++) {
        struct flow_entry *e = &t->slots[(h + i) & t->mask];

        if (!e->used) {
            if (!victim || victim->used) {
                victim = e;         /* The first free slot. */
            }
            continue;
        }
        if (!memcmp(&e->key, key, sizeof *key)) {
            *is_new = false;
            return e;
        }
        if (!victim || (victim->used && e->last_us < victim->last_us)) {
            victim = e;
        }
    }
    if (victim->used) {
        t->stats.evictions++;
        if (victim->closed) {
            t->stats.flows++;
        }
    } else {
        t->stats.flows++;
    }
    *is_new = true;
    return victim;
}

/* Counts a retransmission timeout of the message of 'e', whose key hashes
 * to 'hash', and ages the message at every kappa-th.  Returns true if that
 * restarted the message's count (unknown size). */
static bool
timeout(struct awafs_flowtab *t, struct flow_entry *e, uint32_t hash)
{
    unsigned int kappa;

    t->stats.timeouts++;
    if (e->timeouts < AWAFS_FLOWTAB_MAX_KAPPA) {
        e->timeouts++;
    }
    if (!t->kappa_min || e->type == AWAFS_FLOW_DEADLINE) {
        return false;
    }
    /* The high bits: the low ones chose the flow's slot. */
    kappa = t->kappa_min + (hash >> 16) % (t->kappa_span);
    if (e->timeouts < kappa) {
        return false;
    }
    e->timeouts = 0;
    e->aged = true;
    t->stats.aged_flows++;
    if (e->type == AWAFS_FLOW_SIZED) {
        return false;           /* Split again by its caller. */
    }
    set_msg_bytes(e, 0);
    e->whole = false;
    e->queue = 0;
    return true;
}

/* Whether the message of 'e' ended before segment 'h': see the file's
 * comment. */
static bool
ended_before(const struct flow_entry *e, const struct awafs_hdr *h,
             bool host_reports, int64_t now_us, int64_t idle_us)
{
    if (!msg_bytes(e)) {
        return false;
    }
    return ((h->tcp_flags & AWAFS_TCP_ACK)
            && (int32_t) (h->ack - e->ack) > 0)
           || (e->psh && now_us - e->last_us > idle_us && h->payload_len
               && (int32_t) (h->seq - e->end) >= 0)
           || (host_reports && awafs_hdr_counts_prev(h)
               && h->prev_end == e->end
               && h->prev_size == msg_bytes(e));
}

/* awafs_flowtab_update() without the queue.  Returns the flow's entry,
 * or NULL for a late segment of a finished connection. */
static struct flow_entry *
count_segment(struct awafs_flowtab *t, const struct awafs_flow_key *key,
              const struct awafs_hdr *h, bool host_reports,
              int64_t now_us, int64_t idle_us, struct awafs_flow_result *r)
{
    bool is_new;
    uint32_t hash;
    struct flow_entry *e = lookup(t, key, &hash, &is_new);
    uint32_t seq = h->seq;
    uint32_t end = seq + h->payload_len;
    int64_t silent_us;

    r->n_completed = 0;
    if (is_new) {
        e->key = *key;
        e->used = true;
        e->closed = false;
        e->psh = false;
        e->whole = false;
        clear_message_state(e);
        e->type = AWAFS_FLOW_UNKNOWN;
        e->full = 0;
        e->end = seq;
        set_msg_bytes(e, 0);
    } else if (e->closed) {
        if (!(h->tcp_flags & AWAFS_TCP_SYN)) {
            /* A late segment of a finished connection. */
            e->last_us = now_us;
            r->bytes_sent = 0;
            return NULL;
        }
        e->closed = false;
        t->stats.flows++;
    } else if (ended_before(e, h, host_reports, now_us, idle_us)) {
        /* This segment belongs to the next message. */
        end_message(t, e, r);
        if ((int32_t) (seq - e->end) > 0) {
            e->end = seq;
        }
    }
    silent_us = now_us - e->last_us;
    e->last_us = now_us;
    e->ack = h->ack;
    if (h->has_karuna && h->payload_len) {
        e->type = awafs_karuna_type(h->karuna);
    }

    if (h->tcp_flags & AWAFS_TCP_SYN) {
        /* The SYN takes one sequence number; data starts after it.  Its MSS
         * minus the most TCP options take is a lower bound of what a
         * full-sized segment carries. */
        e->end = seq + 1;
        set_msg_bytes(e, 0);
        e->whole = true;
        clear_message_state(e);
        e->full = (h->mss > AWAFS_TCP_MAX_OPTIONS
                   ? h->mss - AWAFS_TCP_MAX_OPTIONS : 0);
        r->bytes_sent = 0;
        return e;
    }
    if (h->payload_len > e->full) {
        e->full = h->payload_len > UINT16_MAX ? UINT16_MAX : h->payload_len;
    }
    /* The segment's offset in the message: the bytes up to 'end', plus its
     * distance beyond 'end' (a gap) or minus it (data sent again). */
    int64_t ofs = (int64_t) msg_bytes(e) + (int32_t) (seq - e->end);

    /* Data of this message sent again makes it tardy; data of an earlier
     * message (a late retransmission after the message ended) does not. */
    if (h->payload_len && !is_new && (int32_t) (seq - e->end) < 0
        && ofs + h->payload_len > 0) {
        if (!e->tardy) {
            e->tardy = true;
            t->stats.tardy_flows++;
        }
        if (silent_us >= t->rto_min_us && timeout(t, e, hash)) {
            /* Restarted: its count starts again after this segment. */
            ofs = (int32_t) (seq - e->end);
        }
    }

    if (ofs < 0) {
        /* A retransmission from before this message: counts as its
         * start. */
        r->bytes_sent = 0;
    } else {
        r->bytes_sent = ofs;
        if ((int32_t) (end - e->end) > 0) {
            set_msg_bytes(e, msg_bytes(e) + (uint32_t) (end - e->end));
            e->end = end;
            e->psh = (h->tcp_flags & AWAFS_TCP_PSH)
                     && h->payload_len < e->full;
        }
    }

    if (h->tcp_flags & (AWAFS_TCP_FIN | AWAFS_TCP_RST)) {
        end_message(t, e, r);
        e->closed = true;
        t->stats.flows--;
    } else if (host_reports && awafs_hdr_counts_completion(h)
               && h->flow_size == msg_bytes(e)) {
        /* An end host's completion that agrees with what the switch saw. */
        end_message(t, e, r);
    }
    return e;
}

void
awafs_flowtab_update(struct awafs_flowtab *t,
                     const struct awafs_flow_key *key,
                     const struct awafs_hdr *h, bool host_reports,
                     int64_t now_us, int64_t idle_us,
                     const struct awafs_thresholds *thr,
                     struct awafs_flow_result *r)
{
    struct flow_entry *e = count_segment(t, key, h, host_reports, now_us,
                                         idle_us, r);
    unsigned int q;

    if (!e) {
        r->queue = 0;
        r->type = AWAFS_FLOW_UNKNOWN;
        r->aged = false;
        return;
    }
    r->type = e->type;
    r->aged = e->aged;
    if (e->tardy && r->bytes_sent < t->tardy_limit) {
        /* Above its message's queue on purpose: what it lost first. */
        t->stats.tardy_packets++;
        r->queue = 0;
        return;
    }
    /* A message never moves up: when the thresholds rise (or a segment is
     * sent again), its later segments would overtake its own queued ones.
     * Verify mode believes the host's count when it is the larger. */
    q = awafs_classify(thr, (host_reports && h->bytes_sent > r->bytes_sent
                             ? h->bytes_sent : r->bytes_sent));
    if (q < e->queue) {
        q = e->queue;
        t->stats.held_down++;
    }
    if (msg_bytes(e)) {
        e->queue = q;           /* Not if this segment ended its message. */
    }
    r->queue = q;
}

size_t
awafs_flowtab_sweep(struct awafs_flowtab *t, uint32_t n, int64_t now_us,
                    int64_t idle_us, uint64_t *sizes, uint8_t *types)
{
    int64_t quiet = idle_us > AWAFS_FLOWTAB_QUIET_US ? idle_us
                    : AWAFS_FLOWTAB_QUIET_US;
    size_t n_sizes = 0;

    for (uint32_t i = 0; i < n && i <= t->mask; i++) {
        struct flow_entry *e = &t->slots[t->sweep];

        t->sweep = (t->sweep + 1) & t->mask;
        if (e->used && e->psh && now_us - e->last_us > quiet) {
            enum awafs_flow_type type = e->type;
            uint64_t size = take_message(t, e);

            if (size) {
                if (types) {
                    types[n_sizes] = type;
                }
                sizes[n_sizes++] = size;
            }
        }
    }
    return n_sizes;
}

bool
awafs_flow_key_from_frame(const void *frame, size_t len,
                          const struct awafs_hdr *h,
                          struct awafs_flow_key *key)
{
    const uint8_t *p = frame;
    const uint8_t *l3 = p + h->l3_ofs, *l4 = p + h->l4_ofs;

    if (!h->l4_ofs || (size_t) h->l4_ofs + 20 > len) {
        return false;
    }
    memset(key, 0, sizeof *key);
    key->ip_version = h->ip_version;
    if (h->ip_version == 4) {
        memcpy(key->src, l3 + 12, 4);
        memcpy(key->dst, l3 + 16, 4);
    } else {
        memcpy(key->src, l3 + 8, 16);
        memcpy(key->dst, l3 + 24, 16);
    }
    key->sport = (uint16_t) (l4[0] << 8 | l4[1]);
    key->dport = (uint16_t) (l4[2] << 8 | l4[3]);
    return true;
}
