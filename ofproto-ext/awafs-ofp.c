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

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-ofp.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum awafs_ofp_kind {
    AWAFS_OFP_U64,
    AWAFS_OFP_LIST,
    AWAFS_OFP_PCT,
    AWAFS_OFP_ENUM,
};

struct awafs_ofp_prop {
    uint16_t type;
    enum awafs_ofp_scope scope;
    const char *key;
    enum awafs_ofp_kind kind;
    const char *names;          /* ENUM: comma-separated. */
};

static const struct awafs_ofp_prop props[] = {
#define AWAFS_PROP(TYPE, SCOPE, KEY, KIND, NAMES) \
    { TYPE, AWAFS_OFP_SCOPE_##SCOPE, KEY, AWAFS_OFP_##KIND, NAMES },
#include "awafs-props.def"
#undef AWAFS_PROP
};

#define N_PROPS (sizeof props / sizeof props[0])
#define PROP_HDR_LEN 8

static void
put_be16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
    put_be16(p, v >> 16);
    put_be16(p + 2, v);
}

static void
put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, v >> 32);
    put_be32(p + 4, v);
}

static uint16_t
get_be16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t
get_be32(const uint8_t *p)
{
    return (uint32_t) get_be16(p) << 16 | get_be16(p + 2);
}

static uint64_t
get_be64(const uint8_t *p)
{
    return (uint64_t) get_be32(p) << 32 | get_be32(p + 4);
}

/* Parses a decimal integer at '*s' into '*v', with at most 'max_frac'
 * decimal places scaled in (so "12.5" with 3 reads 12500); advances '*s'. */
static bool
parse_decimal(const char **s, int max_frac, uint64_t *v)
{
    const char *p = *s;
    uint64_t x = 0;
    int frac = -1;

    if (*p < '0' || *p > '9') {
        return false;
    }
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && frac < 0); p++) {
        if (*p == '.') {
            if (!max_frac) {
                return false;
            }
            frac = 0;
        } else if (frac < max_frac) {
            if (x > (UINT64_MAX - (*p - '0')) / 10) {
                return false;
            }
            x = x * 10 + (*p - '0');
            frac += frac >= 0;
        }
    }
    for (frac = frac < 0 ? 0 : frac; frac < max_frac; frac++) {
        if (x > UINT64_MAX / 10) {
            return false;
        }
        x *= 10;
    }
    *s = p;
    *v = x;
    return true;
}

/* Index of 'value' among the comma-separated 'names', or -1. */
static int
enum_index(const char *names, const char *value)
{
    size_t len = strlen(value);
    int i = 0;

    for (const char *p = names; *p; i++) {
        size_t n = strcspn(p, ",");

        if (n == len && !memcmp(p, value, n)) {
            return i;
        }
        p += n + (p[n] == ',');
    }
    return -1;
}

/* Parses 'value' as 'prop' reads it; returns the number of values, or 0 if
 * it does not parse. */
static size_t
parse_value(const struct awafs_ofp_prop *prop, const char *value,
            uint64_t v[AWAFS_OFP_MAX_VALUES])
{
    size_t n = 0;

    if (prop->kind == AWAFS_OFP_ENUM) {
        int idx = enum_index(prop->names, value);

        if (idx < 0) {
            return 0;
        }
        v[0] = idx;
        return 1;
    }
    for (;;) {
        if (n == AWAFS_OFP_MAX_VALUES
            || !parse_decimal(&value, prop->kind == AWAFS_OFP_PCT ? 3 : 0,
                              &v[n])) {
            return 0;
        }
        n++;
        if (!*value) {
            break;
        } else if (*value != ',' || prop->kind == AWAFS_OFP_U64) {
            return 0;
        }
        value++;
    }
    return n;
}

size_t
awafs_ofp_encode_entry(uint8_t *buf, size_t size, uint32_t port_no,
                       uint32_t queue_id, awafs_ofp_lookup_func *lookup,
                       const void *aux)
{
    enum awafs_ofp_scope scope = (queue_id == AWAFS_OFP_PORT_ENTRY
                                  ? AWAFS_OFP_SCOPE_PORT
                                  : AWAFS_OFP_SCOPE_QUEUE);
    size_t len = AWAFS_OFP_ENTRY_HDR_LEN;

    for (size_t i = 0; i < N_PROPS; i++) {
        const struct awafs_ofp_prop *prop = &props[i];
        uint64_t v[AWAFS_OFP_MAX_VALUES];
        const char *value;
        size_t n;

        if (prop->scope != scope) {
            continue;
        }
        value = lookup(aux, prop->key);
        n = value ? parse_value(prop, value, v) : 0;
        if (!n) {
            continue;
        }
        if (len + PROP_HDR_LEN + 8 * n <= size) {
            uint8_t *p = buf + len;

            put_be16(p, prop->type);
            put_be16(p + 2, PROP_HDR_LEN + 8 * n);
            memset(p + 4, 0, 4);
            for (size_t j = 0; j < n; j++) {
                put_be64(p + PROP_HDR_LEN + 8 * j, v[j]);
            }
        }
        len += PROP_HDR_LEN + 8 * n;
    }
    if (len <= size) {
        put_be16(buf, len);
        memset(buf + 2, 0, 2);
        put_be32(buf + 4, port_no);
        put_be32(buf + 8, queue_id);
        memset(buf + 12, 0, 4);
    }
    return len;
}

