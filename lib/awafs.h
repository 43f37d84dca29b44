/*
 * AWAFS core: adaptive, workload-agnostic flow scheduling.
 *
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

#ifndef AWAFS_H
#define AWAFS_H 1

/* The AWAFS core, free of DPDK and OVS headers so that it can be unit-tested
 * on its own.  Its parts:
 *
 *   - awafs_parse(): finds the end-host header (a TCP experimental option,
 *     docs/header.md) in a raw Ethernet frame.
 *   - awafs_classify(): MLFQ queue for a flow's bytes-sent.
 *   - struct awafs_flowtab: the switch's own byte count per flow
 *     (trust=switch|verify).
 *   - struct awafs_srclimit: per-source completion rate limit;
 *     awafs_source_id() names sources for the window's weights.
 *   - struct awafs_ring: bounded lock-free multi-producer, single-consumer
 *     ring of completed flow sizes, filled per packet by the datapath.
 *   - struct awafs_adapt: the window of completed sizes and the periodic
 *     threshold recalculation (Algorithm 1 of the thesis), run off the fast
 *     path.
 *   - struct awafs_sched: the strict-priority egress queues, with a token
 *     bucket and ECN marking.
 *
 * Time is always passed in by the caller, in microseconds, so the core has no
 * clock and tests are deterministic. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* For the few functions of the per-packet path that must be inlined into
 * their loop, whatever the compiler's estimate of their size. */
#if defined(__GNUC__)
#define AWAFS_ALWAYS_INLINE __attribute__((always_inline))
#else
#define AWAFS_ALWAYS_INLINE
#endif

#define AWAFS_MIN_QUEUES 2
#define AWAFS_MAX_QUEUES 8
#define AWAFS_MAX_THRESHOLDS (AWAFS_MAX_QUEUES - 1)

/* ---- End-host header (docs/header.md) ---- */

/* The option's wire format, defined once: end-host tools read these lines
 * as they are (docs/header.md), so each stays "#define NAME NUMBER". */
#define AWAFS_OPT_KIND 253          /* RFC 6994 experimental option. */
#define AWAFS_OPT_KIND_ALT 254      /* Also accepted by the parser. */
#define AWAFS_OPT_EXID 0x4157       /* 16-bit ExID, "AW". */
#define AWAFS_OPT_LEN 8             /* Data segment. */
#define AWAFS_OPT_LEN_COMPLETED 12  /* Segment that completes the flow. */
#define AWAFS_OPT_PREV_LEN 8        /* Added by a previous message's report. */
#define AWAFS_OPT_KARUNA_LEN 4      /* Added by the flow's Karuna word. */
#define AWAFS_OPT_COMPLETED_BIT 0x80000000u /* Of the bytes-sent word. */
#define AWAFS_BYTES_SENT_MAX 0x7fffffffu  /* 31-bit field, saturates. */
#define AWAFS_FLOW_SIZE_MAX 0xffffffffu   /* 32-bit field, saturates. */

struct awafs_hdr {
    uint32_t bytes_sent;    /* Flow bytes sent before this segment. */
    uint32_t flow_size;     /* Final flow size, valid if 'completed'. */
    uint32_t prev_size;     /* If 'has_prev': the size of the flow's previous
                             * message, which ended at TCP sequence number */
    uint32_t prev_end;      /* 'prev_end' (one past its last byte). */
    uint32_t karuna;        /* If 'has_karuna': deadline and size (below). */
    bool completed;
    bool has_prev;
    bool has_karuna;
    uint8_t ip_version;     /* 4 or 6; 0 if not IP. */
    uint8_t tcp_flags;      /* FIN, SYN, RST, ... (low 8 bits). */
    bool padded;            /* awafs_hdr_padded() of the parsed frame. */
    uint16_t l3_ofs;        /* Offset of the IP header, if ip_version. */
    uint16_t l4_ofs;        /* Offset of the TCP header, or 0 if none. */
    uint32_t payload_len;   /* TCP payload bytes, if l4_ofs. */
    uint32_t seq, ack;      /* TCP sequence and ACK numbers, if l4_ofs. */
    uint16_t mss;           /* TCP MSS option (SYN), 0 if none. */
    uint16_t ip_end;        /* Offset one past the IP packet, if
                             * ip_version: what follows is L2 padding. */
    uint16_t l2_ofs;        /* Offset of the Ethernet header the fields
                             * above belong to: 0, or a tunnel's inner. */
    /* A tunnelled frame (awafs_parse_tunnel()): every field above is the
     * inner frame's, and these are the encapsulation's. */
    uint8_t tunnel;         /* enum awafs_tunnel; NONE if not tunnelled. */
    uint8_t outer_ip_version;   /* If 'tunnel': the outer IP header's */
    uint16_t outer_l3_ofs;      /* version and offset. */
    uint32_t vni;           /* If 'tunnel': its key (24 bits). */
};

/* The smallest frame an honest sender's NIC pads to: 60 bytes (the
 * Ethernet minimum without FCS), plus 4 per VLAN tag.  In a tunnel, the
 * inner frame's (an encapsulation adds no padding of its own). */
#define AWAFS_ETH_MIN_FRAME 60

/* True if the IP frame of 'len' bytes parsed into 'h' carries more padding
 * after its IP packet than the Ethernet minimum needs: bytes that take the
 * link but that no flow counts (docs/reliability.md).  The parser notes it
 * in 'h->padded', so that the per-packet path need not work it out again. */
static inline bool
awafs_hdr_padded(const struct awafs_hdr *h, size_t len)
{
    size_t min = h->l2_ofs + AWAFS_ETH_MIN_FRAME
                 + (h->l3_ofs > h->l2_ofs + 14 ? h->l3_ofs - h->l2_ofs - 14
                                               : 0);

    return h->ip_version && len > h->ip_end && len > min;
}

#define AWAFS_TCP_FIN 0x01
#define AWAFS_TCP_SYN 0x02
#define AWAFS_TCP_RST 0x04
#define AWAFS_TCP_PSH 0x08
#define AWAFS_TCP_ACK 0x10

/* The completions a switch counts from a parsed header (docs/header.md),
 * each exactly once although segmentation offload copies the option onto
 * every segment of a super-packet:
 *
 *   - this segment's own completion, on the segment with PSH or FIN (the
 *     last of a super-packet);
 *   - the previous message's report, on the segment that starts at the
 *     message's end sequence number (the first of a super-packet). */
static inline bool
awafs_hdr_counts_completion(const struct awafs_hdr *h)
{
    return h->completed && (h->tcp_flags & (AWAFS_TCP_PSH | AWAFS_TCP_FIN));
}

static inline bool
awafs_hdr_counts_prev(const struct awafs_hdr *h)
{
    return h->has_prev && h->seq == h->prev_end;
}

/* Karuna's flow types (seed 003), from the header's Karuna word, which is
 * Karuna's socket mark: the deadline in ms in its top 12 bits (0: none), the
 * flow's size in KB in its low 20 bits (0: unknown). */
enum awafs_flow_type {
    AWAFS_FLOW_UNKNOWN,         /* Type 3: sieved by bytes sent ({alpha}). */
    AWAFS_FLOW_SIZED,           /* Type 2: split by its size ({beta}). */
    AWAFS_FLOW_DEADLINE,        /* Type 1: the reserved top queue. */
};

#define AWAFS_KARUNA_DEADLINE_MAX 0xfffu        /* ms */
#define AWAFS_KARUNA_SIZE_MAX 0xfffffu          /* KB */

static inline uint32_t
awafs_karuna_word(uint32_t deadline_ms, uint32_t size_kb)
{
    return deadline_ms << 20 | (size_kb & AWAFS_KARUNA_SIZE_MAX);
}

static inline uint32_t
awafs_karuna_deadline_ms(uint32_t word)
{
    return word >> 20;
}

/* The size in bytes; 0 if unknown. */
static inline uint64_t
awafs_karuna_size(uint32_t word)
{
    return (uint64_t) (word & AWAFS_KARUNA_SIZE_MAX) * 1024;
}

static inline enum awafs_flow_type
awafs_karuna_type(uint32_t word)
{
    return (awafs_karuna_deadline_ms(word) ? AWAFS_FLOW_DEADLINE
            : awafs_karuna_size(word) ? AWAFS_FLOW_SIZED
            : AWAFS_FLOW_UNKNOWN);
}

enum awafs_parse_result {
    AWAFS_PARSE_OK,           /* Header found and valid. */
    AWAFS_PARSE_NOT_TCP,      /* Not IPv4/IPv6 TCP: headerless. */
    AWAFS_PARSE_NO_OPTION,    /* Valid TCP without the AWAFS option. */
    AWAFS_PARSE_UNSUPPORTED,  /* IPv6 extension headers, IP fragments. */
    AWAFS_PARSE_MALFORMED,    /* Truncated or inconsistent frame/option. */
    AWAFS_PARSE_N_RESULTS,
    /* Returned by awafs_parse_fast() only, and never counted: a frame that
     * only awafs_parse_head__() reads. */
    AWAFS_PARSE_NOT_FAST = AWAFS_PARSE_N_RESULTS
};

/* Encapsulations the parser looks inside (docs/design.md, "Tunnels"). */
enum awafs_tunnel {
    AWAFS_TUNNEL_NONE,
    AWAFS_TUNNEL_VXLAN,         /* RFC 7348. */
    AWAFS_TUNNEL_GENEVE,        /* RFC 8926, carrying Ethernet. */
};

