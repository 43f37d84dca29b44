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
 * What the receiver would accept (docs/reliability.md, "Trust that
 * holds").  Every field the table acts on is the sender's to choose, so it
 * acts, as Linux's conntrack window tracking and RFC 5961 do, only on what
 * the flow's receiver would take, from the highest sequence number the
 * switch forwarded, 'end' (the receiver's RCV.NXT once what is in flight
 * arrived):
 *
 *   - a segment more than AWAFS_FLOWTAB_MAX_GAP beyond 'end' is out of the
 *     window: not counted, its flags ignored, sent to the lowest queue;
 *   - a FIN ends the connection only if its segment is contiguous with
 *     'end' (it starts at or before it and reaches it): the receiver takes
 *     a FIN only in sequence;
 *   - a RST only if its sequence number is exactly 'end' (RFC 5961 3.2: one
 *     in the window but not exact draws a challenge ACK);
 *   - a SYN on an open connection that sent data is ignored (RFC 5961 4),
 *     unless the flow was quiet for longer than AWAFS_FLOWTAB_QUIET_US (a
 *     new connection on a 5-tuple whose end the switch missed);
 *   - data of a closed connection goes to the lowest queue unless it lies
 *     within the message its FIN or RST ended (a retransmission of its
 *     tail, which keeps that message's queue);
 *   - a message's size is the smaller of its sequence span and the payload
 *     bytes the switch forwarded in it, so a gap in the sequence numbers
 *     reports no bytes that were never sent;
 *   - a message whose first byte the switch did not see (a flow adopted
 *     mid-stream, evicted under pressure, or a lone forged segment) goes to
 *     the lowest queue until it ends: evicting a flow never promotes it;
 *   - in verify mode a boundary only the host reports ends the message (its
 *     completion is learned) but the next one starts in the queue the
 *     previous one reached: host reports never promote, only the switch's
 *     own boundaries (turnaround, idle gap, FIN and SYN) do;
 *   - a Karuna deadline is not taken on the sender's word: the table types
 *     such a message as one of known size (its declared size) or unknown;
 *   - with a per-source limit set (awafs_flowtab_set_srclimit()),
 *     completions beyond a source's rate are not reported.
 *
 * The table keys flows by a 64-bit SipHash-1-3 of everything that tells
 * two flows apart (the key's addresses, ports, IP version and VLAN IDs),
 * with a secret 128-bit key: the entry stores the hash, not the key, so a
 * lookup compares 8 bytes.  Two flows share an entry only if their hashes
 * collide, with probability 2^-64 per pair for a key nobody knows.
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
#define ETH_HLEN_ 14

/* The largest jump forward of the sequence numbers a segment may make and
 * still be counted: beyond it the segment is out of the window. */
#define AWAFS_FLOWTAB_MAX_GAP (1u << 22)

/* SipHash rounds of the flow key's hash (SipHash-1-3, as Linux's hsiphash
 * on 64-bit hosts). */
#define AWAFS_FLOWTAB_SIP_C 1
#define AWAFS_FLOWTAB_SIP_D 3

/* A message's byte count saturates here (1 TB): 40 bits keep an entry in
 * one 64-byte cache line. */
#define AWAFS_FLOWTAB_MAX_BYTES ((UINT64_C(1) << 40) - 1)

struct flow_entry {
    uint64_t tag;               /* The key's keyed hash (hash_key()). */
    int64_t last_us;
    uint32_t end;               /* Highest end sequence number seen. */
    uint32_t ack;               /* Latest ACK number. */
    uint32_t bytes_lo;          /* bytes_hi << 32 | bytes_lo (msg_bytes()):
                                 * the message's sequence span up to 'end'.
                                 * Not a sequence-number difference, which
                                 * wraps after 2^31 bytes. */
    uint32_t fwd_lo;            /* fwd_hi << 32 | fwd_lo (msg_fwd()): the
                                 * payload bytes forwarded in it. */
    uint32_t last_size;         /* Closed: the span of the message its FIN
                                 * or RST ended (saturating). */
    uint8_t bytes_hi;
    uint8_t fwd_hi;
    uint16_t full;              /* Payload of a full-sized segment. */
    bool used : 1;
    bool closed : 1;            /* Saw FIN or RST; late segments ignored. */
    bool psh : 1;               /* The segment that reached 'end' ended a
                                 * write: PSH, and shorter than 'full'. */
    bool whole : 1;             /* The switch saw the message's first byte:
                                 * after the SYN or the previous message. */
    bool tardy : 1;             /* Its message sent data again. */
    uint8_t queue : 3;          /* Lowest-priority queue the message used
                                 * (closed: the last message's). */
    uint8_t timeouts : 4;       /* Its message's timeouts, saturating at
                                 * AWAFS_FLOWTAB_MAX_KAPPA. */
    uint8_t type : 2;           /* Its message's enum awafs_flow_type. */
    bool aged : 1;              /* Its message aged at least once. */
    bool midstream : 1;         /* The switch did not see its message
                                 * start: the lowest queue. */
    uint8_t sources[2];         /* Its source's buckets (source_buckets()). */
    uint32_t carry;             /* Verify: the bytes of the messages before
                                 * this one since the last boundary the
                                 * switch saw itself (saturating), which
                                 * its classification counts. */
    uint8_t src[16];            /* Source address (limit, weights). */
};

/* A bucket of a budget per source: queue 0's
 * (awafs_flowtab_set_queue0_rate()) or byte-free segments'
 * (awafs_flowtab_set_byte_free_rate()). */
struct source_bucket {
    int64_t tokens;             /* Bytes x 1e6; may go negative. */
    int64_t last_us;
};

struct awafs_flowtab {
    uint32_t mask;
    uint64_t hash_key[2];       /* Secret: 5-tuples cannot be chosen to
                                 * collide with a victim's. */
    struct awafs_srclimit *srclimit;    /* Not owned; NULL: no limit. */
    uint64_t queue0_rate;       /* Bytes per second a source may send in
                                 * queue 0; 0: no limit. */
    uint64_t byte_free_rate;    /* The same for byte-free segments. */
    uint32_t sweep;             /* Next slot awafs_flowtab_sweep() checks. */
    uint64_t tardy_limit;       /* 0: tardy flows get no priority. */
    int64_t rto_min_us;         /* Silence before a timeout. */
    uint8_t kappa_min;          /* 0: no aging. */
    uint8_t kappa_span;         /* kappa_max - kappa_min + 1. */
    struct awafs_flowtab_stats stats;
    /* Last, so that the fields every segment reads share cache lines. */
    struct source_bucket queue0[AWAFS_QUEUE0_SOURCES];
    struct source_bucket byte_free[AWAFS_QUEUE0_SOURCES];
    struct flow_entry slots[];
};

_Static_assert(sizeof(struct flow_entry) == 64, "one entry, one cache line");

_Static_assert(sizeof(struct awafs_flow_key) == 46,
               "the flow key has no padding that hash_key() would read");

static uint64_t
hash_key(const struct awafs_flowtab *t, const struct awafs_flow_key *k)
{
    return awafs_siphash(t->hash_key, k, sizeof *k, AWAFS_FLOWTAB_SIP_C,
                         AWAFS_FLOWTAB_SIP_D);
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
awafs_flowtab_create_keyed(uint32_t capacity, const uint64_t key[2])
{
    struct awafs_flowtab *t;

    if (capacity < AWAFS_FLOWTAB_PROBES || capacity > (1u << 24)) {
        return NULL;
    }
    t = awafs_zalloc(awafs_flowtab_memsize(capacity));
    if (t) {
        t->mask = awafs_pow2_at_least(capacity) - 1;
        t->hash_key[0] = key[0];
        t->hash_key[1] = key[1];
        t->rto_min_us = AWAFS_FLOWTAB_RTO_MIN_US;
    }
    return t;
}

struct awafs_flowtab *
awafs_flowtab_create(uint32_t capacity, uint64_t seed)
{
    uint32_t w[4];
    uint64_t key[2];

    awafs_hash_key_init(w, 4, seed);
    key[0] = (uint64_t) w[0] << 32 | w[1];
    key[1] = (uint64_t) w[2] << 32 | w[3];
    return awafs_flowtab_create_keyed(capacity, key);
}

void
awafs_flowtab_set_srclimit(struct awafs_flowtab *t,
                           struct awafs_srclimit *limit)
{
    t->srclimit = limit;
}

static void
source_buckets_fill(struct source_bucket *buckets)
{
    for (int i = 0; i < AWAFS_QUEUE0_SOURCES; i++) {
        buckets[i].tokens = 0;
        buckets[i].last_us = INT64_MIN;     /* Full at first use. */
    }
}

void
awafs_flowtab_set_queue0_rate(struct awafs_flowtab *t, uint64_t rate)
{
    t->queue0_rate = rate;
    source_buckets_fill(t->queue0);
}

void
awafs_flowtab_set_byte_free_rate(struct awafs_flowtab *t, uint64_t rate)
{
    t->byte_free_rate = rate;
    source_buckets_fill(t->byte_free);
}

/* The two buckets of source address 'src' in each budget per source into
 * 'sources', by a keyed hash, so that no sender can pick an address that
 * shares another's: as awafs_srclimit_allow()'s, a source is refused only
 * when both are empty, so one that shares a bucket with a busy source
 * still gets its rate unless it shares both. */
static void
source_buckets(const struct awafs_flowtab *t, const uint8_t src[16],
               uint8_t sources[2])
{
    uint64_t h = awafs_siphash(t->hash_key, src, 16, AWAFS_FLOWTAB_SIP_C,
                               AWAFS_FLOWTAB_SIP_D);

    sources[0] = h % AWAFS_QUEUE0_SOURCES;
    sources[1] = (h >> 32) % AWAFS_QUEUE0_SOURCES;
}

/* Brings bucket 'b', of 'rate' bytes per second and 'burst' bytes, up to
 * 'now_us'. */
static void
source_refill(struct source_bucket *b, uint64_t rate, int64_t burst,
              int64_t now_us)
{
    burst *= 1000000;
    if (b->last_us == INT64_MIN || now_us - b->last_us >= 1000000) {
        b->tokens = burst;      /* A second idle refills any bucket. */
        b->last_us = now_us;
    } else if (now_us > b->last_us) {
        /* Bytes x 1e6: bytes per second times microseconds. */
        b->tokens += (now_us - b->last_us) * (int64_t) rate;
        b->tokens = b->tokens < burst ? b->tokens : burst;
        b->last_us = now_us;
    }
}

/* Charges 'bytes' to the source of 'e' in 'buckets' (of 'rate' bytes per
 * second and 'burst' bytes each) at 'now_us'.  Returns false if that
 * source is beyond its rate; a segment may start while any of its budget
 * is left, and the debt is at most a burst. */
static bool
source_charge(struct source_bucket *buckets, uint64_t rate, int64_t burst,
              const struct flow_entry *e, uint32_t bytes, int64_t now_us)
{
    struct source_bucket *a = &buckets[e->sources[0]];
    struct source_bucket *b = &buckets[e->sources[1]];
    int64_t floor = -burst * 1000000;
    int64_t cost = (int64_t) bytes * 1000000;

    source_refill(a, rate, burst, now_us);
    if (b != a) {
        source_refill(b, rate, burst, now_us);
    }
    if (a->tokens <= 0 && b->tokens <= 0) {
        return false;
    }
    a->tokens = a->tokens - cost > floor ? a->tokens - cost : floor;
    if (b != a) {
        b->tokens = b->tokens - cost > floor ? b->tokens - cost : floor;
    }
    return true;
}

/* Whether the segment parsed into 'h' of flow 'e' may go to queue 0 at
 * 'now_us': a byte-free one always (awafs_byte_free_queue() rules them),
 * one with data while its source's budget lasts, charged its frame up to
 * the end of its IP packet (its payload if the parse did not say), so
 * that segments of one byte cost what they take of the link. */
static bool
queue0_ok(struct awafs_flowtab *t, const struct flow_entry *e,
          const struct awafs_hdr *h, int64_t now_us)
{
    if (!t->queue0_rate || !h->payload_len
        || source_charge(t->queue0, t->queue0_rate, AWAFS_QUEUE0_BURST, e,
                         h->ip_end ? h->ip_end : h->payload_len, now_us)) {
        return true;
    }
    t->stats.queue0_limited++;
    return false;
}

/* Charges byte-free segment 'h' of flow 'e' at 'now_us' to its source's
 * byte-free budget, its frame up to the end of its IP packet (the Ethernet
 * minimum if the parse did not say), and sets 'r->byte_free_refused' if
 * that is spent. */
static void
byte_free_charge(struct awafs_flowtab *t, const struct flow_entry *e,
                 const struct awafs_hdr *h, int64_t now_us,
                 struct awafs_flow_result *r)
{
    if (t->byte_free_rate && !h->payload_len
        && !source_charge(t->byte_free, t->byte_free_rate,
                          AWAFS_BYTE_FREE_SOURCE_BURST, e,
                          h->ip_end ? h->ip_end : AWAFS_ETH_MIN_FRAME,
                          now_us)) {
        t->stats.byte_free_limited++;
        r->byte_free_refused = true;
    }
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

static uint64_t
msg_fwd(const struct flow_entry *e)
{
    return (uint64_t) e->fwd_hi << 32 | e->fwd_lo;
}

static void
add_fwd(struct flow_entry *e, uint32_t len)
{
    uint64_t fwd = msg_fwd(e) + len;

    if (fwd > AWAFS_FLOWTAB_MAX_BYTES) {
        fwd = AWAFS_FLOWTAB_MAX_BYTES;
    }
    e->fwd_hi = fwd >> 32;
    e->fwd_lo = (uint32_t) fwd;
}

/* Starts the count of the message of 'e' from nothing. */
static void
reset_count(struct flow_entry *e)
{
    set_msg_bytes(e, 0);
    e->fwd_hi = 0;
    e->fwd_lo = 0;
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

/* Ends the message of 'e' and returns its size: the smaller of its
 * sequence span and the payload bytes forwarded in it.  0 if it had no
 * bytes; if the switch did not see it start (a flow first seen without its
 * SYN: adopted mid-stream, evicted and seen again, or a lone spoofed
 * segment), whose size it does not know -- counted as partial; or if its
 * source is over its completion limit. */
static uint64_t
take_message(struct awafs_flowtab *t, struct flow_entry *e, int64_t now_us)
{
    uint64_t size = msg_bytes(e);
    uint64_t fwd = msg_fwd(e);
    bool whole = e->whole;

    e->whole = true;            /* The next message starts at 'end'. */
    e->midstream = false;
    e->carry = 0;
    clear_message_state(e);
    e->type = AWAFS_FLOW_UNKNOWN;
    if (!size) {
        return 0;
    }
    reset_count(e);
    if (!whole) {
        t->stats.partial++;
        return 0;
    }
    if (fwd < size) {
        t->stats.gaps_trimmed++;
        size = fwd;
        if (!size) {
            return 0;
        }
    }
    if (t->srclimit && !awafs_srclimit_allow(t->srclimit, e->src, now_us)) {
        t->stats.limited++;
        return 0;
    }
    t->stats.completions++;
    return size;
}

/* Ends the message of 'e', reporting its size in 'r' if it had bytes. */
static void
end_message(struct awafs_flowtab *t, struct flow_entry *e, int64_t now_us,
            struct awafs_flow_result *r)
{
    enum awafs_flow_type type = e->type;
    uint64_t size = take_message(t, e, now_us);

    if (size) {
        r->completed_type[r->n_completed] = type;
        r->completed[r->n_completed++] = size;
    }
}

static struct flow_entry *
lookup(struct awafs_flowtab *t, const struct awafs_flow_key *key,
       uint64_t *hash, bool *is_new)
{
    uint64_t h = hash_key(t, key);
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
        if (e->tag == h) {
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
timeout(struct awafs_flowtab *t, struct flow_entry *e, uint64_t hash)
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
    kappa = t->kappa_min + (uint32_t) (hash >> 32) % (t->kappa_span);
    if (e->timeouts < kappa) {
        return false;
    }
    e->timeouts = 0;
    e->aged = true;
    t->stats.aged_flows++;
    if (e->type == AWAFS_FLOW_SIZED) {
        return false;           /* Split again by its caller. */
    }
    reset_count(e);
    e->whole = false;
    e->queue = 0;
    return true;
}

/* Ends the message of 'e' at a boundary only its host reported (verify
 * mode): reported in 'r' as any other, but the next message is classified
 * as if this one went on -- its count carries on from this one's, and it
 * starts in the queue this one reached -- so that host reports never
 * promote a flow. */
static void
end_host_message(struct awafs_flowtab *t, struct flow_entry *e,
                 int64_t now_us, struct awafs_flow_result *r)
{
    uint64_t carry = (uint64_t) e->carry + msg_bytes(e);
    uint8_t floor = e->queue;

    end_message(t, e, now_us, r);
    e->carry = carry > UINT32_MAX ? UINT32_MAX : carry;
    e->queue = floor;
    t->stats.host_boundaries++;
}

/* How the message of a flow ended before its segment 'h'. */
enum boundary {
    NO_BOUNDARY,
    SWITCH_BOUNDARY,            /* Turnaround or idle gap, seen here. */
    HOST_BOUNDARY,              /* Only the host's report (verify mode). */
};

/* Whether the message of 'e' ended before segment 'h': see the file's
 * comment. */
static enum boundary
ended_before(const struct flow_entry *e, const struct awafs_hdr *h,
             bool host_reports, int64_t now_us, int64_t idle_us)
{
    int32_t gap = h->seq - e->end;

    if (!msg_bytes(e) && !e->carry) {
        /* Nothing since the last boundary; after one only the host
         * reported, the switch's own still ends what it carries. */
        return NO_BOUNDARY;
    }
    if (((h->tcp_flags & AWAFS_TCP_ACK) && (int32_t) (h->ack - e->ack) > 0)
        || (e->psh && now_us - e->last_us > idle_us && h->payload_len
            && gap >= 0 && gap <= (int32_t) AWAFS_FLOWTAB_MAX_GAP)) {
        return SWITCH_BOUNDARY;
    }
    if (host_reports && awafs_hdr_counts_prev(h)
        && h->prev_end == e->end && h->prev_size == msg_bytes(e)) {
        return HOST_BOUNDARY;
    }
    return NO_BOUNDARY;
}

/* The type of a message whose segment carries Karuna word 'word': a
 * deadline is the sender's claim, which the switch cannot check, so it is
 * taken as the size it declares (or none). */
static enum awafs_flow_type
policed_type(struct awafs_flowtab *t, uint32_t word)
{
    enum awafs_flow_type type = awafs_karuna_type(word);

    if (type == AWAFS_FLOW_DEADLINE) {
        t->stats.deadlines_refused++;
        type = awafs_karuna_size(word) ? AWAFS_FLOW_SIZED
                                       : AWAFS_FLOW_UNKNOWN;
    }
    return type;
}

/* Queues count_segment() may decide on its own. */
#define QUEUE_BY_COUNT (-1)     /* By the message's count (the caller). */
#define QUEUE_LOWEST (-2)       /* The lowest queue. */

/* A segment 'h' at 'now_us' of the closed connection of 'e': data within
 * the message its FIN or RST ended keeps that message's queue (queue 0
 * within its source's budget); any other data, which the receiver would
 * not take, the lowest.  Returns the queue (or QUEUE_LOWEST). */
static int
late_segment(struct awafs_flowtab *t, struct flow_entry *e,
             const struct awafs_hdr *h, int64_t now_us)
{
    uint32_t end = h->seq + h->payload_len;

    if (!h->payload_len) {
        return 0;               /* Byte-free: the caller's budget. */
    }
    if ((int32_t) (end - e->end) <= 0
        && (uint32_t) (e->end - h->seq) <= e->last_size) {
        return (e->queue || queue0_ok(t, e, h, now_us) ? e->queue
                                                       : QUEUE_LOWEST);
    }
    t->stats.late_refused++;
    return QUEUE_LOWEST;
}

/* awafs_flowtab_update() without the queue.  Returns the flow's entry, or
 * NULL with '*queue' set for a late segment of a finished connection;
 * '*queue' is QUEUE_BY_COUNT unless the segment's queue does not depend on
 * its count. */
static struct flow_entry *
count_segment(struct awafs_flowtab *t, const struct awafs_flow_key *key,
              const struct awafs_hdr *h, bool host_reports,
              int64_t now_us, int64_t idle_us, struct awafs_flow_result *r,
              int *queue)
{
    bool is_new;
    uint64_t hash;
    struct flow_entry *e = lookup(t, key, &hash, &is_new);
    uint8_t flags = h->tcp_flags;
    uint32_t seq = h->seq;
    uint32_t end = seq + h->payload_len;
    enum boundary boundary = NO_BOUNDARY;
    int64_t silent_us;
    uint32_t before;
    int32_t gap;

    r->n_completed = 0;
    r->byte_free_refused = false;
    *queue = QUEUE_BY_COUNT;
    if (is_new) {
        e->tag = hash;
        memcpy(e->src, key->src, sizeof e->src);
        source_buckets(t, key->src, e->sources);
        e->used = true;
        e->closed = false;
        e->psh = false;
        e->whole = false;
        e->midstream = !(flags & AWAFS_TCP_SYN);
        clear_message_state(e);
        e->type = AWAFS_FLOW_UNKNOWN;
        e->full = 0;
        e->end = seq;
        e->last_size = 0;
        e->carry = 0;
        reset_count(e);
    } else if (e->closed) {
        if (!(flags & AWAFS_TCP_SYN)) {
            /* A late segment of a finished connection. */
            e->last_us = now_us;
            r->bytes_sent = 0;
            *queue = late_segment(t, e, h, now_us);
            byte_free_charge(t, e, h, now_us, r);
            return NULL;
        }
        e->closed = false;
        t->stats.flows++;
    } else if (flags & AWAFS_TCP_SYN) {
        if ((msg_bytes(e) || e->queue || e->carry)
            && now_us - e->last_us <= AWAFS_FLOWTAB_QUIET_US) {
            /* RFC 5961 4: a SYN on a connection that sent data (or whose
             * message holds a queue) would restart it at the top. */
            t->stats.syn_ignored++;
            e->last_us = now_us;
            r->bytes_sent = msg_bytes(e);
            return e;
        }
    } else {
        boundary = ended_before(e, h, host_reports, now_us, idle_us);
        if (boundary != NO_BOUNDARY) {
            /* This segment belongs to the next message. */
            if (boundary == HOST_BOUNDARY) {
                end_host_message(t, e, now_us, r);
            } else {
                end_message(t, e, now_us, r);
            }
            gap = seq - e->end;
            if (gap > 0 && gap <= (int32_t) AWAFS_FLOWTAB_MAX_GAP) {
                e->end = seq;
            }
        }
    }
    silent_us = now_us - e->last_us;
    e->last_us = now_us;

    if (flags & AWAFS_TCP_SYN) {
        /* The SYN takes one sequence number; data starts after it.  Its MSS
         * minus the most TCP options take is a lower bound of what a
         * full-sized segment carries. */
        e->ack = h->ack;
        e->end = seq + 1;
        reset_count(e);
        e->whole = true;
        e->midstream = false;
        e->carry = 0;
        clear_message_state(e);
        e->type = AWAFS_FLOW_UNKNOWN;
        e->full = (h->mss > AWAFS_TCP_MAX_OPTIONS
                   ? h->mss - AWAFS_TCP_MAX_OPTIONS : 0);
        r->bytes_sent = 0;
        return e;
    }

    before = e->end;
    gap = seq - before;
    if (gap > (int32_t) AWAFS_FLOWTAB_MAX_GAP) {
        /* Beyond any window: the receiver drops it, so it counts for
         * nothing, neither its bytes nor its flags. */
        t->stats.out_of_window++;
        r->bytes_sent = msg_bytes(e);
        *queue = QUEUE_LOWEST;
        return e;
    }
    e->ack = h->ack;
    if (h->has_karuna && h->payload_len) {
        e->type = policed_type(t, h->karuna);
    }
    if (h->payload_len > e->full) {
        e->full = h->payload_len > UINT16_MAX ? UINT16_MAX : h->payload_len;
    }
    /* The segment's offset in the message: the bytes up to 'end', plus its
     * distance beyond 'end' (a gap) or minus it (data sent again). */
    int64_t ofs = (int64_t) msg_bytes(e) + gap;

    /* Data of this message sent again makes it tardy; data of an earlier
     * message (a late retransmission after the message ended) does not. */
    if (h->payload_len && !is_new && gap < 0 && ofs + h->payload_len > 0) {
        if (!e->tardy) {
            e->tardy = true;
            t->stats.tardy_flows++;
        }
        if (silent_us >= t->rto_min_us && timeout(t, e, hash)) {
            /* Restarted: its count starts again after this segment. */
            ofs = gap;
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
            e->psh = (flags & AWAFS_TCP_PSH) && h->payload_len < e->full;
        }
        if (ofs + h->payload_len > 0) {
            add_fwd(e, h->payload_len);
        }
    }

    if (flags & (AWAFS_TCP_FIN | AWAFS_TCP_RST)) {
        /* The receiver takes a FIN in sequence, a RST only at RCV.NXT. */
        bool fin_ok = (flags & AWAFS_TCP_FIN) && gap <= 0
                      && (int32_t) (end - before) >= 0;
        bool rst_ok = (flags & AWAFS_TCP_RST) && seq == before;

        if (fin_ok || rst_ok) {
            uint64_t span = msg_bytes(e);
            uint8_t last_queue = e->queue;

            end_message(t, e, now_us, r);
            e->queue = last_queue;
            e->last_size = span > UINT32_MAX ? UINT32_MAX : span;
            e->closed = true;
            t->stats.flows--;
            return e;
        }
        if (flags & AWAFS_TCP_RST) {
            t->stats.rst_ignored++;
        } else {
            t->stats.fin_ignored++;
        }
    }
    if (host_reports && awafs_hdr_counts_completion(h)
        && h->flow_size == msg_bytes(e)) {
        /* An end host's completion that agrees with what the switch
         * saw. */
        end_host_message(t, e, now_us, r);
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
    int forced;
    struct flow_entry *e = count_segment(t, key, h, host_reports, now_us,
                                         idle_us, r, &forced);
    unsigned int lowest = thr->n_queues ? thr->n_queues - 1 : 0;
    bool over_budget = false;   /* Its source's queue-0 budget refused
                                 * it, and counted it. */
    uint64_t count;
    unsigned int q;

    if (e) {
        byte_free_charge(t, e, h, now_us, r);
    }
    r->type = e ? e->type : AWAFS_FLOW_UNKNOWN;
    r->aged = e ? e->aged : false;
    if (forced != QUEUE_BY_COUNT) {
        r->queue = forced == QUEUE_LOWEST ? lowest : (unsigned int) forced;
        return;
    }
    if (e->midstream && !e->closed) {
        /* Its start unseen: its count means nothing, so no priority. */
        t->stats.midstream_packets++;
        r->queue = lowest;
        return;
    }
    if (e->tardy && r->bytes_sent < t->tardy_limit) {
        if (!lowest || queue0_ok(t, e, h, now_us)) {
            /* Above its message's queue on purpose: what it lost
             * first. */
            t->stats.tardy_packets++;
            r->queue = 0;
            return;
        }
        over_budget = true;
    }
    /* A message never moves up: when the thresholds rise (or a segment is
     * sent again), its later segments would overtake its own queued ones.
     * Verify mode believes the host's count when it is the larger. */
    count = r->bytes_sent + e->carry;
    q = awafs_classify(thr, (host_reports && h->bytes_sent > count
                             ? h->bytes_sent : count));
    if (q < e->queue) {
        q = e->queue;
        t->stats.held_down++;
    }
    if (!q && lowest && (over_budget || !queue0_ok(t, e, h, now_us))) {
        q = 1;                  /* For the rest of its message. */
    }
    if (msg_bytes(e) || e->closed) {
        e->queue = q;           /* Not if this segment ended its message. */
    }
    r->queue = q;
}

size_t
awafs_flowtab_sweep(struct awafs_flowtab *t, uint32_t n, int64_t now_us,
                    int64_t idle_us, uint64_t *sizes, uint8_t *types,
                    uint8_t (*srcs)[16])
{
    int64_t quiet = idle_us > AWAFS_FLOWTAB_QUIET_US ? idle_us
                    : AWAFS_FLOWTAB_QUIET_US;
    size_t n_sizes = 0;

    for (uint32_t i = 0; i < n && i <= t->mask; i++) {
        struct flow_entry *e = &t->slots[t->sweep];

        t->sweep = (t->sweep + 1) & t->mask;
        if (e->used && e->psh && now_us - e->last_us > quiet) {
            enum awafs_flow_type type = e->type;
            uint64_t size = take_message(t, e, now_us);

            if (size) {
                if (types) {
                    types[n_sizes] = type;
                }
                if (srcs) {
                    memcpy(srcs[n_sizes], e->src, sizeof srcs[0]);
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
    /* The VLAN IDs the parser stepped over (outer first), and the tunnel
     * key: two tenants' flows with the same 5-tuple on different VLANs or
     * in different tunnels are two flows. */
    for (int i = 0; i < 2 && h->l2_ofs + ETH_HLEN_ + 4 * (i + 1) <= h->l3_ofs;
         i++) {
        const uint8_t *tci = p + h->l2_ofs + ETH_HLEN_ + 4 * i;

        key->vlan[i] = (uint16_t) ((tci[0] & 0x0f) << 8 | tci[1]);
    }
    key->tunnel = h->tunnel;
    key->vni[0] = h->vni >> 16;
    key->vni[1] = h->vni >> 8;
    key->vni[2] = h->vni;
    if (h->ip_version == 4) {
        memcpy(key->src, l3 + 12, 4);
        memcpy(key->dst, l3 + 16, 4);
    } else {
        memcpy(key->src, l3 + 8, 16);
        memcpy(key->dst, l3 + 24, 16);
    }
    key->sport = awafs_rd16(l4);
    key->dport = awafs_rd16(l4 + 2);
    return true;
}
