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
 * twice.  A message ends with FIN or RST, after an idle gap (the same rule as
 * the host agent: no segment for 'idle_us'), or, in verify mode, with a host
 * completion whose size matches the switch's own count.  An idle gap is seen
 * when the flow's next segment arrives, or by awafs_flowtab_sweep(), which
 * the datapath calls periodically.  A connection that sent FIN or RST stays
 * in the table, closed, so that a segment retransmitted after its FIN
 * starts no new message; a SYN on the same 5-tuple reopens it.
 *
 * A lookup probes at most AWAFS_FLOWTAB_PROBES slots; when they are all
 * taken, the least recently seen of them is evicted (and counted), so the
 * table never grows and never allocates.  One thread at a time. */

#include "awafs.h"
#include "awafs-private.h"

#include <stdlib.h>
#include <string.h>

#define AWAFS_FLOWTAB_PROBES 8
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04

struct flow_entry {
    struct awafs_flow_key key;
    bool used;
    bool closed;                /* Saw FIN or RST; late segments ignored. */
    uint32_t start;             /* First sequence number of the message. */
    uint32_t end;               /* Highest end sequence number seen. */
    int64_t last_us;
};

struct awafs_flowtab {
    uint32_t mask;
    uint32_t sweep;             /* Next slot awafs_flowtab_sweep() checks. */
    struct awafs_flowtab_stats stats;
    struct flow_entry slots[];
};

static uint32_t
hash_key(const struct awafs_flow_key *k)
{
    /* FNV-1a over the key: cheap and good enough for a 5-tuple. */
    const uint8_t *p = (const uint8_t *) k;
    uint32_t h = 2166136261u;

    for (size_t i = 0; i < sizeof *k; i++) {
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

size_t
awafs_flowtab_memsize(uint32_t capacity)
{
    return sizeof(struct awafs_flowtab)
           + (size_t) awafs_pow2_at_least(capacity)
             * sizeof(struct flow_entry);
}

struct awafs_flowtab *
awafs_flowtab_create(uint32_t capacity)
{
    struct awafs_flowtab *t;

    if (capacity < AWAFS_FLOWTAB_PROBES || capacity > (1u << 24)) {
        return NULL;
    }
    t = calloc(1, awafs_flowtab_memsize(capacity));
    if (t) {
        t->mask = awafs_pow2_at_least(capacity) - 1;
    }
    return t;
}

void
awafs_flowtab_destroy(struct awafs_flowtab *t)
{
    free(t);
}

void
awafs_flowtab_get_stats(const struct awafs_flowtab *t,
                        struct awafs_flowtab_stats *stats)
{
    *stats = t->stats;
}

/* Ends the message of 'e' and returns its size, 0 if it had no bytes (then
 * nothing is counted). */
static uint32_t
take_message(struct awafs_flowtab *t, struct flow_entry *e)
{
    uint32_t size = e->end - e->start;

    if (size) {
        t->stats.completions++;
        e->start = e->end;
    }
    return size;
}

/* Ends the message of 'e', reporting its size in 'r' if it had bytes. */
static void
end_message(struct awafs_flowtab *t, struct flow_entry *e,
            struct awafs_flow_result *r)
{
    uint32_t size = take_message(t, e);

    if (size) {
        r->completed[r->n_completed++] = size;
    }
}

static struct flow_entry *
lookup(struct awafs_flowtab *t, const struct awafs_flow_key *key,
       bool *is_new)
{
    uint32_t h = hash_key(key);
    struct flow_entry *victim = NULL;

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

void
awafs_flowtab_update(struct awafs_flowtab *t,
                     const struct awafs_flow_key *key, uint32_t seq,
                     uint32_t payload_len, uint8_t tcp_flags,
                     int64_t host_size, int64_t now_us, int64_t idle_us,
                     struct awafs_flow_result *r)
{
    bool is_new;
    struct flow_entry *e = lookup(t, key, &is_new);
    uint32_t end = seq + payload_len;

    r->n_completed = 0;
    if (is_new) {
        e->key = *key;
        e->used = true;
        e->closed = false;
        e->start = e->end = seq;
    } else if (e->closed) {
        if (!(tcp_flags & TCP_SYN)) {
            /* A late segment of a finished connection. */
            e->last_us = now_us;
            r->bytes_sent = 0;
            return;
        }
        e->closed = false;
        t->stats.flows++;
    } else if (now_us - e->last_us > idle_us && e->end != e->start) {
        /* Idle gap: the previous message is over; this segment starts the
         * next one. */
        end_message(t, e, r);
        e->start = e->end = seq;
    }
    e->last_us = now_us;

    if (tcp_flags & TCP_SYN) {
        /* The SYN takes one sequence number; data starts after it. */
        e->start = e->end = seq + 1;
        r->bytes_sent = 0;
        return;
    }
    if ((int32_t) (seq - e->start) < 0) {
        /* A retransmission from before this message: counts as its
         * start. */
        r->bytes_sent = 0;
    } else {
        r->bytes_sent = seq - e->start;
        if ((int32_t) (end - e->end) > 0) {
            e->end = end;
        }
    }

    if (tcp_flags & (TCP_FIN | TCP_RST)) {
        end_message(t, e, r);
        e->closed = true;
        t->stats.flows--;
    } else if (host_size >= 0 && (uint64_t) host_size == e->end - e->start) {
        /* An end host's completion that agrees with what the switch saw. */
        end_message(t, e, r);
    }
}

size_t
awafs_flowtab_sweep(struct awafs_flowtab *t, uint32_t n, int64_t now_us,
                    int64_t idle_us, uint64_t *sizes)
{
    size_t n_sizes = 0;

    for (uint32_t i = 0; i < n && i <= t->mask; i++) {
        struct flow_entry *e = &t->slots[t->sweep];

        t->sweep = (t->sweep + 1) & t->mask;
        if (e->used && now_us - e->last_us > idle_us) {
            uint32_t size = take_message(t, e);

            if (size) {
                sizes[n_sizes++] = size;
            }
        }
    }
    return n_sizes;
}

bool
awafs_flow_key_from_frame(const void *frame, size_t len,
                          const struct awafs_hdr *h,
                          struct awafs_flow_key *key, uint32_t *seq)
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
    *seq = (uint32_t) l4[4] << 24 | (uint32_t) l4[5] << 16
           | (uint32_t) l4[6] << 8 | l4[7];
    return true;
}
