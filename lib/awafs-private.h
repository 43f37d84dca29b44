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

#ifndef AWAFS_PRIVATE_H
#define AWAFS_PRIVATE_H 1

/* Helpers shared by the core's modules; not part of the API. */

#include <stdint.h>
#include <string.h>

/* The smallest power of 2 that is >= 'n' (n <= 2^31). */
static inline uint32_t
awafs_pow2_at_least(uint32_t n)
{
    uint32_t p = 1;

    while (p < n) {
        p <<= 1;
    }
    return p;
}

/* A keyed hash for tables that senders must not be able to target: UMAC's
 * NH over 'n' 64-bit words (two different inputs collide with probability
 * 2^-32 for a key the sender does not know), then a multiplicative mix so
 * that the low bits, which index a table, depend on all of it.  'key' has
 * 2 * 'n' words, from awafs_hash_key_init(). */
static inline uint32_t
awafs_keyed_hash(const uint32_t *key, const uint64_t *w, int n)
{
    uint64_t h = 0;

    for (int i = 0; i < n; i++) {
        uint32_t lo = w[i], hi = w[i] >> 32;

        h += (uint64_t) (uint32_t) (lo + key[2 * i])
             * (uint32_t) (hi + key[2 * i + 1]);
    }
    h = (h ^ (h >> 29)) * UINT64_C(0xbf58476d1ce4e5b9);
    return h >> 32;
}

/* Spreads 'seed', which should be random and secret, over the 'n' words of
 * 'key' (splitmix64). */
static inline void
awafs_hash_key_init(uint32_t *key, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++) {
        uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        key[i] = (z ^ (z >> 31)) >> 32;
    }
}

#endif /* awafs-private.h */
