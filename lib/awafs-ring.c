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

/* Bounded multi-producer, single-consumer ring of completed flow sizes.
 *
 * The algorithm is D. Vyukov's bounded queue: every slot carries a sequence
 * number that tells producers and the consumer whose turn it is.  A producer
 * claims a position with one compare-and-swap on 'head' (retried only when
 * another producer won the same position, so it is lock-free) and publishes
 * the slot with a release store of its sequence.  A full ring is detected
 * without waiting: the push fails and is counted.  Producers never block and
 * never allocate.
 *
 * A producer preempted between its claim and its publish makes the consumer
 * stop at that slot until the next pop; nothing is lost. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <stdalign.h>

struct ring_slot {
    AWAFS_ATOMIC(uint64_t) seq;
    int64_t ts_us;
    uint64_t size;
    uint32_t source;
};

struct awafs_ring {
    uint64_t mask;
    alignas(AWAFS_CACHE_LINE) AWAFS_ATOMIC(uint64_t) head;  /* Producers. */
    AWAFS_ATOMIC(uint64_t) dropped;
    alignas(AWAFS_CACHE_LINE) uint64_t tail;    /* Consumer only. */
    alignas(AWAFS_CACHE_LINE) struct ring_slot slots[];
};

size_t
awafs_ring_memsize(uint32_t capacity)
{
    return sizeof(struct awafs_ring)
           + (size_t) awafs_pow2_at_least(capacity)
             * sizeof(struct ring_slot);
}

struct awafs_ring *
awafs_ring_create(uint32_t capacity)
{
    struct awafs_ring *r;
    uint32_t cap;
    size_t size;

    if (capacity < 2 || capacity > AWAFS_RING_MAX_CAPACITY) {
        return NULL;
    }
    cap = awafs_pow2_at_least(capacity);
    size = awafs_ring_memsize(capacity);
    r = awafs_zalloc_cacheline(size);
    if (!r) {
        return NULL;
    }
    r->mask = cap - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->dropped, 0);
    r->tail = 0;
    for (uint32_t i = 0; i < cap; i++) {
        atomic_init(&r->slots[i].seq, i);
    }
    return r;
}

void
awafs_ring_destroy(struct awafs_ring *r)
{
    if (r) {
        awafs_free_cacheline(r);
    }
}

uint32_t
awafs_ring_capacity(const struct awafs_ring *r)
{
    return r->mask + 1;
}

bool
awafs_ring_push(struct awafs_ring *r, int64_t ts_us, uint64_t size)
{
    return awafs_ring_push_from(r, ts_us, size, 0);
}

bool
awafs_ring_push_from(struct awafs_ring *r, int64_t ts_us, uint64_t size,
                     uint32_t source)
{
    struct ring_slot *slot;
    uint64_t pos;

    awafs_atomic_read(&r->head, &pos, memory_order_relaxed);
    for (;;) {
        uint64_t seq;
        int64_t diff;

        slot = &r->slots[pos & r->mask];
        awafs_atomic_read(&slot->seq, &seq, memory_order_acquire);
        diff = (int64_t) (seq - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                break;
            }
            /* Lost the race: 'pos' now holds the current head. */
        } else if (diff < 0) {
            /* The consumer has not freed this slot yet: full. */
            uint64_t orig;

            awafs_atomic_add(&r->dropped, 1, &orig, memory_order_relaxed);
            return false;
        } else {
            awafs_atomic_read(&r->head, &pos, memory_order_relaxed);
        }
    }
    slot->ts_us = ts_us;
    slot->size = size;
    slot->source = source;
    atomic_store_explicit(&slot->seq, pos + 1, memory_order_release);
    return true;
}

bool
awafs_ring_push_sp(struct awafs_ring *r, int64_t ts_us, uint64_t size,
                   uint32_t source)
{
    struct ring_slot *slot;
    uint64_t pos, seq;

    /* The only producer: nobody else moves 'head' or 'dropped'. */
    awafs_atomic_read(&r->head, &pos, memory_order_relaxed);
    slot = &r->slots[pos & r->mask];
    awafs_atomic_read(&slot->seq, &seq, memory_order_acquire);
    if (seq != pos) {
        uint64_t dropped;

        /* The consumer has not freed this slot yet: full. */
        awafs_atomic_read(&r->dropped, &dropped, memory_order_relaxed);
        atomic_store_explicit(&r->dropped, dropped + 1, memory_order_relaxed);
        return false;
    }
    atomic_store_explicit(&r->head, pos + 1, memory_order_relaxed);
    slot->ts_us = ts_us;
    slot->size = size;
    slot->source = source;
    atomic_store_explicit(&slot->seq, pos + 1, memory_order_release);
    return true;
}

size_t
awafs_ring_pop_burst(struct awafs_ring *r, struct awafs_ring_entry *out,
                     size_t max)
{
    size_t n = 0;

    /* Until empty, or the next producer has not published. */
    while (n < max && awafs_ring_peek(r, &out[n])) {
        atomic_store_explicit(&r->slots[r->tail & r->mask].seq,
                              r->tail + r->mask + 1, memory_order_release);
        r->tail++;
        n++;
    }
    return n;
}

bool
awafs_ring_peek(const struct awafs_ring *r, struct awafs_ring_entry *e)
{
    struct awafs_ring *rw = (struct awafs_ring *) r;
    struct ring_slot *slot = &rw->slots[r->tail & r->mask];
    uint64_t seq;

    awafs_atomic_read(&slot->seq, &seq, memory_order_acquire);
    if (seq != r->tail + 1) {
        return false;
    }
    e->ts_us = slot->ts_us;
    e->size = slot->size;
    e->source = slot->source;
    return true;
}

/* Successful pushes so far.  Approximate while producers run. */
uint64_t
awafs_ring_pushed(const struct awafs_ring *r)
{
    struct awafs_ring *rw = (struct awafs_ring *) r;
    uint64_t head;

    awafs_atomic_read(&rw->head, &head, memory_order_relaxed);
    return head;
}

uint64_t
awafs_ring_dropped(const struct awafs_ring *r)
{
    struct awafs_ring *rw = (struct awafs_ring *) r;
    uint64_t dropped;

    awafs_atomic_read(&rw->dropped, &dropped, memory_order_relaxed);
    return dropped;
}