#define AWAFS_VXLAN_PORT 4789       /* IANA's. */
#define AWAFS_GENEVE_PORT 6081
#define AWAFS_TUNNEL_MAX_PORTS 8

/* The UDP destination ports whose datagrams are tunnels, and of which
 * kind.  No port: no tunnel is parsed. */
struct awafs_tunnel_ports {
    int n;
    uint16_t port[AWAFS_TUNNEL_MAX_PORTS];
    uint8_t type[AWAFS_TUNNEL_MAX_PORTS];       /* enum awafs_tunnel. */
};

/* What the parser met in a tunnelled frame: the encapsulation it read
 * inside, or why it did not. */
enum awafs_tunnel_event {
    AWAFS_TUN_VXLAN,            /* Read inside a VXLAN header. */
    AWAFS_TUN_GENEVE,           /* Read inside a Geneve header. */
    AWAFS_TUN_TRUNCATED,        /* The tunnel header or its inner frame cut
                                 * short or inconsistent (malformed). */
    AWAFS_TUN_BAD_OPTIONS,      /* Geneve options past the datagram
                                 * (malformed). */
    AWAFS_TUN_NESTED,           /* A tunnel inside a tunnel (unsupported). */
    AWAFS_TUN_UNKNOWN,          /* To a tunnel port, not a header read here:
                                 * VXLAN without its I flag, Geneve of
                                 * another version or not carrying Ethernet
                                 * (not TCP). */
    AWAFS_TUN_N_EVENTS
};

/* Counters bumped by awafs_parse(), one per result, and by
 * awafs_parse_tunnel(), also one per tunnel event. */
struct awafs_parse_stats {
    uint64_t n[AWAFS_PARSE_N_RESULTS];
    uint64_t tunnel[AWAFS_TUN_N_EVENTS];
};

/* awafs_parse_head() (below) of any frame, with no fast path. */
enum awafs_parse_result awafs_parse_head__(
    const void *frame, size_t head_len, size_t len,
    const struct awafs_tunnel_ports *ports, struct awafs_hdr *hdr,
    struct awafs_parse_stats *stats);

/* The Ethernet header's length, and the EtherTypes the parser reads. */
#define AWAFS_ETH_HLEN 14
#define AWAFS_ETH_TYPE_IPV4 0x0800
#define AWAFS_ETH_TYPE_IPV6 0x86dd
#define AWAFS_ETH_TYPE_VLAN 0x8100      /* 802.1Q tag. */
#define AWAFS_ETH_TYPE_QINQ 0x88a8      /* 802.1ad tag. */

#define AWAFS_IPV4_MIN_HLEN 20
#define AWAFS_TCP_MIN_HLEN 20
#define AWAFS_IPPROTO_TCP 6

/* The big-endian 16- and 32-bit values at 'p', read byte by byte (no
 * alignment assumed). */
static inline uint16_t
awafs_rd16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static inline uint32_t
awafs_rd32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16
           | (uint32_t) p[2] << 8 | p[3];
}

#define AWAFS_TCP_OPT_EOL 0
#define AWAFS_TCP_OPT_NOP 1
#define AWAFS_TCP_OPT_MSS 2
#define AWAFS_TCP_OPT_MSS_LEN 4

#if AWAFS_OPT_PREV_LEN != 8 || AWAFS_OPT_KARUNA_LEN != 4
#error "awafs_parse_tcp_options() reads the extras' lengths as bits"
#endif

/* awafs_parse_tcp_options() (below), option by option. */
static inline enum awafs_parse_result AWAFS_ALWAYS_INLINE
awafs_parse_tcp_options__(const uint8_t *opt, const uint8_t *end,
                          struct awafs_hdr *hdr)
{
    bool found = false;

    while (opt < end) {
        uint8_t kind = opt[0];
        uint8_t len;

        if (kind == AWAFS_TCP_OPT_EOL) {
            break;
        } else if (kind == AWAFS_TCP_OPT_NOP) {
            opt++;
            continue;
        }
        if (end - opt < 2) {
            return AWAFS_PARSE_MALFORMED;
        }
        len = opt[1];
        if (len < 2 || len > end - opt) {
            return AWAFS_PARSE_MALFORMED;
        }
        if (kind == AWAFS_TCP_OPT_MSS && len == AWAFS_TCP_OPT_MSS_LEN) {
            hdr->mss = awafs_rd16(opt + 2);
        } else if ((kind == AWAFS_OPT_KIND || kind == AWAFS_OPT_KIND_ALT)
            && len >= 4 && awafs_rd16(opt + 2) == AWAFS_OPT_EXID) {
            size_t base, extra;
            uint32_t word;

            if (found || len < AWAFS_OPT_LEN) {
                return AWAFS_PARSE_MALFORMED;
            }
            word = awafs_rd32(opt + 4);
            hdr->completed = (word & AWAFS_OPT_COMPLETED_BIT) != 0;
            hdr->bytes_sent = word & ~AWAFS_OPT_COMPLETED_BIT;
            /* 8 or 12 bytes by the completed bit, + 8 with a report of
             * the previous message, + 4 with the Karuna word, last. */
            base = hdr->completed ? AWAFS_OPT_LEN_COMPLETED : AWAFS_OPT_LEN;
            extra = len - base;
            /* 0, 4, 8 or 12 bytes: no bit set but these two.  A 'len'
             * below 'base' wraps to a value with others. */
            if (extra & ~(size_t) (AWAFS_OPT_PREV_LEN
                                   | AWAFS_OPT_KARUNA_LEN)) {
                return AWAFS_PARSE_MALFORMED;
            }
            hdr->flow_size = hdr->completed ? awafs_rd32(opt + 8) : 0;
            if (hdr->completed && hdr->flow_size < hdr->bytes_sent) {
                return AWAFS_PARSE_MALFORMED;
            }
            if (extra >= AWAFS_OPT_PREV_LEN) {
                hdr->has_prev = true;
                hdr->prev_size = awafs_rd32(opt + base);
                hdr->prev_end = awafs_rd32(opt + base + 4);
            }
            if (extra % AWAFS_OPT_PREV_LEN) {
                hdr->has_karuna = true;
                hdr->karuna = awafs_rd32(opt + len - AWAFS_OPT_KARUNA_LEN);
            }
            found = true;
        }
        opt += len;
    }
    return found ? AWAFS_PARSE_OK : AWAFS_PARSE_NO_OPTION;
}

/* NOP, NOP and the 10-byte timestamps option: what Linux puts before the
 * options a program adds to a data segment. */
#define AWAFS_TCP_TS_PREFIX 0x0101080au
#define AWAFS_TCP_TS_PREFIX_LEN 12

/* Reads the TCP options in [opt, end) into 'hdr': OK with the AWAFS option
 * read, NO_OPTION, or MALFORMED (a bad option length, a bad AWAFS option or
 * a second one).
 *
 * Most segments of an AWAFS sender carry the option in its short form (8
 * bytes, or 12 with the completed bit), last, after Linux's timestamps or
 * alone: read here with two compares rather than the loop, which reads
 * every other layout (and reads these alike, tests/unit/test-hdr.c). */
static inline enum awafs_parse_result AWAFS_ALWAYS_INLINE
awafs_parse_tcp_options(const uint8_t *opt, const uint8_t *end,
                        struct awafs_hdr *hdr)
{
    size_t left;

    if (opt == end) {           /* A segment from a host without an agent. */
        return AWAFS_PARSE_NO_OPTION;
    }
    if (end - opt >= AWAFS_TCP_TS_PREFIX_LEN
        && awafs_rd32(opt) == AWAFS_TCP_TS_PREFIX) {
        opt += AWAFS_TCP_TS_PREFIX_LEN;
    }
    left = end - opt;
    if ((left == AWAFS_OPT_LEN || left == AWAFS_OPT_LEN_COMPLETED)
        && awafs_rd32(opt) == ((uint32_t) AWAFS_OPT_KIND << 24
                               | (uint32_t) left << 16 | AWAFS_OPT_EXID)) {
        uint32_t word = awafs_rd32(opt + 4);
        bool completed = (word & AWAFS_OPT_COMPLETED_BIT) != 0;

        /* 12 bytes without the bit are the Karuna form: the loop's.  The
         * loop's reads, repeated: shared as inline helpers they took 3.5
         * instructions a packet more here (bench/instructions.py). */
        if (completed == (left == AWAFS_OPT_LEN_COMPLETED)) {
            hdr->completed = completed;
            hdr->bytes_sent = word & ~AWAFS_OPT_COMPLETED_BIT;
            hdr->flow_size = completed ? awafs_rd32(opt + 8) : 0;
            return (completed && hdr->flow_size < hdr->bytes_sent
                    ? AWAFS_PARSE_MALFORMED : AWAFS_PARSE_OK);
        }
    }
    return awafs_parse_tcp_options__(opt, end, hdr);
}

/* The inline part of awafs_parse_head() (below): reads the frame most
 * ports carry, Ethernet, IPv4 without options and TCP with its header in the
 * head, into 'hdr', with the checks awafs_parse_head__() makes of it, and
 * returns its result, without a call or a counter; returns
 * AWAFS_PARSE_NOT_FAST, having written nothing, for any other frame. */
