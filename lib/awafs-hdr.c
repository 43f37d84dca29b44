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

/* Parser and encoder for the AWAFS TCP option.  The wire format is specified
 * in docs/header.md.  The parser reads the frame byte by byte (no alignment
 * assumptions) and checks every length against the frame before reading,
 * inside a VXLAN or Geneve tunnel against the datagram that carries it. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-compat.h"
#include "awafs.h"

#define VLAN_HLEN 4
#define MAX_VLAN_TAGS 2

#define IPV6_HLEN 40
#define IPPROTO_UDP_ 17
#define UDP_HLEN 8
#define TUNNEL_HLEN 8           /* VXLAN's, and Geneve's without options. */
#define VXLAN_FLAG_I 0x08       /* The VNI is valid (RFC 7348). */
#define ETH_TYPE_TEB 0x6558     /* Transparent Ethernet Bridging. */

static inline void
wr16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

/* IPv6 next-header values that are extension headers (RFC 8200 and the IANA
 * "IPv6 Extension Header Types" registry). */
static bool
is_ipv6_ext_hdr(uint8_t nh)
{
    switch (nh) {
    case 0: case 43: case 44: case 50: case 51: case 60:
    case 135: case 139: case 140: case 253: case 254:
        return true;
    default:
        return false;
    }
}

/* What parse_l2() reads a frame with. */
struct parse_ctx {
    const uint8_t *frame;
    const uint8_t *head_end;    /* One past the bytes that may be read. */
    const struct awafs_tunnel_ports *tunnels;   /* NULL: none. */
    struct awafs_parse_stats *stats;            /* NULL: not counted. */
};

static void
count_tunnel(const struct parse_ctx *ctx, enum awafs_tunnel_event e)
{
    if (ctx->stats) {
        ctx->stats->tunnel[e]++;
    }
}

/* Whether the 'n' bytes at 'p', which is 'left' bytes before the end of
 * what it is part of (frame, IP packet, datagram), may be read: MALFORMED
 * past that end, UNSUPPORTED past the bytes the caller gave (the head of a
 * longer frame), OK.  'p' is never past the head. */
static enum awafs_parse_result
need(const struct parse_ctx *ctx, const uint8_t *p, size_t left, size_t n)
{
    return (n > left ? AWAFS_PARSE_MALFORMED
            : n > ctx->head_end - p ? AWAFS_PARSE_UNSUPPORTED
            : AWAFS_PARSE_OK);
}

/* The kind of tunnel that UDP destination port 'port' carries. */
static enum awafs_tunnel
tunnel_at(const struct awafs_tunnel_ports *tunnels, uint16_t port)
{
    for (int i = 0; tunnels && i < tunnels->n; i++) {
        if (tunnels->port[i] == port) {
            return tunnels->type[i];
        }
    }
    return AWAFS_TUNNEL_NONE;
}

/* Reads the header of the 'type' tunnel at 'p', 'len' bytes before its
 * datagram's end, into 'hdr' (whose IP fields become the outer ones) and
 * its length into '*hlen'.  Returns OK, or why the frame inside is not
 * read. */