size_t
awafs_ofp_parse_entry(const uint8_t *buf, size_t len,
                      struct awafs_ofp_entry *e)
{
    size_t entry_len, ofs;

    if (len < AWAFS_OFP_ENTRY_HDR_LEN) {
        return 0;
    }
    entry_len = get_be16(buf);
    if (entry_len < AWAFS_OFP_ENTRY_HDR_LEN || entry_len % 8
        || entry_len > len) {
        return 0;
    }
    ofs = AWAFS_OFP_ENTRY_HDR_LEN;
    while (ofs < entry_len) {
        size_t prop_len = (entry_len - ofs >= PROP_HDR_LEN
                           ? get_be16(buf + ofs + 2) : 0);

        if (prop_len < PROP_HDR_LEN || prop_len % 8
            || prop_len > entry_len - ofs) {
            return 0;
        }
        ofs += prop_len;
    }
    e->port_no = get_be32(buf + 4);
    e->queue_id = get_be32(buf + 8);
    e->props = buf + AWAFS_OFP_ENTRY_HDR_LEN;
    e->props_len = entry_len - AWAFS_OFP_ENTRY_HDR_LEN;
    return entry_len;
}

static const struct awafs_ofp_prop *
find_prop(uint16_t type, enum awafs_ofp_scope scope)
{
    for (size_t i = 0; i < N_PROPS; i++) {
        if (props[i].type == type && props[i].scope == scope) {
            return &props[i];
        }
    }
    return NULL;
}

/* Prints into 'out' the 'n' values at 'p' as 'prop' reads them; false if
 * they do not fit its kind. */
static bool
format_values(const struct awafs_ofp_prop *prop, const uint8_t *p, size_t n,
              char *out, size_t size)
{
    size_t used = 0;

    if (!n || n > AWAFS_OFP_MAX_VALUES
        || (n > 1 && (prop->kind == AWAFS_OFP_U64
                      || prop->kind == AWAFS_OFP_ENUM))) {
        return false;
    }
    if (prop->kind == AWAFS_OFP_ENUM) {
        uint64_t idx = get_be64(p);
        const char *name = prop->names;

        for (uint64_t i = 0; i < idx && *name; i++) {
            name += strcspn(name, ",");
            name += *name == ',';
        }
        if (!*name) {
            return false;
        }
        snprintf(out, size, "%.*s", (int) strcspn(name, ","), name);
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t v = get_be64(p + 8 * i);
        const char *sep = i ? "," : "";

        used += (prop->kind == AWAFS_OFP_PCT
                 ? snprintf(out + used, size - used, "%s%g", sep, v / 1000.0)
                 : snprintf(out + used, size - used, "%s%llu", sep,
                            (unsigned long long) v));
        if (used >= size) {
            return false;
        }
    }
    return true;
}

void
awafs_ofp_format_entry(const struct awafs_ofp_entry *e,
                       awafs_ofp_put_func *put, void *aux)
{
    enum awafs_ofp_scope scope = (e->queue_id == AWAFS_OFP_PORT_ENTRY
                                  ? AWAFS_OFP_SCOPE_PORT
                                  : AWAFS_OFP_SCOPE_QUEUE);
    size_t ofs = 0;

    while (ofs + PROP_HDR_LEN <= e->props_len) {
        const uint8_t *p = e->props + ofs;
        size_t prop_len = get_be16(p + 2);
        const struct awafs_ofp_prop *prop = find_prop(get_be16(p), scope);
        char value[AWAFS_OFP_MAX_VALUES * 24];

        if (prop_len < PROP_HDR_LEN || prop_len > e->props_len - ofs) {
            return;             /* Not from awafs_ofp_parse_entry(). */
        }
        if (prop && format_values(prop, p + PROP_HDR_LEN,
                                  (prop_len - PROP_HDR_LEN) / 8,
                                  value, sizeof value)) {
            put(aux, prop->key, value);
        }
        ofs += prop_len;
    }
}