static inline enum awafs_parse_result AWAFS_ALWAYS_INLINE
awafs_parse_fast(const void *frame, size_t head_len, size_t len,
                 struct awafs_hdr *hdr)
{
    const uint8_t *f = (const uint8_t *) frame;
    const uint8_t *l3 = f + AWAFS_ETH_HLEN;
    const uint8_t *l4 = l3 + AWAFS_IPV4_MIN_HLEN;
    size_t tot_len, tcp_hlen, head = head_len < len ? head_len : len;

    /* Offsets are 16-bit: a longer frame is awafs_parse_head__()'s. */
    if (len > UINT16_MAX
        || head < AWAFS_ETH_HLEN + AWAFS_IPV4_MIN_HLEN + AWAFS_TCP_MIN_HLEN
        || awafs_rd16(f + 12) != AWAFS_ETH_TYPE_IPV4
        || l3[0] != (4 << 4 | AWAFS_IPV4_MIN_HLEN / 4)
        || l3[9] != AWAFS_IPPROTO_TCP
        || awafs_rd16(l3 + 6) & 0x3fff) {   /* MF or a fragment offset. */
        return AWAFS_PARSE_NOT_FAST;
    }
    tot_len = awafs_rd16(l3 + 2);
    tcp_hlen = (l4[12] >> 4) * 4;
    if (tcp_hlen < AWAFS_TCP_MIN_HLEN
        || tot_len < AWAFS_IPV4_MIN_HLEN + tcp_hlen
        || tot_len > len - AWAFS_ETH_HLEN
        || AWAFS_ETH_HLEN + AWAFS_IPV4_MIN_HLEN + tcp_hlen > head) {
        return AWAFS_PARSE_NOT_FAST;
    }
    /* An assignment rather than memset(), which would keep the caller's
     * 'hdr' in memory: the fast path's lives in registers. */
    *hdr = (struct awafs_hdr) {};
    hdr->ip_version = 4;
    hdr->l3_ofs = AWAFS_ETH_HLEN;
    hdr->ip_end = AWAFS_ETH_HLEN + tot_len;
    hdr->tcp_flags = l4[13];
    hdr->seq = awafs_rd32(l4 + 4);
    hdr->ack = awafs_rd32(l4 + 8);
    hdr->l4_ofs = AWAFS_ETH_HLEN + AWAFS_IPV4_MIN_HLEN;
    hdr->payload_len = tot_len - AWAFS_IPV4_MIN_HLEN - tcp_hlen;
    /* awafs_hdr_padded() of an untagged frame. */
    hdr->padded = len > hdr->ip_end && len > AWAFS_ETH_MIN_FRAME;
    return awafs_parse_tcp_options(l4 + AWAFS_TCP_MIN_HLEN, l4 + tcp_hlen,
                                   hdr);
}

/* Parses the frame of 'len' bytes at 'frame', reading inside the tunnels
 * 'ports' names (NULL: none), over IPv4 or IPv6 with up to two VLAN tags
 * outside: the result and 'hdr' are then the inner frame's.  Bounds are
 * checked as strictly inside as outside; a tunnel inside the tunnel is not
 * read.  Of the frame only the first 'head_len' bytes are at 'frame' (a
 * copy of the start of a multi-segment packet, or all of it): lengths are
 * checked against 'len', and a header past the head is UNSUPPORTED.  A
 * head of AWAFS_HEAD_MAX bytes holds every header the parser reads.
 *
 * Inline, with no call, for the frame most ports carry
 * (awafs_parse_fast()); awafs_parse_head__() reads every other frame. */
static inline enum awafs_parse_result
awafs_parse_head(const void *frame, size_t head_len, size_t len,
                 const struct awafs_tunnel_ports *ports,
                 struct awafs_hdr *hdr, struct awafs_parse_stats *stats)
{
    enum awafs_parse_result r = awafs_parse_fast(frame, head_len, len, hdr);

    if (r == AWAFS_PARSE_NOT_FAST) {
        return awafs_parse_head__(frame, head_len, len, ports, hdr, stats);
    }
    if (stats) {
        stats->n[r]++;
    }
    return r;
}

/* False if the 'head_len' bytes at 'frame' start an Ethernet frame that
 * carries neither IP nor a VLAN tag: awafs_parse_head() would find
 * AWAFS_PARSE_NOT_TCP and nothing in it, and the per-packet path skips the
 * call.  True for anything it must read. */
static inline bool
awafs_frame_may_be_ip(const uint8_t *frame, size_t head_len)
{
    uint16_t type;

    if (head_len < AWAFS_ETH_HLEN) {
        return true;
    }
    type = awafs_rd16(frame + 12);
    return (type == AWAFS_ETH_TYPE_IPV4 || type == AWAFS_ETH_TYPE_IPV6
            || type == AWAFS_ETH_TYPE_VLAN || type == AWAFS_ETH_TYPE_QINQ);
}

/* awafs_parse_head() of a whole frame. */
static inline enum awafs_parse_result
awafs_parse_tunnel(const void *frame, size_t len,
                   const struct awafs_tunnel_ports *ports,
                   struct awafs_hdr *hdr, struct awafs_parse_stats *stats)
{
    return awafs_parse_head(frame, len, len, ports, hdr, stats);
}

/* awafs_parse_head() of a whole frame, outside any tunnel. */
static inline enum awafs_parse_result
awafs_parse(const void *frame, size_t len, struct awafs_hdr *hdr,
            struct awafs_parse_stats *stats)
{
    return awafs_parse_head(frame, len, len, NULL, hdr, stats);
}

/* Two VLAN tags, IPv6, UDP and Geneve with 252 bytes of options, then two
 * VLAN tags, IPv6 and TCP with 40 bytes of options: 452 bytes. */
#define AWAFS_HEAD_MAX 512
const char *awafs_parse_result_to_string(enum awafs_parse_result);
const char *awafs_tunnel_event_to_string(enum awafs_tunnel_event);
/* Adds 'port' for tunnels of 'type' to 'ports' unless present or full.
 * Returns false if full. */
bool awafs_tunnel_ports_add(struct awafs_tunnel_ports *, uint16_t port,
                            enum awafs_tunnel type);

/* Writes the option into 'buf' (at least AWAFS_OPT_LEN_COMPLETED bytes if
 * 'completed', else AWAFS_OPT_LEN), saturating both values.  Returns the
 * option length. */
size_t awafs_opt_encode(uint8_t *buf, uint64_t bytes_sent, bool completed,
                        uint64_t flow_size);
/* awafs_opt_encode() with the previous message's report added ('buf' has
 * AWAFS_OPT_PREV_LEN more bytes). */
size_t awafs_opt_encode_prev(uint8_t *buf, uint64_t bytes_sent,
                             bool completed, uint64_t flow_size,
                             uint64_t prev_size, uint32_t prev_end);

/* Appends the Karuna word 'word' to the option of 'len' bytes that 'buf'
 * holds ('buf' has AWAFS_OPT_KARUNA_LEN more bytes).  Returns the new
 * length. */
size_t awafs_opt_add_karuna(uint8_t *buf, size_t len, uint32_t word);

/* ---- Thresholds and the MLFQ classifier ---- */

/* An immutable set of demotion thresholds.  thr[i] separates queue i from
 * queue i + 1; unused entries are UINT64_MAX.  Non-decreasing: two equal
 * thresholds leave the queue between them empty. */
struct awafs_thresholds {
    uint64_t version;       /* 0 for the initial set, +1 per update. */
    int64_t updated_us;     /* When this set was computed. */
    uint32_t n_queues;
    uint32_t n_samples;     /* Window samples this set was computed from. */
    uint64_t thr[AWAFS_MAX_THRESHOLDS];
};

/* Queue for a flow that has sent 'bytes_sent' bytes: the number of thresholds
 * that are <= 'bytes_sent', always < t->n_queues.  Queue 0 has the highest
 * priority.  A flow that sent exactly thr[i] bytes is demoted past queue i.
 * Branch-free. */
static inline unsigned int
awafs_classify(const struct awafs_thresholds *t, uint64_t bytes_sent)
{
    /* Unused thresholds are UINT64_MAX: never reach them. */
    uint64_t b = bytes_sent - (bytes_sent == UINT64_MAX);
    unsigned int q = 0;

    /* Only the port's n_queues - 1: a chain of a compare per threshold. */
    for (uint32_t i = 0; i + 1 < t->n_queues; i++) {
        q += b >= t->thr[i];
    }
    return q;
}

/* Karuna's queue (seed 003) for a flow of 'type': queue 0 is reserved for
 * deadline flows; a flow of known 'size' goes to 1 + its queue by 'beta'
 * for its size or, once aged ('by_remaining'), for what it has left to send;
 * a flow of unknown size to 1 + its queue by 'bytes_sent' and 'alpha'.
 * 'alpha' and 'beta' are sets for the queues below the reserved one.  A
 * flow that has sent more than it said it would is of unknown size
 * (awafs_karuna_oversize()). */
static inline bool
awafs_karuna_oversize(enum awafs_flow_type type, uint64_t size,
                      uint64_t bytes_sent)
{
    return type == AWAFS_FLOW_SIZED && bytes_sent > size;
}