static enum awafs_parse_result
read_tunnel(const struct parse_ctx *ctx, enum awafs_tunnel type,
            const uint8_t *p, size_t len, struct awafs_hdr *hdr,
            size_t *hlen)
{
    enum awafs_parse_result r = need(ctx, p, len, TUNNEL_HLEN);

    *hlen = TUNNEL_HLEN;
    if (r != AWAFS_PARSE_OK) {
        if (r == AWAFS_PARSE_MALFORMED) {
            count_tunnel(ctx, AWAFS_TUN_TRUNCATED);
        }
        return r;
    }
    if (type == AWAFS_TUNNEL_VXLAN) {
        if (!(p[0] & VXLAN_FLAG_I)) {
            count_tunnel(ctx, AWAFS_TUN_UNKNOWN);
            return AWAFS_PARSE_NOT_TCP;
        }
    } else {
        if (p[0] >> 6 != 0 || awafs_rd16(p + 2) != ETH_TYPE_TEB) {
            count_tunnel(ctx, AWAFS_TUN_UNKNOWN);
            return AWAFS_PARSE_NOT_TCP;
        }
        *hlen += (p[0] & 0x3f) * 4;
        r = need(ctx, p, len, *hlen);
        if (r != AWAFS_PARSE_OK) {
            if (r == AWAFS_PARSE_MALFORMED) {
                count_tunnel(ctx, AWAFS_TUN_BAD_OPTIONS);
            }
            return r;
        }
    }
    count_tunnel(ctx, type == AWAFS_TUNNEL_VXLAN ? AWAFS_TUN_VXLAN
                                                  : AWAFS_TUN_GENEVE);
    hdr->tunnel = type;
    hdr->vni = awafs_rd32(p + 4) >> 8;
    hdr->outer_ip_version = hdr->ip_version;
    hdr->outer_l3_ofs = hdr->l3_ofs;
    hdr->ip_version = 0;
    hdr->l3_ofs = 0;
    hdr->ip_end = 0;
    return AWAFS_PARSE_OK;
}

/* Parses the Ethernet frame of 'len' bytes at 'l2', and a second time the
 * frame inside its tunnel, if any, up to its TCP options: returns OK with
 * them in ['*opt', '*opt_end'), or why it does not reach them.  A loop
 * rather than a recursion, so that it inlines into its one caller on the
 * per-packet path. */
