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

#ifndef AWAFS_OFP_H
#define AWAFS_OFP_H 1

/* The body of NXST_AWAFS replies (docs/openflow.md): entries of properties,
 * encoded from and printed as the key=value pairs of 'ovs-appctl qos/show'.
 * Plain C on byte buffers, so that it is unit-tested alone; OVS registers
 * the messages (ofp-msgs.h) and moves the bytes. */

#include <stddef.h>
#include <stdint.h>

#define AWAFS_OFP_SUBTYPE 10        /* Nicira vendor statistics subtype. */
#define AWAFS_OFP_PORT_ENTRY UINT32_MAX /* 'queue_id' of a port's entry. */
#define AWAFS_OFP_REQUEST_LEN 8
#define AWAFS_OFP_ENTRY_HDR_LEN 16
/* Values per property: a threshold per queue, or the 36 of a
 * window-histogram (sizes by power of 2, to 2^36 bytes). */
#define AWAFS_OFP_MAX_VALUES 64

enum awafs_ofp_scope {
    AWAFS_OFP_SCOPE_PORT,
    AWAFS_OFP_SCOPE_QUEUE,
};

/* Returns the qos/show value of 'key', or NULL if there is none. */
typedef const char *awafs_ofp_lookup_func(const void *aux, const char *key);

/* Encodes into 'buf' an entry for 'queue_id' (AWAFS_OFP_PORT_ENTRY for the
 * port's own) of 'port_no' with every property of its scope that 'lookup'
 * finds and can be parsed, in the table's order.  Returns the entry's
 * length; writes it only if that is at most 'size' (so a first call with
 * 'size' 0 measures). */
size_t awafs_ofp_encode_entry(uint8_t *buf, size_t size, uint32_t port_no,
                              uint32_t queue_id, awafs_ofp_lookup_func *,
                              const void *aux);

struct awafs_ofp_entry {
    uint32_t port_no;
    uint32_t queue_id;
    const uint8_t *props;
    size_t props_len;
};

/* Parses the entry at the start of 'buf' ('len' bytes).  Returns its
 * length, or 0 if it is malformed (too short, a length that is not a
 * multiple of 8 or runs past 'len', a malformed property). */
size_t awafs_ofp_parse_entry(const uint8_t *buf, size_t len,
                             struct awafs_ofp_entry *);

/* Calls 'put' with the key and printed value of each property of 'e' whose
 * type the table knows for the entry's scope, in wire order; skips the
 * others, as OpenFlow properties are skipped. */
typedef void awafs_ofp_put_func(void *aux, const char *key,
                                const char *value);
void awafs_ofp_format_entry(const struct awafs_ofp_entry *,
                            awafs_ofp_put_func *, void *aux);

#endif /* awafs-ofp.h */