static inline unsigned int
awafs_karuna_classify(const struct awafs_thresholds *alpha,
                      const struct awafs_thresholds *beta,
                      enum awafs_flow_type type, uint64_t size,
                      uint64_t bytes_sent, bool by_remaining)
{
    if (type == AWAFS_FLOW_DEADLINE) {
        return 0;
    } else if (type == AWAFS_FLOW_SIZED
               && !awafs_karuna_oversize(type, size, bytes_sent)) {
        return 1 + awafs_classify(beta, (by_remaining ? size - bytes_sent
                                         : size));
    } else {
        return 1 + awafs_classify(alpha, bytes_sent);
    }
}

/* What awafs_karuna_queue() counts of the segments it places. */
struct awafs_karuna_stats {
    uint64_t type_packets[3];   /* With payload, by the enum awafs_flow_type
                                 * they were placed as. */
    uint64_t oversize;          /* Of a sized flow past its size. */
};

/* The queue of a segment parsed into 'h' of a flow of 'type' that has sent
 * 'bytes_sent' (by the switch's or the host's count), counted in 'stats':
 * awafs_karuna_classify(), except that a flow of known size whose segment
 * lacks the word or that has sent more than its size is sieved, and that
 * with a flow table 'sieve_queue' (else -1) is its queue by 'alpha' there,
 * 'aged' whether its message aged. */
static inline unsigned int
awafs_karuna_queue(const struct awafs_thresholds *alpha,
                   const struct awafs_thresholds *beta,
                   const struct awafs_hdr *h, enum awafs_flow_type type,
                   uint64_t bytes_sent, int sieve_queue, bool aged,
                   struct awafs_karuna_stats *stats)
{
    uint64_t size = h->has_karuna ? awafs_karuna_size(h->karuna) : 0;

    if (type == AWAFS_FLOW_SIZED
        && (!size || awafs_karuna_oversize(type, size, bytes_sent))) {
        stats->oversize += size != 0;
        type = AWAFS_FLOW_UNKNOWN;
    }
    if (h->payload_len) {
        /* Byte-free segments go by their own budget. */
        stats->type_packets[type]++;
    }
    if (type == AWAFS_FLOW_UNKNOWN && sieve_queue >= 0) {
        return 1 + sieve_queue;
    }
    return awafs_karuna_classify(alpha, beta, type, size, bytes_sent, aged);
}

/* Adds 'b' into 'a' (the counts of several instances or ports). */
static inline void
awafs_karuna_stats_add(struct awafs_karuna_stats *a,
                       const struct awafs_karuna_stats *b)
{
    for (size_t t = 0; t < sizeof a->type_packets / sizeof *a->type_packets;
         t++) {
        a->type_packets[t] += b->type_packets[t];
    }
    a->oversize += b->oversize;
}

/* ---- Egress scheduler: strict-priority queues, shaping, ECN ---- */

#define AWAFS_SCHED_MAX_LIMIT (1u << 20)    /* Packets per port. */

struct awafs_queue_stats {
    /* Every packet that arrived ('enq', their sum) was sent ('tx'),
     * dropped at a full buffer ('drop'), freed unsent ('flush'), or is
     * still queued ('backlog'). */
    uint64_t enq_packets, enq_bytes;
    uint64_t tx_packets, tx_bytes;
    uint64_t drop_packets, drop_bytes;
    uint64_t flush_packets, flush_bytes;
    uint64_t ecn_marks;                 /* Sent with CE set by AWAFS. */
    uint64_t aged_packets;              /* Sent early by the guard. */
    uint32_t sojourn_max;               /* Longest a sent packet waited, in
                                         * the ticks given to enqueue/peek. */
    uint64_t backlog_packets, backlog_bytes;
};

struct awafs_sched;

/* 'n_queues' FIFOs (queue 0 first) sharing a buffer of 'limit' packets. */
struct awafs_sched *awafs_sched_create(uint32_t n_queues, uint32_t limit);
void awafs_sched_destroy(struct awafs_sched *);   /* Must be empty. */
size_t awafs_sched_memsize(uint32_t n_queues, uint32_t limit);

/* ECN: an ECN-capable packet is marked CE if it is queued and finds more
 * than 'threshold' packets (0: never) ahead of it in the whole buffer or,
 * with 'per_queue', in its own queue. */
void awafs_sched_set_ecn(struct awafs_sched *, uint32_t threshold,
                         bool per_queue);
/* Starvation guard: a packet of queue 1 or lower that has waited more than
 * 'max_wait' ticks (0: never) is sent before the higher queues' packets. */
void awafs_sched_set_max_wait(struct awafs_sched *, uint32_t max_wait);

/* Appends 'pkt' to queue 'q' (clamped to the last queue).  With the buffer
 * full, drops the newest packet of the lowest-priority non-empty queue if
 * that queue is below 'q', otherwise 'pkt' itself.  Returns the dropped
 * packet, for the caller to free, or NULL.  No ECN; queued at time 0. */
void *awafs_sched_enqueue(struct awafs_sched *, unsigned int q, void *pkt,
                          uint32_t len);
/* awafs_sched_enqueue() for 'n' packets, 'queues[i]' being the queue of
 * 'pkts[i]' and 'lens[i]' its length, queued at 'now' (ticks of any clock,
 * modulo 2^32, the same for every call).  'ecn[i]' is in: nonzero if
 * 'pkts[i]' is ECN-capable; out: nonzero if the caller must set CE on it
 * (decided after the drop decision); 'ecn' may be NULL: no marking.  Stores
 * the packets to drop in 'victims' (room for 'n') and returns how many. */
size_t awafs_sched_enqueue_burst(struct awafs_sched *, const uint8_t *queues,
                                 void **pkts, const uint32_t *lens,
                                 uint8_t *ecn, size_t n, uint32_t now,
                                 void **victims);
/* Cut-through: a scheduler that holds nothing (awafs_sched_backlog() is 0)
 * delays no one, so the caller may send a burst straight to the NIC instead
 * of queueing it, and reports here what the NIC took: of the 'n' packets
 * (arguments as for awafs_sched_enqueue_burst()), the first 'n_sent' were
 * sent, counted by their queues as sent without waiting, and the rest is
 * queued in priority order as awafs_sched_enqueue_burst() does, whose result
 * this returns.  Returns in '*sent_bytes' the bytes to charge the shaper for
 * those sent, as awafs_sched_commit() does. */
size_t awafs_sched_send_direct(struct awafs_sched *, const uint8_t *queues,
                               void **pkts, const uint32_t *lens,
                               uint8_t *ecn, size_t n, size_t n_sent,
                               uint32_t now, void **victims,
                               uint64_t *sent_bytes);
/* Copies up to 'max' packets in strict priority order, FIFO within a queue,
 * into 'pkts' without removing them; the guard's aged packets first.  Stops
 * when 'byte_budget' is spent (a packet may start while any budget is
 * left), each packet costing its length and AWAFS_WIRE_OVERHEAD. */
size_t awafs_sched_peek(struct awafs_sched *, void **pkts, size_t max,
                        int64_t byte_budget, uint32_t now);
/* Removes the first 'n' packets the last awafs_sched_peek() returned (those
 * that were sent) and returns the bytes to charge the shaper: their lengths
 * and AWAFS_WIRE_OVERHEAD for each (the queues count only the lengths). */
uint64_t awafs_sched_commit(struct awafs_sched *, size_t n);
/* Removes up to 'max' queued packets into 'pkts', for the caller to free,
 * counting them as flushed.  Returns how many. */
size_t awafs_sched_flush(struct awafs_sched *, void **pkts, size_t max);
/* Packets queued.  Safe from any thread, without the caller's lock. */
uint32_t awafs_sched_backlog(const struct awafs_sched *);
void awafs_sched_get_queue_stats(const struct awafs_sched *, unsigned int q,
                                 struct awafs_queue_stats *);

/* Bytes a frame occupies on an Ethernet wire beyond its length as the NIC
 * counts it (without FCS): preamble and start delimiter 8, inter-frame gap
 * 12, FCS 4.  The shaper charges it for every frame, so that a rate is a
 * wire rate; byte counters shown to users leave it out. */
#define AWAFS_WIRE_OVERHEAD 24

/* Token bucket in bytes, on any clock of 'hz' ticks per second (the
 * datapath uses the TSC).  rate 0 means unlimited.  The refill is exact:
 * what a refill adds below one byte is kept for the next. */
struct awafs_tb {
    uint64_t rate;          /* Bytes per second. */
    uint64_t burst;         /* Bytes, at most AWAFS_TB_MAX_BURST. */
    uint64_t hz;
    int64_t tokens;         /* May go one packet below zero. */
    uint64_t last;
    uint64_t frac;          /* Credit below one byte, in 1/hz bytes. */
    uint64_t full_ticks;    /* Ticks that refill any debt to 'burst'. */
};

/* Bounds that keep the refill's product ticks x rate within 64 bits (with
 * 'hz' up to 8 GHz), with no 128-bit arithmetic, which 32-bit targets
 * lack. */
#define AWAFS_TB_MAX_BURST (1ULL << 30)
#define AWAFS_TB_MAX_DEBT (1ULL << 20)

void awafs_tb_init(struct awafs_tb *, uint64_t rate_bytes, uint64_t burst,
                   uint64_t hz, uint64_t now);
/* Refills and returns the bytes that may be sent now (INT64_MAX if
 * unlimited). */
int64_t awafs_tb_budget(struct awafs_tb *, uint64_t now);
/* Refills and returns true if the bucket holds all of 'bytes' now. */
bool awafs_tb_allows(struct awafs_tb *, uint64_t now, uint64_t bytes);
void awafs_tb_consume(struct awafs_tb *, uint64_t bytes);
/* Makes the bucket 'burst' bytes (at most AWAFS_TB_MAX_BURST), keeping what
 * it holds up to that. */
