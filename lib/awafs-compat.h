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

#ifndef AWAFS_COMPAT_H
#define AWAFS_COMPAT_H 1

/* The platform under the AWAFS core: what it allocates memory and shares
 * counters with.
 *
 * Built into Open vSwitch (whose build defines HAVE_CONFIG_H), the core uses
 * OVS's own atomics (ovs-atomic.h), so that it builds wherever OVS builds,
 * with the atomics OVS chose for that compiler.  On its own (the unit
 * tests, fuzzers and benchmarks of the AWAFS repository) it is plain C11.
 * In both, memory comes from the C library and an allocation that fails
 * returns NULL, which every create function passes on: OVS's xzalloc()
 * would abort the daemon, which then fails again at every restart with the
 * same configuration (docs/reliability.md, "Memory").  Each source file
 * includes this header first. */

/* What the ring aligns its producers' and consumer's fields to. */
#define AWAFS_CACHE_LINE 64

#ifdef HAVE_CONFIG_H
#include <config.h>
#include "ovs-atomic.h"

#define AWAFS_ATOMIC(TYPE) ATOMIC(TYPE)
#define awafs_atomic_read(SRC, DST, ORDER) \
    atomic_read_explicit(SRC, DST, ORDER)
#define awafs_atomic_add(RMW, ARG, ORIG, ORDER) \
    atomic_add_explicit(RMW, ARG, ORIG, ORDER)

#else  /* !HAVE_CONFIG_H */
#include <stdatomic.h>

#define AWAFS_ATOMIC(TYPE) _Atomic(TYPE)
#define awafs_atomic_read(SRC, DST, ORDER) \
    (*(DST) = atomic_load_explicit(SRC, ORDER))
#define awafs_atomic_add(RMW, ARG, ORIG, ORDER) \
    (*(ORIG) = atomic_fetch_add_explicit(RMW, ARG, ORDER))
#endif  /* !HAVE_CONFIG_H */

#include <stdlib.h>
#include <string.h>

#define awafs_zalloc(SIZE) calloc(1, SIZE)
#define awafs_free(P) free(P)
#define awafs_free_cacheline(P) free(P)

static inline void *
awafs_zalloc_cacheline(size_t size)
{
    /* aligned_alloc() wants a multiple of the alignment. */
    size_t n = (size + AWAFS_CACHE_LINE - 1)
               & ~(size_t) (AWAFS_CACHE_LINE - 1);
    void *p = n >= size ? aligned_alloc(AWAFS_CACHE_LINE, n) : NULL;

    if (p) {
        memset(p, 0, n);
    }
    return p;
}

/* The same in both, as OVS's ovs-atomic.h takes C11's names for them:
 * atomic_init(), atomic_store_explicit(),
 * atomic_compare_exchange_weak_explicit() and the memory_order_* values. */

#endif /* awafs-compat.h */
