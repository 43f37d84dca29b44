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

#endif /* awafs-private.h */