void awafs_tb_set_burst(struct awafs_tb *, uint64_t burst);

/* The burst a bucket of 'rate' bytes a second needs if its sender, while it
 * holds packets, comes back only every 'gap_us' microseconds: the link's
 * bytes in that time.  The bucket fills while the sender is away, and what
 * would go beyond its burst is lost, as time the link stands idle: with a
 * burst of B bytes and a gap of G seconds the link carries at most
 * B / (rate x G) of its rate.  'gap_us' is taken within ['min_us',
 * 'max_us']. */
uint64_t awafs_burst_for_gap(uint64_t rate, uint64_t gap_us,
                             uint64_t min_us, uint64_t max_us);

/* How long a sender left packets waiting between two of its visits, as a
 * histogram on a log2 scale of clock ticks: n[i] counts gaps of [2^(i-1),
 * 2^i) ticks (n[0] those of 0), the last bucket every longer one too.  Its
 * sender adds to it; another thread may read it, for
 * awafs_gaps_longest(). */
#define AWAFS_GAP_BUCKETS 32
struct awafs_gaps {
    uint64_t n[AWAFS_GAP_BUCKETS];
};

static inline void
awafs_gaps_add(struct awafs_gaps *g, uint64_t ticks)
{
    unsigned int b = ticks ? 64 - __builtin_clzll(ticks) : 0;

    g->n[b < AWAFS_GAP_BUCKETS ? b : AWAFS_GAP_BUCKETS - 1]++;
}

/* Adds 'g' into 'sum'. */
void awafs_gaps_sum(struct awafs_gaps *sum, const struct awafs_gaps *g);
/* The longest gap counted in 'now' since 'before' (an earlier copy of it),
 * as its bucket's bound in ticks (at most twice the gap); 0 if none. */
uint64_t awafs_gaps_longest(const struct awafs_gaps *now,
                            const struct awafs_gaps *before);

/* Byte-free TCP segments (no payload: ACKs, SYNs, FINs, RSTs) delay no one
 * and pace their flows, so they go to queue 0, but only while the port's
 * budget for them lasts -- else a tenant sending nothing but empty segments
 * would own the top of a strict-priority port: a token bucket of
 * 1/AWAFS_BYTE_FREE_SHARE of the port's rate and AWAFS_BYTE_FREE_BURST
 * bytes, charged each frame's length.  Beyond it, the lowest queue
 * (docs/design.md, "Byte-free segments"). */
#define AWAFS_BYTE_FREE_SHARE 16
#define AWAFS_BYTE_FREE_BURST 65536
/* The share of that budget one source may spend, where the switch tells
 * sources apart (awafs_flowtab_set_byte_free_rate()): a half, 1/32 of the
 * port, still carries the delayed ACKs of a download that fills the
 * reverse link (84 wire bytes per two 1538-byte frames: 2.7 %). */
#define AWAFS_BYTE_FREE_SOURCE_SHARE 2

/* The rate a port's budgets take when its link speed is unknown: 10 Gb/s,
 * in bytes per second. */
#define AWAFS_UNKNOWN_PORT_RATE (10000000000ULL / 8)

/* Sets up 'budget' for a port of 'rate' bytes per second (0: unknown,
 * AWAFS_UNKNOWN_PORT_RATE) on a clock of 'hz' ticks per second. */
void awafs_byte_free_init(struct awafs_tb *budget, uint64_t rate,
                          uint64_t hz, uint64_t now);
/* The queue of a byte-free segment in a frame of 'len' bytes at 'now', of
 * a port with 'n_queues' queues; counts in '*over' one beyond the
 * budget. */
unsigned int awafs_byte_free_queue(struct awafs_tb *budget, uint64_t now,
                                   uint32_t len, unsigned int n_queues,
                                   uint64_t *over);

/* The offset and IP version of the header a CE mark for 'h' goes on: a
 * tunnelled packet's outer one (RFC 6040), else its own. */
static inline uint16_t
awafs_ecn_l3_ofs(const struct awafs_hdr *h)
{
    return h->tunnel ? h->outer_l3_ofs : h->l3_ofs;
}

static inline uint8_t
awafs_ecn_ip_version(const struct awafs_hdr *h)
{
    return h->tunnel ? h->outer_ip_version : h->ip_version;
}

/* True if the IP header of 'version' at 'ofs' in 'frame' of 'len' bytes is
 * ECT(0) or ECT(1). */
static inline bool
awafs_ip_ect(const uint8_t *frame, size_t len, uint8_t version, uint16_t ofs)
{
    const uint8_t *ip = frame + ofs;

    if (version == 4 && (size_t) ofs + 20 <= len) {
        return (ip[1] & 3) == 1 || (ip[1] & 3) == 2;
    } else if (version == 6 && (size_t) ofs + 40 <= len) {
        uint8_t ecn = (ip[1] >> 4) & 3;

        return ecn == 1 || ecn == 2;
    }
    return false;
}

/* True if the IPv4 or IPv6 packet parsed into 'h' is ECT(0) or ECT(1).  A
 * tunnelled one only if both its outer and its inner IP headers are: the
 * mark goes on the outer header, and a decapsulator that follows RFC 6040
 * copies it inwards, or drops the packet if the inner is not ECT.  Inline,
 * for the per-packet path of a port that marks. */
static inline bool
awafs_ecn_capable(const uint8_t *frame, size_t len,
                  const struct awafs_hdr *h)
{
    /* RFC 6040, section 4.2: a decapsulator drops a CE outer with a
     * Not-ECT inner, so a tunnelled packet must be ECT on both. */
    return (awafs_ip_ect(frame, len, awafs_ecn_ip_version(h),
                         awafs_ecn_l3_ofs(h))
            && (!h->tunnel
                || awafs_ip_ect(frame, len, h->ip_version, h->l3_ofs)));
}

/* Sets CE on an ECT(0)/ECT(1) IPv4 or IPv6 packet parsed into 'h' (IPv4
 * checksum updated), on the outer header of a tunnelled one whose inner is
 * ECT.  Returns true if it marked the packet. */
bool awafs_ecn_set_ce(uint8_t *frame, size_t len, const struct awafs_hdr *h);

/* ---- Completed-size ring ---- */

#define AWAFS_RING_MAX_CAPACITY (1u << 24)

struct awafs_ring_entry {
    int64_t ts_us;
    uint64_t size;
    uint32_t source;            /* awafs_source_id() of its sender, 0 if
                                 * unknown. */
};

struct awafs_ring;

/* 'capacity' is rounded up to a power of 2.  Returns NULL on bad capacity or
 * out of memory. */
struct awafs_ring *awafs_ring_create(uint32_t capacity);
void awafs_ring_destroy(struct awafs_ring *);
size_t awafs_ring_memsize(uint32_t capacity);
uint32_t awafs_ring_capacity(const struct awafs_ring *);

/* Any thread, concurrently: never blocks, never allocates.  Returns false and
 * counts a drop when the ring is full. */
bool awafs_ring_push(struct awafs_ring *, int64_t ts_us, uint64_t size);
/* The same, for a completion sent by 'source' (awafs_source_id()). */
bool awafs_ring_push_from(struct awafs_ring *, int64_t ts_us, uint64_t size,
                          uint32_t source);
/* The same as awafs_ring_push_from() without a compare-and-swap, for a
 * ring that one thread alone pushes into. */
bool awafs_ring_push_sp(struct awafs_ring *, int64_t ts_us, uint64_t size,
                        uint32_t source);
/* One consumer thread at a time. */
size_t awafs_ring_pop_burst(struct awafs_ring *, struct awafs_ring_entry *,
                            size_t max);
/* The entry the next pop takes, left in the ring; false if there is none.
 * The consumer thread only. */
bool awafs_ring_peek(const struct awafs_ring *, struct awafs_ring_entry *);
uint64_t awafs_ring_pushed(const struct awafs_ring *);
uint64_t awafs_ring_dropped(const struct awafs_ring *);

/* The ring of the window that a completed message of a flow of 'type'
 * teaches: without Karuna ('beta' null) 'alpha'; with it, 'alpha' ({alpha})
 * for a flow of unknown size, 'beta' for one of known size, and none (null)
 * for a deadline flow, which takes the reserved queue whatever its size. */
static inline struct awafs_ring *
awafs_karuna_ring(struct awafs_ring *alpha, struct awafs_ring *beta,
                  enum awafs_flow_type type)
{
    return (!beta || type == AWAFS_FLOW_UNKNOWN ? alpha
            : type == AWAFS_FLOW_SIZED ? beta
            : NULL);
}

/* ---- Sources: per-source completion rate limit, window weights ---- */

#define AWAFS_SRCLIMIT_MAX_SLOTS (1u << 16)

/* A 32-bit name of the source address 'addr' (IPv4 in its first 4 bytes,
 * the rest zero; or IPv6) under the secret 'key': senders cannot choose
 * addresses that share a name with another's. */
uint32_t awafs_source_id(const uint32_t key[4], const uint8_t addr[16]);

struct awafs_srclimit;

/* Token buckets of 'rate' completions per second and 'burst' completions
 * for up to 'n_slots' sources (rounded up to a power of 2).  Each source is
 * charged to two buckets chosen by a keyed hash and is limited only when
 * both are empty, so a source slows another only when it has both of the
 * other's buckets.  'seed' should be random and secret.
 * NULL if an argument is 0 or too large, or out of memory. */
