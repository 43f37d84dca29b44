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

#include "awafs.h"

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

/* The bucket of 'size' among AWAFS_WINDOW_LOG2_BUCKETS powers of 2:
 * floor(log2(size)), 0 for 0, the last bucket for anything larger. */
static inline uint32_t
awafs_log2_bucket(uint64_t size)
{
    uint32_t e = size ? 63 - __builtin_clzll(size) : 0;

    return e < AWAFS_WINDOW_LOG2_BUCKETS ? e : AWAFS_WINDOW_LOG2_BUCKETS - 1;
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

/* SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012) with a 128-bit key 'k' over the 'len' bytes at 'data', with 'c'
 * compression and 'd' finalization rounds: SipHash-2-4 is (2, 4), SipHash-1-3
 * (1, 3).  A pseudorandom function: without the key, outputs cannot be
 * predicted nor inputs chosen to collide.  Written from the paper's
 * description; words are read little-endian whatever the host's order. */
#define AWAFS_SIP_ROTL(X, B) (((X) << (B)) | ((X) >> (64 - (B))))

static inline void
awafs_sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = AWAFS_SIP_ROTL(v[1], 13);
    v[1] ^= v[0];
    v[0] = AWAFS_SIP_ROTL(v[0], 32);
    v[2] += v[3];
    v[3] = AWAFS_SIP_ROTL(v[3], 16);
    v[3] ^= v[2];
    v[0] += v[3];
    v[3] = AWAFS_SIP_ROTL(v[3], 21);
    v[3] ^= v[0];
    v[2] += v[1];
    v[1] = AWAFS_SIP_ROTL(v[1], 17);
    v[1] ^= v[2];
    v[2] = AWAFS_SIP_ROTL(v[2], 32);
}

/* The 'n' <= 8 bytes at 'p' as a little-endian word. */
static inline uint64_t
awafs_sip_le64(const uint8_t *p, size_t n)
{
    uint64_t w = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&w, p, n);
#else
    for (size_t i = 0; i < n; i++) {
        w |= (uint64_t) p[i] << (8 * i);
    }
#endif
    return w;
}

static inline uint64_t
awafs_siphash(const uint64_t k[2], const void *data, size_t len, int c,
              int d)
{
    const uint8_t *p = data;
    uint64_t v[4] = {
        k[0] ^ UINT64_C(0x736f6d6570736575),
        k[1] ^ UINT64_C(0x646f72616e646f6d),
        k[0] ^ UINT64_C(0x6c7967656e657261),
        k[1] ^ UINT64_C(0x7465646279746573),
    };
    size_t n_words = len / 8;
    uint64_t m;

    for (size_t i = 0; i < n_words; i++) {
        m = awafs_sip_le64(p + 8 * i, 8);
        v[3] ^= m;
        for (int r = 0; r < c; r++) {
            awafs_sip_round(v);
        }
        v[0] ^= m;
    }
    /* The last 0 to 7 bytes, and the length's low byte on top. */
    m = awafs_sip_le64(p + 8 * n_words, len % 8) | (uint64_t) len << 56;
    v[3] ^= m;
    for (int r = 0; r < c; r++) {
        awafs_sip_round(v);
    }
    v[0] ^= m;
    v[2] ^= 0xff;
    for (int r = 0; r < d; r++) {
        awafs_sip_round(v);
    }
    return v[0] ^ v[1] ^ v[2] ^ v[3];
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