static enum awafs_parse_result
parse_l2(const struct parse_ctx *ctx, const uint8_t *l2, size_t len,
         struct awafs_hdr *hdr, const uint8_t **opt, const uint8_t **opt_end)
{
    for (bool inner = false; ; inner = true) {
        enum awafs_parse_result r;
        size_t left, ip_hlen, l4_len, tcp_hlen;
        const uint8_t *l3, *l4;
        uint16_t eth_type;
        uint8_t proto;

        hdr->l2_ofs = l2 - ctx->frame;
        r = need(ctx, l2, len, AWAFS_ETH_HLEN);
        if (r != AWAFS_PARSE_OK) {
            return r;
        }
        eth_type = awafs_rd16(l2 + 12);
        l3 = l2 + AWAFS_ETH_HLEN;
        left = len - AWAFS_ETH_HLEN;
        for (int i = 0; (eth_type == AWAFS_ETH_TYPE_VLAN
                         || eth_type == AWAFS_ETH_TYPE_QINQ); i++) {
            if (i == MAX_VLAN_TAGS) {
                return AWAFS_PARSE_UNSUPPORTED;
            }
            r = need(ctx, l3, left, VLAN_HLEN);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            eth_type = awafs_rd16(l3 + 2);
            l3 += VLAN_HLEN;
            left -= VLAN_HLEN;
        }

        if (eth_type == AWAFS_ETH_TYPE_IPV4) {
            size_t tot_len;

            r = need(ctx, l3, left, AWAFS_IPV4_MIN_HLEN);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            if ((l3[0] >> 4) != 4) {
                return AWAFS_PARSE_MALFORMED;
            }
            ip_hlen = (l3[0] & 0x0f) * 4;
            tot_len = awafs_rd16(l3 + 2);
            if (ip_hlen < AWAFS_IPV4_MIN_HLEN || tot_len < ip_hlen
                || tot_len > left) {
                return AWAFS_PARSE_MALFORMED;
            }
            r = need(ctx, l3, left, ip_hlen);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            if (awafs_rd16(l3 + 6) & 0x3fff) {  /* MF or fragment offset. */
                return AWAFS_PARSE_UNSUPPORTED;
            }
            hdr->ip_version = 4;
            hdr->l3_ofs = l3 - ctx->frame;
            hdr->ip_end = hdr->l3_ofs + tot_len;
            proto = l3[9];
            l4_len = tot_len - ip_hlen;     /* Ignores Ethernet padding. */
        } else if (eth_type == AWAFS_ETH_TYPE_IPV6) {
            size_t payload_len;

            r = need(ctx, l3, left, IPV6_HLEN);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            if ((l3[0] >> 4) != 6) {
                return AWAFS_PARSE_MALFORMED;
            }
            ip_hlen = IPV6_HLEN;
            payload_len = awafs_rd16(l3 + 4);
            if (payload_len > left - IPV6_HLEN) {
                return AWAFS_PARSE_MALFORMED;
            }
            hdr->ip_version = 6;
            hdr->l3_ofs = l3 - ctx->frame;
            hdr->ip_end = hdr->l3_ofs + IPV6_HLEN + payload_len;
            proto = l3[6];
            if (is_ipv6_ext_hdr(proto)) {
                return AWAFS_PARSE_UNSUPPORTED;
            }
            l4_len = payload_len;
        } else {
            return AWAFS_PARSE_NOT_TCP;
        }
        l4 = l3 + ip_hlen;

        if (proto == IPPROTO_UDP_ && ctx->tunnels) {
            enum awafs_tunnel type;
            size_t udp_len, hlen;

            r = need(ctx, l4, l4_len, UDP_HLEN);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            type = tunnel_at(ctx->tunnels, awafs_rd16(l4 + 2));
            if (type == AWAFS_TUNNEL_NONE) {
                return AWAFS_PARSE_NOT_TCP;
            }
            if (inner) {
                count_tunnel(ctx, AWAFS_TUN_NESTED);
                return AWAFS_PARSE_UNSUPPORTED;
            }
            udp_len = awafs_rd16(l4 + 4);
            if (udp_len < UDP_HLEN || udp_len > l4_len) {
                return AWAFS_PARSE_MALFORMED;
            }
            r = read_tunnel(ctx, type, l4 + UDP_HLEN, udp_len - UDP_HLEN, hdr,
                            &hlen);
            if (r != AWAFS_PARSE_OK) {
                return r;
            }
            l2 = l4 + UDP_HLEN + hlen;
            len = udp_len - UDP_HLEN - hlen;
            continue;
        }
        if (proto != AWAFS_IPPROTO_TCP) {
            return AWAFS_PARSE_NOT_TCP;
        }
        r = need(ctx, l4, l4_len, AWAFS_TCP_MIN_HLEN);
        if (r != AWAFS_PARSE_OK) {
            return r;
        }
        tcp_hlen = (l4[12] >> 4) * 4;
        if (tcp_hlen < AWAFS_TCP_MIN_HLEN) {
            return AWAFS_PARSE_MALFORMED;
        }
        r = need(ctx, l4, l4_len, tcp_hlen);
        if (r != AWAFS_PARSE_OK) {
            return r;
        }
        hdr->tcp_flags = l4[13];
        hdr->seq = awafs_rd32(l4 + 4);
        hdr->ack = awafs_rd32(l4 + 8);
        hdr->l4_ofs = l4 - ctx->frame;
        hdr->payload_len = l4_len - tcp_hlen;
        *opt = l4 + AWAFS_TCP_MIN_HLEN;
        *opt_end = l4 + tcp_hlen;
        return AWAFS_PARSE_OK;
    }
}

enum awafs_parse_result
awafs_parse_head__(const void *head, size_t head_len, size_t len,
                   const struct awafs_tunnel_ports *ports,
                   struct awafs_hdr *hdr, struct awafs_parse_stats *stats)
{
    struct parse_ctx ctx = {
        .frame = head,
        .head_end = ((const uint8_t *) head
                     + (head_len < len ? head_len : len)),
        .tunnels = ports && ports->n ? ports : NULL,
        .stats = stats,
    };
    const uint8_t *opt, *opt_end;
    enum awafs_parse_result r;