struct awafs_srclimit *awafs_srclimit_create(uint32_t n_slots, uint32_t rate,
                                             uint32_t burst, uint64_t seed);
size_t awafs_srclimit_memsize(uint32_t n_slots);
void awafs_srclimit_destroy(struct awafs_srclimit *);
/* True if the source with address 'addr' (IPv4 in its first 4 bytes, the
 * rest zero; or IPv6) may report one more completion at 'now_us'; false
 * counts it as limited.  One thread at a time. */
bool awafs_srclimit_allow(struct awafs_srclimit *, const uint8_t addr[16],
                          int64_t now_us);
uint64_t awafs_srclimit_limited(const struct awafs_srclimit *);

/* ---- Switch-side flow table (trust=switch and trust=verify) ---- */

/* Everything that tells two flows apart at a port: a tunnelled frame's
 * inner 5-tuple and VLANs with its tunnel and key, so that two tenants with
 * the same inner addresses are two flows.  Fields a caller does not know
 * are zero ('pad' always). */
struct awafs_flow_key {
    uint8_t ip_version;
    uint8_t tunnel;             /* enum awafs_tunnel. */
    uint16_t sport, dport;
    uint8_t src[16], dst[16];   /* IPv4 in the first 4 bytes. */
    uint16_t vlan[2];           /* VLAN IDs, outer first; 0: untagged. */
    uint8_t vni[3];             /* The tunnel key, as on the wire. */
    uint8_t pad;
};

struct awafs_flow_result {
    uint64_t bytes_sent;        /* The switch's count for this segment. */
    unsigned int queue;         /* Its queue: never above (lower index)
                                 * one its message already used. */
    int n_completed;            /* Messages this segment ended (0-2). */
    uint64_t completed[2];      /* Their sizes. */
    uint8_t completed_type[2];  /* Their enum awafs_flow_type. */
    uint8_t type;               /* The current message's, from the header's
                                 * Karuna word (unknown without one). */
    bool aged;                  /* The current message aged (Karuna), at
                                 * least once. */
    bool byte_free_refused;     /* A byte-free segment beyond its source's
                                 * budget for them: the lowest queue. */
};

struct awafs_flowtab_stats {
    uint64_t flows;             /* Entries of open connections. */
    uint64_t evictions;         /* Entries pushed out by a full probe. */
    uint64_t completions;
    uint64_t partial;           /* Messages ended that the switch did not
                                 * see start: not reported as completions. */
    uint64_t held_down;         /* Segments kept in their message's queue
                                 * although the thresholds (or a resent
                                 * segment's offset) would promote them. */
    uint64_t tardy_flows;       /* Flows that retransmitted. */
    uint64_t tardy_packets;     /* Their segments put in queue 0. */
    uint64_t timeouts;          /* Retransmissions after a silence. */
    uint64_t aged_flows;        /* Times messages aged by timeouts. */
    /* What the receiver would not take (lib/awafs-flowtab.c): */
    uint64_t fin_ignored;       /* FINs not contiguous with the stream. */
    uint64_t rst_ignored;       /* RSTs not exactly at its end. */
    uint64_t syn_ignored;       /* SYNs on a connection that sent data. */
    uint64_t out_of_window;     /* Segments too far beyond its end. */
    uint64_t late_refused;      /* Data after a FIN or RST, lowest queue. */
    uint64_t midstream_packets; /* Segments of messages whose start the
                                 * switch did not see: lowest queue. */
    uint64_t gaps_trimmed;      /* Completions cut to the bytes
                                 * forwarded (a gap in the sequence). */
    uint64_t host_boundaries;   /* Verify: boundaries only the host
                                 * reported (the next message keeps the
                                 * queue the last one reached). */
    uint64_t deadlines_refused; /* Karuna deadline segments typed by their
                                 * declared size instead. */
    uint64_t limited;           /* Completions over their source's limit
                                 * (awafs_flowtab_set_srclimit()). */
    uint64_t byte_free_limited; /* Byte-free segments beyond their
                                 * source's budget for them. */
    uint64_t queue0_limited;    /* Segments sent to queue 1 because their
                                 * source was over its queue-0 rate. */
};

struct awafs_flowtab;

/* A table of 'capacity' (rounded up to a power of 2, 8 to 2^24) flows.  Its
 * hash is keyed from 'seed', which should be random and secret: a sender
 * who could compute it could pick 5-tuples that evict another's flows. */
struct awafs_flowtab *awafs_flowtab_create(uint32_t capacity, uint64_t seed);
/* The same with the hash's whole 128-bit SipHash key, which should come
 * from the system's entropy (getrandom()): awafs_flowtab_create() spreads
 * 64 bits of seed over it. */
struct awafs_flowtab *awafs_flowtab_create_keyed(uint32_t capacity,
                                                 const uint64_t key[2]);
/* Completions of a source over 'limit' (not owned, which must outlive the
 * table; NULL: none) are not reported, and counted in 'limited' (of the
 * stats and of awafs_srclimit_limited()). */
void awafs_flowtab_set_srclimit(struct awafs_flowtab *,
                                struct awafs_srclimit *limit);
/* Every message starts in queue 0, so a source that opens message after
 * message (loops of tiny connections) would own the top of a strict-
 * priority port.  With a nonzero 'rate' (bytes per second), each source
 * may send that much in queue 0 (segments with data, each charged its
 * frame up to the end of its IP packet), with a burst of
 * AWAFS_QUEUE0_BURST bytes; a segment of a source beyond it goes to queue
 * 1, and its message stays there, counted in 'queue0_limited'.  Each
 * source has two of AWAFS_QUEUE0_SOURCES buckets, by a keyed hash of its
 * address (docs/design.md, "Queue 0 per source").  Refills every
 * bucket. */
#define AWAFS_QUEUE0_SOURCES 256
#define AWAFS_QUEUE0_BURST 65536
/* The share of a port's rate the switch gives each source in queue 0. */
#define AWAFS_QUEUE0_SHARE 4
void awafs_flowtab_set_queue0_rate(struct awafs_flowtab *, uint64_t rate);
/* Byte-free segments (no payload: ACKs, SYNs, FINs) take queue 0 within
 * the port's budget for them (awafs_byte_free_queue()), which one source
 * alone could spend.  With a nonzero 'rate' (bytes per second), each
 * source may send that much of them, with a burst of
 * AWAFS_BYTE_FREE_SOURCE_BURST bytes, each charged its frame up to the end
 * of its IP packet, in the same two buckets per source as queue 0's
 * budget; one beyond it is counted in 'byte_free_limited' and marked
 * 'byte_free_refused' (the caller sends it to the lowest queue).  Refills
 * every bucket. */
#define AWAFS_BYTE_FREE_SOURCE_BURST (AWAFS_BYTE_FREE_BURST \
                                      / AWAFS_BYTE_FREE_SOURCE_SHARE)
void awafs_flowtab_set_byte_free_rate(struct awafs_flowtab *, uint64_t rate);
/* The first slot 'key' probes (for tests). */
uint32_t awafs_flowtab_slot(const struct awafs_flowtab *,
                            const struct awafs_flow_key *key);
void awafs_flowtab_destroy(struct awafs_flowtab *);
size_t awafs_flowtab_memsize(uint32_t capacity);
/* Tardy flows (see awafs-flowtab.c): their segments go to queue 0 while
 * their message has sent less than 'limit' bytes (TFS+), always with
 * UINT64_MAX (TFS), never with 0 (the default). */
void awafs_flowtab_set_tardy(struct awafs_flowtab *, uint64_t limit);
/* A retransmission after 'rto_min_us' of silence is a timeout (default
 * AWAFS_FLOWTAB_RTO_MIN_US); a message ages at every kappa-th timeout, kappa
 * uniform in [kappa_min, kappa_max] (at most AWAFS_FLOWTAB_MAX_KAPPA) per
 * flow; no aging with 0, 0 (the default).  False, changing nothing, if the
 * values are not valid. */
#define AWAFS_FLOWTAB_RTO_MIN_US 200000     /* Linux's TCP_RTO_MIN. */
#define AWAFS_FLOWTAB_MAX_KAPPA 15          /* An entry counts 4 bits. */
bool awafs_flowtab_set_aging(struct awafs_flowtab *, int64_t rto_min_us,
                             unsigned int kappa_min, unsigned int kappa_max);
void awafs_flowtab_get_stats(const struct awafs_flowtab *,
                             struct awafs_flowtab_stats *);

/* Accounts the TCP segment parsed into 'h' (sequence and ACK numbers,
 * payload length, flags) of flow 'key'.  Fills 'r' with the bytes the
 * flow's current message had sent before the segment and the sizes of the
 * messages it ended (docs/design.md, "Message boundaries"):
 *
 *   - before the segment, the previous message, if its sender has since
 *     acknowledged new data from its peer (the exchange turned around), or
 *     if its last data segment had PSH and the flow then sent nothing for
 *     longer than 'idle_us' before this segment's new data;
 *   - with the segment, the current message, on FIN or RST;
 *   - with 'host_reports' (trust=verify), an end host's completion in 'h'
 *     that the switch counts (awafs_hdr_counts_completion(),
 *     awafs_hdr_counts_prev()) and whose size equals the switch's own
 *     count of that message. */
