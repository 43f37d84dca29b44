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

/* Per-source completion rate limit (trust=host): a token bucket per source
 * address, so that one host reporting fake completions fills at most its
 * share of a port's window (docs/reliability.md has the bound).
 *
 * The table is indexed by a keyed hash of the address, without tags, so
 * memory is fixed and a host that cycles through spoofed addresses gets at
 * most the table's buckets, never a fresh one per address.  Each source is
 * charged to two buckets, from two halves of the hash, and is refused only
 * when both are empty (a count-min sketch of token buckets: one source alone
 * drains both at once, so it still gets exactly the rate).  A busy source
 * slows another only if it has both of the other's buckets: for one busy
 * source among 1024 buckets, 1 in 250,000 instead of 1 in 1,000. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"
#include "awafs-private.h"

#include <string.h>

#define ONE 1000000ULL          /* A completion, in bucket units (1e-6). */

struct bucket {
    uint64_t tokens;            /* Units of 1e-6 completion. */
    int64_t last_us;            /* INT64_MIN: never used, full. */
};

struct awafs_srclimit {
    uint32_t mask;
    uint64_t rate;              /* Completions per second. */
    uint64_t burst;             /* Completions. */
    uint64_t limited;           /* Completions refused. */
    uint32_t hash_key[4];
    struct bucket slots[];
};

size_t
awafs_srclimit_memsize(uint32_t n_slots)
{
    return sizeof(struct awafs_srclimit)
           + (size_t) awafs_pow2_at_least(n_slots) * sizeof(struct bucket);
}

struct awafs_srclimit *
awafs_srclimit_create(uint32_t n_slots, uint32_t rate, uint32_t burst,
                      uint64_t seed)
{
    struct awafs_srclimit *l;
    uint32_t n;

    if (!n_slots || n_slots > AWAFS_SRCLIMIT_MAX_SLOTS || !rate || !burst) {
        return NULL;
    }
    n = awafs_pow2_at_least(n_slots);
    l = awafs_zalloc(sizeof *l + n * sizeof l->slots[0]);
    if (l) {
        l->mask = n - 1;
        l->rate = rate;
        l->burst = burst;
        awafs_hash_key_init(l->hash_key, 4, seed);
        for (uint32_t i = 0; i < n; i++) {
            l->slots[i].last_us = INT64_MIN;
        }
    }
    return l;
}

void
awafs_srclimit_destroy(struct awafs_srclimit *l)
{
    awafs_free(l);
}

/* Brings 'b' up to 'now_us'. */
static void
refill(const struct awafs_srclimit *l, struct bucket *b, int64_t now_us)
{
    if (b->last_us == INT64_MIN
        || (now_us > b->last_us
            && (uint64_t) (now_us - b->last_us) >= l->burst * ONE / l->rate)) {
        b->tokens = l->burst * ONE;     /* Idle long enough to be full. */
        b->last_us = now_us;
    } else if (now_us > b->last_us) {
        /* 1e-6 completion per microsecond and completion per second. */
        b->tokens += (uint64_t) (now_us - b->last_us) * l->rate;
        b->tokens = b->tokens < l->burst * ONE ? b->tokens : l->burst * ONE;
        b->last_us = now_us;
    }
}

uint32_t
awafs_source_id(const uint32_t key[4], const uint8_t addr[16])
{
    uint64_t w[2];

    memcpy(w, addr, sizeof w);
    return awafs_keyed_hash(key, w, 2);
}

bool
awafs_srclimit_allow(struct awafs_srclimit *l, const uint8_t addr[16],
                     int64_t now_us)
{
    /* The mask has at most 16 bits (AWAFS_SRCLIMIT_MAX_SLOTS). */
    uint32_t h = awafs_source_id(l->hash_key, addr);
    struct bucket *a, *b;

    a = &l->slots[h & l->mask];
    b = &l->slots[(h >> 16) & l->mask];
    refill(l, a, now_us);
    if (b != a) {
        refill(l, b, now_us);
    }
    if (a->tokens < ONE && b->tokens < ONE) {
        l->limited++;
        return false;
    }
    a->tokens -= a->tokens < ONE ? a->tokens : ONE;
    if (b != a) {
        b->tokens -= b->tokens < ONE ? b->tokens : ONE;
    }
    return true;
}

uint64_t
awafs_srclimit_limited(const struct awafs_srclimit *l)
{
    return l->limited;
}