    memset(hdr, 0, sizeof *hdr);
    /* Offsets are 16-bit; no Ethernet frame is longer than that. */
    if (len > UINT16_MAX) {
        r = AWAFS_PARSE_MALFORMED;
    } else {
        r = parse_l2(&ctx, head, len, hdr, &opt, &opt_end);
        if (r == AWAFS_PARSE_OK) {
            r = awafs_parse_tcp_options(opt, opt_end, hdr);
        }
    }
    hdr->padded = awafs_hdr_padded(hdr, len);
    if (r == AWAFS_PARSE_MALFORMED && hdr->tunnel) {
        count_tunnel(&ctx, AWAFS_TUN_TRUNCATED);   /* The inner frame. */
    }
    if (stats) {
        stats->n[r]++;
    }
    return r;
}

bool
awafs_tunnel_ports_add(struct awafs_tunnel_ports *ports, uint16_t port,
                       enum awafs_tunnel type)
{
    if (tunnel_at(ports, port) != AWAFS_TUNNEL_NONE) {
        return true;
    }
    if (ports->n == AWAFS_TUNNEL_MAX_PORTS) {
        return false;
    }
    ports->port[ports->n] = port;
    ports->type[ports->n++] = type;
    return true;
}

const char *
awafs_parse_result_to_string(enum awafs_parse_result r)
{
    switch (r) {
    case AWAFS_PARSE_OK:
        return "ok";
    case AWAFS_PARSE_NOT_TCP:
        return "not-tcp";
    case AWAFS_PARSE_NO_OPTION:
        return "no-option";
    case AWAFS_PARSE_UNSUPPORTED:
        return "unsupported";
    case AWAFS_PARSE_MALFORMED:
        return "malformed";
    case AWAFS_PARSE_N_RESULTS:
    default:
        return "<invalid>";
    }
}

const char *
awafs_tunnel_event_to_string(enum awafs_tunnel_event e)
{
    switch (e) {
    case AWAFS_TUN_VXLAN:
        return "vxlan";
    case AWAFS_TUN_GENEVE:
        return "geneve";
    case AWAFS_TUN_TRUNCATED:
        return "truncated";
    case AWAFS_TUN_BAD_OPTIONS:
        return "bad-options";
    case AWAFS_TUN_NESTED:
        return "nested";
    case AWAFS_TUN_UNKNOWN:
        return "unknown-header";
    case AWAFS_TUN_N_EVENTS:
    default:
        return "<invalid>";
    }
}

size_t
awafs_opt_encode(uint8_t *buf, uint64_t bytes_sent, bool completed,
                 uint64_t flow_size)
{
    uint32_t sent = bytes_sent > AWAFS_BYTES_SENT_MAX
                    ? AWAFS_BYTES_SENT_MAX : bytes_sent;
    size_t len = completed ? AWAFS_OPT_LEN_COMPLETED : AWAFS_OPT_LEN;

    buf[0] = AWAFS_OPT_KIND;
    buf[1] = len;
    wr16(buf + 2, AWAFS_OPT_EXID);
    wr32(buf + 4, sent | (completed ? AWAFS_OPT_COMPLETED_BIT : 0));
    if (completed) {
        if (flow_size < sent) {
            flow_size = sent;
        }
        wr32(buf + 8, flow_size > AWAFS_FLOW_SIZE_MAX
                      ? AWAFS_FLOW_SIZE_MAX : flow_size);
    }
    return len;
}

size_t
awafs_opt_encode_prev(uint8_t *buf, uint64_t bytes_sent, bool completed,
                      uint64_t flow_size, uint64_t prev_size,
                      uint32_t prev_end)
{
    size_t len = awafs_opt_encode(buf, bytes_sent, completed, flow_size);

    wr32(buf + len, prev_size > AWAFS_FLOW_SIZE_MAX ? AWAFS_FLOW_SIZE_MAX
                                                    : prev_size);
    wr32(buf + len + 4, prev_end);
    len += AWAFS_OPT_PREV_LEN;
    buf[1] = len;
    return len;
}

size_t
awafs_opt_add_karuna(uint8_t *buf, size_t len, uint32_t word)
{
    wr32(buf + len, word);
    len += AWAFS_OPT_KARUNA_LEN;
    buf[1] = len;
    return len;
}