void awafs_flowtab_update(struct awafs_flowtab *,
                          const struct awafs_flow_key *key,
                          const struct awafs_hdr *h, bool host_reports,
                          int64_t now_us, int64_t idle_us,
                          const struct awafs_thresholds *thr,
                          struct awafs_flow_result *r);
/* Checks the next 'n' entries for flows idle longer than 'idle_us' after a
 * PSH segment, and longer than a retransmission timeout, and ends their
 * messages; stores their sizes in 'sizes' and, if nonnull, their types in
 * 'types' and their source addresses in 'srcs' (room for 'n' each) and
 * returns how many. */
size_t awafs_flowtab_sweep(struct awafs_flowtab *, uint32_t n,
                           int64_t now_us, int64_t idle_us, uint64_t *sizes,
                           uint8_t *types, uint8_t (*srcs)[16]);
/* The 5-tuple of a frame that awafs_parse() found TCP in (l4_ofs set);
 * false otherwise. */
bool awafs_flow_key_from_frame(const void *frame, size_t len,
                               const struct awafs_hdr *,
                               struct awafs_flow_key *);

/* ---- Thresholds that minimise a model of mean FCT (awafs-fctmodel.c) ---- */

#define AWAFS_FCT_MAX_POINTS 128    /* Candidate thresholds weighed. */
#define AWAFS_FCT_MAX_INPUT 2048    /* Points a window hands the solver. */
/* A new set replaces the one in force only if the model predicts the one in
 * force a mean FCT above the new one's by more than this share plus
 * 1/sqrt(n) for n completions in the window, about the sampling error of a
 * mean over them: no flapping between near optima of a steady workload's
 * samples, however few. */
#define AWAFS_FCT_HYSTERESIS 0.01
/* Or a mean slowdown above AWAFS_FCT_SLOWDOWN_GAIN times the new one's and
 * that margin: a few large flows' own bytes can make up most of the mean
 * FCT, hiding what every short flow waits.  The optima of successive
 * windows of a steady workload can differ in slowdown by more than the
 * margin alone (they are optima of the mean), so a change needs more.
 * (Solved for the mean slowdown, AWAFS_FCT_MLFQ_SLOWDOWN, the two swap:
 * the margin is on the slowdown, the gain on the mean FCT; solved for the
 * short flows, AWAFS_FCT_MLFQ_SHORT, the margin is on what it minimises,
 * the gain on every flow's mean FCT.) */
#define AWAFS_FCT_SLOWDOWN_GAIN 2

enum awafs_fct_model {
    AWAFS_FCT_MLFQ,             /* M/G/1 with multilevel service. */
    AWAFS_FCT_MLFQ_SLOWDOWN,    /* The same, solved for its mean slowdown. */
    AWAFS_FCT_MLFQ_SHORT,       /* The same, solved for the mean FCT of the
                                 * flows up to a size, the larger ones
                                 * weighing AWAFS_FCT_LONG_WEIGHT each. */
    AWAFS_FCT_KARUNA,           /* PIAS's and Karuna's: flow fractions. */
};

/* The models by the name an operator configures them with (objective=...):
 * "fct", "slowdown", "short" and "pias", listed in AWAFS_FCT_MODEL_NAMES
 * for messages.  False if 'name' names none. */
#define AWAFS_FCT_MODEL_NAMES "fct, slowdown, short or pias"
bool awafs_fct_model_from_string(const char *name, enum awafs_fct_model *);

/* What a flow above the short size weighs in AWAFS_FCT_MLFQ_SHORT's mean,
 * a short flow weighing 1: enough to order the levels that hold no short
 * flow (which cost short flows nothing), too little to trade a short
 * flow's wait for theirs. */
#define AWAFS_FCT_LONG_WEIGHT 0.01
/* The size up to which a flow is short unless configured otherwise: the
 * literature's (PIAS, Karuna, the thesis: (0, 100 KB]). */
#define AWAFS_FCT_SHORT_SIZE 100000

/* 'count' flows of 'size' bytes. */
struct awafs_fct_point {
    uint64_t size;
    uint64_t count;
};

/* Thresholds and what the model predicts of them, in byte times (the time
 * the port takes to send a byte). */
struct awafs_fct_plan {
    uint32_t n_queues;
    uint64_t thr[AWAFS_MAX_THRESHOLDS];
    double mean;                            /* Mean FCT of all flows. */
    double slowdown;        /* MLFQ models: the flows' mean FCT over
                             * their sizes (1: none waits); 0 otherwise. */
    double short_mean;      /* AWAFS_FCT_MLFQ_SHORT: mean FCT of the flows
                             * up to the short size (0: none); 0
                             * otherwise. */
    double goal;            /* What the model's solver minimises: 'mean'
                             * (also KARUNA), 'slowdown', or for
                             * AWAFS_FCT_MLFQ_SHORT that mean with each
                             * larger flow weighing AWAFS_FCT_LONG_WEIGHT. */
    double queue_fct[AWAFS_MAX_QUEUES];     /* Of the flows ending in each. */
    double queue_flows[AWAFS_MAX_QUEUES];   /* Share of flows ending there. */
};

/* The 'n_queues' - 1 thresholds, at sizes of 'points' (ascending sizes),
 * that minimise 'model''s mean FCT (AWAFS_FCT_MLFQ_SLOWDOWN: its mean
 * slowdown; AWAFS_FCT_MLFQ_SHORT: the mean FCT of the flows up to
 * 'short_size' bytes, which the other models ignore) at 'load' (of the
 * port's rate, kept below 0.99).  False if 'points' hold no flow or
 * 'n_queues' is out of range.  Floating point: never on a PMD thread. */
bool awafs_fct_solve(enum awafs_fct_model, uint64_t short_size,
                     const struct awafs_fct_point *, size_t n,
                     uint32_t n_queues, double load,
                     struct awafs_fct_plan *);
/* What 'model' predicts of thresholds 'thr' (non-decreasing). */
bool awafs_fct_evaluate(enum awafs_fct_model, uint64_t short_size,
                        const struct awafs_fct_point *, size_t n,
                        uint32_t n_queues, double load, const uint64_t *thr,
                        struct awafs_fct_plan *);

/* The port's load that the model is given: the wire bytes it sent and
 * dropped, a share of its rate, averaged over about 'window_us', or over the
 * time measured so far while that is shorter.  (An average that started
 * from 0 would say a busy port is idle for about a window, and the model
 * keeps the initial thresholds at low load.) */
struct awafs_load {
    double load;                /* The average, a share of the rate. */
    uint64_t bytes;             /* The port's wire bytes at 'last_us'. */
    int64_t last_us;            /* The last reading, */
    int64_t start_us;           /* the first, */
    bool started;               /* if any. */
};

/* Reads the port's wire bytes 'bytes' at 'now_us', for a port of 'rate_bps'
 * (nonzero), into 'l' (zero-initialised before the first reading, which
 * measures nothing; so does a reading whose counters went back, as they do
 * when a port's instances are replaced).  Returns the average. */
double awafs_load_update(struct awafs_load *l, int64_t now_us,
                         uint64_t bytes, uint64_t rate_bps,
                         int64_t window_us);
/* The wire bytes one queue of a port carried, its share of the reading
 * above: what it sent and dropped, with AWAFS_WIRE_OVERHEAD for every
 * frame. */
uint64_t awafs_queue_wire_bytes(const struct awafs_queue_stats *);

/* ---- Histogram window: O(1) memory ---- */

#define AWAFS_HIST_SUB_BITS 6       /* 64 buckets per power of 2. */
#define AWAFS_HIST_MAX_BITS 36      /* Sizes saturate at 64 GiB. */
#define AWAFS_HIST_SLICES 16        /* Time slices per window. */
#define AWAFS_HIST_SOURCES 256      /* Sources told apart, a power of 2. */

/* A window of completed sizes kept as time-sliced log-bucketed histograms:
 * fixed memory whatever the completion rate.  Percentiles are within a
 * relative 2^-(AWAFS_HIST_SUB_BITS + 1) of the exact ones of the same
 * samples; the window spans W to W + W / AWAFS_HIST_SLICES. */
struct awafs_histwin;

struct awafs_histwin *awafs_histwin_create(int64_t window_us);
void awafs_histwin_destroy(struct awafs_histwin *);
size_t awafs_histwin_memsize(void);
/* Changes the window length; false if the slices cannot cover it (more
 * than twice the creation length). */
bool awafs_histwin_set_window(struct awafs_histwin *, int64_t window_us);
/* Adds a completion of 'size' bytes at 'ts_us' from 'source'
 * (awafs_source_id(), 0 if unknown). */
void awafs_histwin_add(struct awafs_histwin *, int64_t ts_us, uint64_t size,
                       uint32_t source);
/* With 'on', a completion added from a source with more completions in the
 * window than the other sources' mean weighs that mean / its count: one
 * source among n weighs about 1/n of the window, not its share of the
 * completions.  Completions already in the window keep their weights. */
void awafs_histwin_weigh_sources(struct awafs_histwin *, bool on);
/* Drops slices wholly older than the window; returns samples dropped. */
uint64_t awafs_histwin_prune(struct awafs_histwin *, int64_t now_us);
uint64_t awafs_histwin_count(const struct awafs_histwin *);
/* Nearest-rank percentiles (strictly ascending 'pct_milli') of the
 * completions by weight, as bucket midpoints. */
void awafs_histwin_percentiles(const struct awafs_histwin *,
                               const uint32_t *pct_milli, size_t n_pct,
                               uint64_t *out);
/* The window as points for awafs_fct_solve(): each bucket that holds a
 * sample, at its midpoint, in ascending order, its weight as its count; at
 * most 'max', returns how many. */
size_t awafs_histwin_points(const struct awafs_histwin *,
                            struct awafs_fct_point *, size_t max);

/* The window's sizes by power of 2, what 'ovs-appctl qos/show' prints as
 * 'window-histogram': bucket i counts the sizes in [2^i, 2^(i+1)) bytes,
 * bucket 0 also 0 and the last one everything larger. */
#define AWAFS_WINDOW_LOG2_BUCKETS AWAFS_HIST_MAX_BITS
/* Adds the window's sizes into 'counts' by power of 2 (by weight, in
 * completions, rounded). */
void awafs_histwin_log2_counts(const struct awafs_histwin *,
                               uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS]);

/* ---- Window and threshold recalculation ---- */

enum awafs_window_kind {
    AWAFS_WINDOW_EXACT,         /* Every sample: exact percentiles. */
    AWAFS_WINDOW_HISTOGRAM,     /* struct awafs_histwin: O(1) memory. */
};

struct awafs_config {
    uint32_t n_queues;                          /* 2..8. */
    bool adaptive;                              /* False: static (PIAS). */
    uint32_t pct_milli[AWAFS_MAX_THRESHOLDS];   /* RefPct, in 1/1000 %. */
    uint64_t init_thr[AWAFS_MAX_THRESHOLDS];    /* InitThr, bytes. */
    int64_t window_us;                          /* W_update. */
    int64_t interval_us;                        /* T_schedule. */
    uint32_t min_samples;                       /* Guard before updating. */
    enum awafs_window_kind window_kind;
    uint32_t window_capacity;                   /* Max samples (exact). */
    uint32_t ring_capacity;                     /* Completions in flight;
                                                 * 0: no ring of its own
                                                 * (awafs_adapt_collect()). */
    bool minimise_fct;          /* Thresholds that minimise the FCT model
                                 * (awafs_fct_solve()), not 'pct_milli'. */
    enum awafs_fct_model fct_model;     /* With 'minimise_fct': MLFQ,
                                         * MLFQ_SLOWDOWN or MLFQ_SHORT. */
    uint64_t short_size;        /* MLFQ_SHORT: the largest short flow. */
    bool weigh_sources;         /* Histogram window only: see
                                 * awafs_histwin_weigh_sources(). */
    /* Adaptive mode: every learned set keeps threshold i within
     * [min_thr[i], max_thr[i]] (0 and UINT64_MAX: unbounded), so that
     * whatever the window holds, the operator knows how far the
     * thresholds can move. */
    uint64_t min_thr[AWAFS_MAX_THRESHOLDS];
    uint64_t max_thr[AWAFS_MAX_THRESHOLDS];
};

/* Fills 'cfg' with the documented defaults for 'n_queues' queues. */
void awafs_config_default(struct awafs_config *cfg, uint32_t n_queues);
/* Returns NULL if 'cfg' is valid, otherwise a static message. */
const char *awafs_config_check(const struct awafs_config *cfg);
/* Karuna: gives 'beta', the known sizes' window, the mode and the window of
 * 'core' (the sieve's), keeping its own queues, thresholds, percentiles and
 * ring. */
void awafs_config_share_window(struct awafs_config *beta,
                               const struct awafs_config *core);

struct awafs_adapt_stats {
    uint64_t updates;           /* Published sets after the initial one. */
    uint64_t skipped_empty;     /* Rounds with an empty window. */
    uint64_t skipped_few;       /* Rounds below min_samples. */
    uint64_t samples_in;        /* Completions moved into the window. */
    uint64_t samples_pruned;    /* Aged out of the window. */
    uint64_t samples_evicted;   /* Pushed out by a full window. */
    uint64_t model_kept;        /* 'minimise_fct' rounds that kept the set:
                                 * its predicted objective and the other
                                 * measure (mean FCT or slowdown) within
                                 * the margins of AWAFS_FCT_HYSTERESIS and
                                 * AWAFS_FCT_SLOWDOWN_GAIN of the
                                 * optimum's. */
};

struct awafs_adapt;

/* Allocates everything the port will ever need.  NULL if 'cfg' is invalid
 * (see awafs_config_check()) or out of memory. */
struct awafs_adapt *awafs_adapt_create(const struct awafs_config *cfg);
void awafs_adapt_destroy(struct awafs_adapt *);
/* Bytes allocated by awafs_adapt_create() for 'cfg'. */
size_t awafs_adapt_memsize(const struct awafs_config *cfg);

/* The ring the datapath pushes completions into; NULL with a
 * 'ring_capacity' of 0, where completions come by awafs_adapt_collect(). */
struct awafs_ring *awafs_adapt_ring(struct awafs_adapt *);

/* Moves the completions in the 'n' rings 'rings' into the window, in time
 * order across the rings (each ring's own are in time order: one producer
 * each, on one clock), as awafs_adapt_update() does with its own ring.  For
 * a datapath with a ring per producer thread, in which no cache line is
 * written by two threads.  Takes at most the rings' capacities together,
 * so that producers that keep pushing cannot keep it busy. */
void awafs_adapt_collect(struct awafs_adapt *, struct awafs_ring *const *rings,
                         size_t n);

/* Replaces the parameters that do not change the memory layout (percentiles,
 * window, interval, min_samples, mode, InitThr) keeping the learned window.
 * Static mode, or adaptive mode before its first update, switches to the
 * configured thresholds at once.  Returns false, changing nothing, if 'cfg'
 * is invalid or needs a new instance (queues or capacities differ). */
bool awafs_adapt_reconfigure(struct awafs_adapt *,
                             const struct awafs_config *cfg, int64_t now_us);

/* The port's load, a fraction of its rate, for 'minimise_fct' (0 until
 * set). */
void awafs_adapt_set_load(struct awafs_adapt *, double load);

/* One round of Algorithm 1 at time 'now_us': moves completions from the ring
 * into the window, prunes entries older than the window, and, in adaptive
 * mode with at least min_samples entries, computes the configured
 * percentiles, or with 'minimise_fct' the model's optimum (unless the set
 * in force is within the margins of AWAFS_FCT_HYSTERESIS and
 * AWAFS_FCT_SLOWDOWN_GAIN of it), either kept within the configured bounds.
 * Returns true and fills 'out' with a new set (version + 1) if it published
 * one; otherwise 'out' is the current set unchanged. */
bool awafs_adapt_update(struct awafs_adapt *, int64_t now_us,
                        struct awafs_thresholds *out);

void awafs_adapt_current(const struct awafs_adapt *,
                         struct awafs_thresholds *out);
uint32_t awafs_adapt_window_count(const struct awafs_adapt *);
/* Fills 'counts' with the window's sizes by power of 2 (as
 * awafs_histwin_log2_counts()); returns the number of buckets up to the last
 * one that is not empty, 0 for an empty window. */
size_t awafs_adapt_window_log2_counts(
    const struct awafs_adapt *, uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS]);
/* With 'minimise_fct': what the model predicted at the last round of the
 * set it left in force (for AWAFS_FCT_KARUNA, PIAS's objective, which has
 * no time unit: what AWAFS_FCT_MLFQ predicts of it); false before the
 * first such round. */
bool awafs_adapt_get_plan(const struct awafs_adapt *,
                          struct awafs_fct_plan *);
void awafs_adapt_get_stats(const struct awafs_adapt *,
                           struct awafs_adapt_stats *);

/* ---- Memory budget ---- */

/* What one port may allocate, and all ports together, by default: a
 * configuration beyond either is refused before anything is allocated. */
#define AWAFS_MEM_PORT_MAX_DEFAULT ((size_t) 128 << 20)
#define AWAFS_MEM_TOTAL_MAX_DEFAULT ((size_t) 1024 << 20)

/* The parts of one port whose size its configuration sets. */
struct awafs_port_mem {
    const struct awafs_config *core;    /* The sieve's window and ring. */
    const struct awafs_config *beta;    /* Karuna's second one, or NULL. */
    uint32_t n_queues;                  /* The scheduler's queues */
    uint32_t buffer;                    /* and packets. */
    uint32_t flow_table_size;           /* 0: no flow table. */
    uint32_t srclimit_slots;            /* 0: no completion limit. */
};

/* Bytes the core allocates for a port of 'm' (SIZE_MAX if a size is out of
 * range). */
size_t awafs_port_memsize(const struct awafs_port_mem *m);
/* True if a port of 'bytes' fits in 'port_max' and, with the 'others' bytes
 * the other ports hold, in 'total_max'.  Otherwise false, with a message
 * saying why in 'msg' (of 'msg_size' bytes, at least 1). */
bool awafs_memory_check(size_t bytes, size_t others, size_t port_max,
                        size_t total_max, char *msg, size_t msg_size);

/* Nearest-rank percentile: the smallest sample with at least 'pct_milli' /
 * 100000 of the samples <= it.  Computes 'n_pct' strictly ascending
 * percentiles of the 'n' > 0 values in 'v' (reordered in place). */
void awafs_percentiles(uint64_t *v, size_t n, const uint32_t *pct_milli,
                       size_t n_pct, uint64_t *out);

#endif /* awafs.h */
