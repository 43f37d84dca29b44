/* Unit tests: the AWAFS TCP option parser and encoder (docs/header.md). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

static uint8_t frame[1600];

/* An 8-byte data option for 'sent' bytes. */
static size_t
data_opt(uint8_t *o, uint32_t sent)
{
    return awafs_opt_encode(o, sent, false, 0);
}

/* awafs_parse_head() of the first 'head_len' bytes of 'frame', of a frame of
 * 'len' bytes, which the general parser, without the inline fast path, must
 * read the same way, noting awafs_hdr_padded() as it reads. */
static enum awafs_parse_result
parse_head(size_t head_len, size_t len, struct awafs_hdr *h)
{
    enum awafs_parse_result r = awafs_parse_head(frame, head_len, len, NULL,
                                                 h, NULL);
    struct awafs_hdr general;

    assert_int_equal(awafs_parse_head__(frame, head_len, len, NULL, &general,
                                        NULL), r);
    assert_memory_equal(&general, h, sizeof general);
    assert_int_equal(h->padded, awafs_hdr_padded(h, len));
    return r;
}

/* awafs_parse() of the first 'len' bytes of 'frame', checked as above. */
static enum awafs_parse_result
parse(size_t len, struct awafs_hdr *h)
{
    return parse_head(len, len, h);
}

/* The inline fast path (Ethernet, IPv4, TCP) against the general parser on
 * every one-byte change of such a frame, whole and cut at every length,
 * and given as a head of every length. */
static void
test_fast_path_reads_as_general(void **state)
{
    static const uint8_t values[] = { 0x00, 0x01, 0x06, 0x14, 0x45, 0x50,
                                      0x80, 0xfd, 0xff };
    uint8_t opt[20];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 3 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    s.tcp_opts_len = awafs_opt_encode_prev(opt, 1000, true, 2000, 500, 77);
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    for (size_t i = 0; i < len; i++) {
        uint8_t orig = frame[i];

        for (size_t v = 0; v < sizeof values; v++) {
            frame[i] = values[v];
            parse(len, &h);
        }
        frame[i] = orig;
    }
    for (size_t cut = 0; cut <= len; cut++) {
        parse(cut, &h);
        parse_head(cut, len, &h);
    }
}

static void
test_ipv4_data(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 100 };
    struct awafs_hdr h;
    size_t l3, l4, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 12345);
    len = build_frame(frame, &s, &l3, &l4);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_int_equal(h.bytes_sent, 12345);
    assert_false(h.completed);
    assert_int_equal(h.flow_size, 0);
    assert_int_equal(h.ip_version, 4);
    assert_int_equal(h.l3_ofs, l3);
    assert_int_equal(h.l4_ofs, l4);
    assert_int_equal(h.tcp_flags, 0x18);
}

static void
test_ipv4_completed(void **state)
{
    uint8_t opt[12];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    s.tcp_opts_len = awafs_opt_encode(opt, 8000, true, 10000);
    assert_int_equal(s.tcp_opts_len, AWAFS_OPT_LEN_COMPLETED);
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_true(h.completed);
    assert_int_equal(h.bytes_sent, 8000);
    assert_int_equal(h.flow_size, 10000);
}

static void
test_ipv6(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .ipv6 = true, .tcp_opts = opt,
                            .payload_len = 10 };
    struct awafs_hdr h;
    size_t l3, l4, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 77);
    len = build_frame(frame, &s, &l3, &l4);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_int_equal(h.ip_version, 6);
    assert_int_equal(h.bytes_sent, 77);
    assert_int_equal(h.l3_ofs, l3);
    assert_int_equal(h.l4_ofs, l4);
}

static void
test_vlan_tags(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t l3, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 5);
    for (int tags = 1; tags <= 2; tags++) {
        for (int v6 = 0; v6 <= 1; v6++) {
            s.n_vlans = tags;
            s.ipv6 = v6;
            len = build_frame(frame, &s, &l3, NULL);
            assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
            assert_int_equal(h.l3_ofs, 14 + 4 * tags);
            assert_int_equal(h.bytes_sent, 5);
        }
    }
    s.n_vlans = 3;
    s.ipv6 = false;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_UNSUPPORTED);
}

static void
test_among_other_options(void **state)
{
    /* MSS, NOP, NOP, timestamps, a foreign experiment (kind 253, other
     * ExID), SACK-permitted, then ours with kind 254, then EOL padding. */
    uint8_t opts[40] = {
        2, 4, 0x05, 0xb4,
        1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2,
        253, 6, 0x12, 0x34, 0xaa, 0xbb,
        4, 2,
    };
    struct frame_spec s = { .tcp_opts = opts, .tcp_opts_len = 32 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    data_opt(opts + 24, 999);
    opts[24] = AWAFS_OPT_KIND_ALT;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_int_equal(h.bytes_sent, 999);
}

static void
test_headerless(void **state)
{
    uint8_t opts[16] = { 2, 4, 0x05, 0xb4 };
    struct frame_spec s = { .tcp_opts = opts, .tcp_opts_len = 4 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_NO_OPTION);

    /* MSS, EOL + padding, then our option: after EOL nothing counts. */
    data_opt(opts + 8, 1);
    s.tcp_opts_len = 16;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_NO_OPTION);

    /* No options at all; UDP; ARP. */
    s.tcp_opts_len = 0;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_NO_OPTION);
    s.ip_proto = 17;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_NOT_TCP);
    s.ipv6 = true;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_NOT_TCP);
    put16(frame + 12, 0x0806);
    assert_int_equal(parse(60, &h), AWAFS_PARSE_NOT_TCP);
}

/* awafs_frame_may_be_ip() lets the per-packet path skip the parser only
 * where the parser finds nothing: for every EtherType, on a frame whose
 * bytes after it are a TCP segment with the option. */
static void
test_frames_that_cannot_be_ip(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 100 };
    struct awafs_hdr h;
    int n_may_be_ip = 0;
    size_t len;

    (void) state;
    data_opt(opt, 1000);
    len = build_frame(frame, &s, NULL, NULL);
    for (uint32_t type = 0; type <= UINT16_MAX; type++) {
        put16(frame + 12, type);
        if (awafs_frame_may_be_ip(frame, len)) {
            n_may_be_ip++;
            continue;
        }
        assert_int_equal(parse(len, &h), AWAFS_PARSE_NOT_TCP);
        assert_int_equal(h.ip_version, 0);
        assert_int_equal(h.l4_ofs, 0);
    }
    /* IPv4, IPv6 and the two VLAN tags. */
    assert_int_equal(n_may_be_ip, 4);
    /* Too short to tell: the parser decides. */
    for (size_t i = 0; i < 14; i++) {
        assert_true(awafs_frame_may_be_ip(frame, i));
    }
}

static void
test_every_truncation(void **state)
{
    uint8_t opt[12];
    struct awafs_hdr h;

    (void) state;
    for (int v6 = 0; v6 <= 1; v6++) {
        for (int tags = 0; tags <= 2; tags++) {
            struct frame_spec s = { .ipv6 = v6, .n_vlans = tags,
                                    .tcp_opts = opt, .payload_len = 3 };
            size_t len;

            s.tcp_opts_len = awafs_opt_encode(opt, 1, true, 2);
            len = build_frame(frame, &s, NULL, NULL);
            assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
            for (size_t cut = 0; cut < len; cut++) {
                assert_int_equal(parse(cut, &h), AWAFS_PARSE_MALFORMED);
            }
        }
    }
}

static void
test_ethernet_padding(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt, .eth_padding = 6 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 1);
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_int_equal(awafs_parse(frame, 70000, &h, NULL),
                     AWAFS_PARSE_MALFORMED);
}

static void
test_bad_ip_headers(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t l3, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 1);

    len = build_frame(frame, &s, &l3, NULL);
    frame[l3] = 0x44;                           /* IHL 4 < 5. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
    frame[l3] = 0x4f;                           /* IHL 60 > total. */
    put16(frame + l3 + 2, 40);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
    len = build_frame(frame, &s, &l3, NULL);
    frame[l3] = 0x65;                           /* Version 6 in IPv4. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
    len = build_frame(frame, &s, &l3, NULL);
    put16(frame + l3 + 2, 19);                  /* Total < IHL. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);

    len = build_frame(frame, &s, &l3, NULL);
    put16(frame + l3 + 6, 0x2000);              /* More fragments. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_UNSUPPORTED);
    put16(frame + l3 + 6, 0x0010);              /* Offset. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_UNSUPPORTED);
    put16(frame + l3 + 6, 0x4000);              /* DF only: fine. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);

    s.ipv6 = true;
    len = build_frame(frame, &s, &l3, NULL);
    frame[l3] = 0x40;                           /* Version 4 in IPv6. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
    len = build_frame(frame, &s, &l3, NULL);
    put16(frame + l3 + 4, 1000);                /* Payload past end. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
}

static void
test_ipv6_extension_headers(void **state)
{
    static const uint8_t ext[] = { 0, 43, 44, 50, 51, 60, 135, 139, 140 };
    uint8_t opt[8];
    struct frame_spec s = { .ipv6 = true, .tcp_opts = opt };
    struct awafs_hdr h;
    struct awafs_parse_stats st = { .n = { 0 } };
    size_t l3, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 1);
    len = build_frame(frame, &s, &l3, NULL);
    for (size_t i = 0; i < sizeof ext; i++) {
        frame[l3 + 6] = ext[i];
        assert_int_equal(awafs_parse(frame, len, &h, &st),
                         AWAFS_PARSE_UNSUPPORTED);
    }
    assert_int_equal(st.n[AWAFS_PARSE_UNSUPPORTED], sizeof ext);
}

static void
test_bad_tcp_header(void **state)
{
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t l4, len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 1);
    len = build_frame(frame, &s, NULL, &l4);
    frame[l4 + 12] = 4 << 4;                    /* Data offset 16 < 20. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
    frame[l4 + 12] = 15 << 4;                   /* 60 > segment. */
    assert_int_equal(parse(len, &h), AWAFS_PARSE_MALFORMED);
}

/* Runs options 'o' (4 bytes of room per row) through a frame. */
static enum awafs_parse_result
parse_opts_into(const uint8_t *o, size_t len, struct awafs_hdr *h)
{
    struct frame_spec s = { .tcp_opts = o, .tcp_opts_len = len };

    return parse(build_frame(frame, &s, NULL, NULL), h);
}

static enum awafs_parse_result
parse_opts(const uint8_t *o, size_t len)
{
    struct awafs_hdr h;

    return parse_opts_into(o, len, &h);
}

static void
test_bad_option_lengths(void **state)
{
    uint8_t o[16];

    (void) state;
    /* Length 0 and 1 (would loop or underflow). */
    memcpy(o, "\x02\x00\x00\x00", 4);
    assert_int_equal(parse_opts(o, 4), AWAFS_PARSE_MALFORMED);
    memcpy(o, "\x02\x01\x00\x00", 4);
    assert_int_equal(parse_opts(o, 4), AWAFS_PARSE_MALFORMED);
    /* Overlong: runs past the data offset. */
    memcpy(o, "\x02\x05\x00\x00", 4);
    assert_int_equal(parse_opts(o, 4), AWAFS_PARSE_MALFORMED);
    data_opt(o, 1);
    o[1] = 12;
    assert_int_equal(parse_opts(o, 8), AWAFS_PARSE_MALFORMED);
    /* A kind in the last byte with no room for its length. */
    memcpy(o, "\x01\x01\x01\x02", 4);
    assert_int_equal(parse_opts(o, 4), AWAFS_PARSE_MALFORMED);
}

static void
test_bad_awafs_option(void **state)
{
    uint8_t o[24];

    (void) state;
    /* Wrong length for our ExID. */
    memset(o, 1, sizeof o);
    data_opt(o, 1);
    o[1] = 10;
    assert_int_equal(parse_opts(o, 12), AWAFS_PARSE_MALFORMED);
    /* Completed flag in a short option. */
    data_opt(o, 1);
    o[4] |= 0x80;
    assert_int_equal(parse_opts(o, 8), AWAFS_PARSE_MALFORMED);
    /* Long option without the flag: 12 bytes are a Karuna word then, and
     * 24 fit no form. */
    awafs_opt_encode_prev(o, 1, true, 5, 1, 1);
    o[4] &= 0x7f;
    o[1] = 24;
    assert_int_equal(parse_opts(o, 24), AWAFS_PARSE_MALFORMED);
    /* Final size below bytes sent. */
    awafs_opt_encode(o, 100, true, 100);
    o[11] = 99;
    assert_int_equal(parse_opts(o, 12), AWAFS_PARSE_MALFORMED);
    /* Two AWAFS options. */
    data_opt(o, 1);
    data_opt(o + 8, 2);
    assert_int_equal(parse_opts(o, 16), AWAFS_PARSE_MALFORMED);
    /* Kind 253 too short for an ExID is someone else's: skipped. */
    memcpy(o, "\xfd\x02\x01\x01", 4);
    assert_int_equal(parse_opts(o, 4), AWAFS_PARSE_NO_OPTION);
}

/* Every length an AWAFS option can take in a TCP header, with and without
 * the completed bit: only the forms of docs/header.md (8 or 12 bytes, + 8
 * with the previous message's report, + 4 with the Karuna word) parse. */
static void
test_every_option_length(void **state)
{
    (void) state;
    for (int completed = 0; completed < 2; completed++) {
        size_t base = completed ? AWAFS_OPT_LEN_COMPLETED : AWAFS_OPT_LEN;

        for (size_t len = 4; len <= 40; len++) {
            uint8_t o[40];
            size_t room = (len + 3) / 4 * 4;
            bool valid = (len == base || len == base + 4
                          || len == base + 8 || len == base + 12);

            memset(o, AWAFS_TCP_OPT_NOP, sizeof o);
            memset(o, 0, len);
            o[0] = AWAFS_OPT_KIND;
            o[1] = len;
            o[2] = AWAFS_OPT_EXID >> 8;
            o[3] = AWAFS_OPT_EXID & 0xff;
            o[4] = completed ? 0x80 : 0;
            o[7] = 1;                       /* Bytes sent. */
            if (len >= 12) {
                o[11] = 100;                /* The flow's size, if any. */
            }
            assert_int_equal(parse_opts(o, room),
                             valid ? AWAFS_PARSE_OK : AWAFS_PARSE_MALFORMED);
        }
    }
}

/* awafs_parse_tcp_options() of the options 'o' of 'len' bytes against the
 * loop alone, awafs_parse_tcp_options__(): the same result, 'hdr' alike. */
static void
options_read_as_the_loop(const uint8_t *o, size_t len)
{
    struct awafs_hdr a, b;

    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_int_equal(awafs_parse_tcp_options(o, o + len, &a),
                     awafs_parse_tcp_options__(o, o + len, &b));
    assert_memory_equal(&a, &b, sizeof a);
}

/* The short cut for the layouts most data segments carry (the option alone
 * or after NOP, NOP, timestamps) against the loop: on those layouts, with
 * every option length the short cut weighs, on every one-byte change of
 * them, and on every cut. */
static void
test_short_cut_reads_as_the_loop(void **state)
{
    static const uint8_t values[] = { 0x00, 0x01, 0x02, 0x08, 0x0a, 0x0c,
                                      0x41, 0x57, 0x80, 0xfd, 0xfe, 0xff };
    static const uint8_t ts[AWAFS_TCP_TS_PREFIX_LEN] = {
        1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2,
    };

    (void) state;
    for (int prefix = 0; prefix < 2; prefix++) {
        for (int form = 0; form < 4; form++) {
            uint8_t o[40];
            size_t n = prefix ? sizeof ts : 0;

            memcpy(o, ts, sizeof ts);
            /* Data, completed, Karuna's 12 bytes, a report of the
             * previous message. */
            n += (form == 0 ? awafs_opt_encode(o + n, 1000, false, 0)
                  : form == 1 ? awafs_opt_encode(o + n, 1000, true, 1500)
                  : form == 2 ? awafs_opt_add_karuna(
                                    o + n, awafs_opt_encode(o + n, 1000,
                                                            false, 0), 7)
                  : awafs_opt_encode_prev(o + n, 1000, false, 0, 300, 9));
            for (size_t cut = 0; cut <= n; cut++) {
                options_read_as_the_loop(o, cut);
            }
            for (size_t i = 0; i < n; i++) {
                uint8_t orig = o[i];

                for (size_t v = 0; v < sizeof values; v++) {
                    o[i] = values[v];
                    options_read_as_the_loop(o, n);
                }
                o[i] = orig;
            }
        }
    }
}

static void
test_stats_count_every_result(void **state)
{
    struct awafs_parse_stats st = { .n = { 0 } };
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 1);
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, &st);
    awafs_parse(frame, len, &h, &st);
    awafs_parse(frame, 10, &h, &st);
    s.ip_proto = 17;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, &st);
    assert_int_equal(st.n[AWAFS_PARSE_OK], 2);
    assert_int_equal(st.n[AWAFS_PARSE_MALFORMED], 1);
    assert_int_equal(st.n[AWAFS_PARSE_NOT_TCP], 1);
    assert_int_equal(st.n[AWAFS_PARSE_NO_OPTION], 0);
    assert_string_equal(awafs_parse_result_to_string(AWAFS_PARSE_MALFORMED),
                        "malformed");
}

/* ---- Tunnels ---- */

static uint8_t inner[1600], outer[2200];

static enum awafs_parse_result
parse_tunnelled(size_t len, struct awafs_hdr *h,
                struct awafs_parse_stats *st)
{
    struct awafs_tunnel_ports ports = standard_tunnel_ports();

    return awafs_parse_tunnel(outer, len, &ports, h, st);
}

static void
test_tunnel_inner_headers(void **state)
{
    static const enum awafs_tunnel types[] = { AWAFS_TUNNEL_VXLAN,
                                               AWAFS_TUNNEL_GENEVE };
    uint8_t opt[8];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 100 };
    struct awafs_hdr h;

    (void) state;
    s.tcp_opts_len = data_opt(opt, 4242);
    for (int i = 0; i < 2 * 2 * 2 * 2 * 2 * 3; i++) {
        struct tunnel_spec t = {
            .type = types[i % 2], .outer_ipv6 = i / 2 % 2,
            .outer_vlans = i / 4 % 2, .vni = 0xabcdef - i,
            .geneve_opts_len = (size_t[]) { 0, 8, 252 }[i / 32],
        };
        struct awafs_parse_stats st = { .n = { 0 } };
        size_t l3, l4, outer_l3, ilen, len;

        s.ipv6 = i / 8 % 2;
        s.n_vlans = i / 16 % 2;
        ilen = build_frame(inner, &s, &l3, &l4);
        len = encap(outer, inner, ilen, &t, &outer_l3);
        assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_OK);
        assert_int_equal(h.bytes_sent, 4242);
        assert_int_equal(h.payload_len, 100);
        assert_int_equal(h.tunnel, t.type);
        assert_int_equal(h.vni, t.vni);
        assert_int_equal(h.l2_ofs, len - ilen);
        assert_int_equal(h.l3_ofs, len - ilen + l3);
        assert_int_equal(h.l4_ofs, len - ilen + l4);
        assert_int_equal(h.ip_end, len);
        assert_int_equal(h.ip_version, s.ipv6 ? 6 : 4);
        assert_int_equal(h.outer_ip_version, t.outer_ipv6 ? 6 : 4);
        assert_int_equal(h.outer_l3_ofs, outer_l3);
        assert_false(awafs_hdr_padded(&h, len));
        assert_int_equal(st.n[AWAFS_PARSE_OK], 1);
        assert_int_equal(st.tunnel[t.type == AWAFS_TUNNEL_VXLAN
                                   ? AWAFS_TUN_VXLAN : AWAFS_TUN_GENEVE], 1);
        /* Without tunnels, or at another port, it is UDP. */
        assert_int_equal(awafs_parse(outer, len, &h, NULL),
                         AWAFS_PARSE_NOT_TCP);
        assert_int_equal(h.tunnel, AWAFS_TUNNEL_NONE);
        t.dport = 4790;
        len = encap(outer, inner, ilen, &t, NULL);
        assert_int_equal(parse_tunnelled(len, &h, NULL), AWAFS_PARSE_NOT_TCP);
    }
}

static void
test_tunnel_configured_port(void **state)
{
    struct awafs_tunnel_ports ports = { .n = 0 };
    struct tunnel_spec t = { .type = AWAFS_TUNNEL_GENEVE, .dport = 7000 };
    struct frame_spec s = { .payload_len = 10 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    len = encap(outer, inner, build_frame(inner, &s, NULL, NULL), &t, NULL);
    assert_true(awafs_tunnel_ports_add(&ports, 7000, AWAFS_TUNNEL_GENEVE));
    assert_true(awafs_tunnel_ports_add(&ports, 7000, AWAFS_TUNNEL_GENEVE));
    assert_int_equal(ports.n, 1);
    assert_int_equal(awafs_parse_tunnel(outer, len, &ports, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.tunnel, AWAFS_TUNNEL_GENEVE);
    /* No port at all is no tunnel. */
    ports.n = 0;
    assert_int_equal(awafs_parse_tunnel(outer, len, &ports, &h, NULL),
                     AWAFS_PARSE_NOT_TCP);
    for (int i = 0; i < AWAFS_TUNNEL_MAX_PORTS; i++) {
        assert_true(awafs_tunnel_ports_add(&ports, 1000 + i,
                                           AWAFS_TUNNEL_VXLAN));
    }
    assert_false(awafs_tunnel_ports_add(&ports, 999, AWAFS_TUNNEL_VXLAN));
    assert_string_equal(awafs_tunnel_event_to_string(AWAFS_TUN_BAD_OPTIONS),
                        "bad-options");
}

/* An inner frame cut anywhere, inside an outer frame whose own lengths
 * are right: malformed and counted, at every cut. */
static void
test_tunnel_inner_cut_short(void **state)
{
    uint8_t opt[12];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 30 };
    struct awafs_hdr h;

    (void) state;
    s.tcp_opts_len = awafs_opt_encode(opt, 10, true, 40);
    for (int g = 0; g < 2; g++) {
        struct tunnel_spec t = { .type = g ? AWAFS_TUNNEL_GENEVE
                                           : AWAFS_TUNNEL_VXLAN,
                                 .geneve_opts_len = 4 };
        size_t ilen = build_frame(inner, &s, NULL, NULL);

        for (size_t cut = 0; cut < ilen; cut++) {
            struct awafs_parse_stats st = { .n = { 0 } };
            size_t len = encap(outer, inner, cut, &t, NULL);

            assert_int_equal(parse_tunnelled(len, &h, &st),
                             AWAFS_PARSE_MALFORMED);
            assert_int_equal(st.tunnel[AWAFS_TUN_TRUNCATED], 1);
            assert_false(awafs_hdr_counts_completion(&h));
        }
    }
}

static void
test_tunnel_bad_headers(void **state)
{
    struct tunnel_spec vx = { .vni = 5 };
    struct tunnel_spec gn = { .type = AWAFS_TUNNEL_GENEVE, .vni = 5 };
    struct frame_spec s = { .payload_len = 10 };
    struct awafs_parse_stats st = { .n = { 0 } };
    size_t ilen, len, outer_l3;
    struct awafs_hdr h;

    (void) state;
    ilen = build_frame(inner, &s, NULL, NULL);

    /* A UDP datagram to 4789 that is not VXLAN (no I flag). */
    len = encap(outer, inner, ilen, &vx, &outer_l3);
    outer[outer_l3 + 28] = 0;
    assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_NOT_TCP);
    assert_int_equal(st.tunnel[AWAFS_TUN_UNKNOWN], 1);
    /* Geneve of version 1, and Geneve carrying IPv4 rather than
     * Ethernet. */
    len = encap(outer, inner, ilen, &gn, &outer_l3);
    outer[outer_l3 + 28] |= 0x40;
    assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_NOT_TCP);
    len = encap(outer, inner, ilen, &gn, &outer_l3);
    outer[outer_l3 + 30] = 0x08;
    outer[outer_l3 + 31] = 0x00;
    assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_NOT_TCP);
    assert_int_equal(st.tunnel[AWAFS_TUN_UNKNOWN], 3);

    /* Geneve options longer than the datagram: 63 words on a 14-byte
     * inner frame. */
    len = encap(outer, inner, 14, &gn, &outer_l3);
    outer[outer_l3 + 28] = 63;
    assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_MALFORMED);
    assert_int_equal(st.tunnel[AWAFS_TUN_BAD_OPTIONS], 1);

    /* A datagram shorter than the tunnel header. */
    for (size_t n = 0; n < 8; n++) {
        len = encap(outer, inner, 0, &vx, &outer_l3);
        outer[outer_l3 + 25] = 8 + n;   /* UDP length. */
        outer[outer_l3 + 3] = 28 + n;   /* IP total length. */
        assert_int_equal(parse_tunnelled(len - 8 + n, &h, &st),
                         AWAFS_PARSE_MALFORMED);
    }
    assert_int_equal(st.tunnel[AWAFS_TUN_TRUNCATED], 8);

    /* A UDP length past the IP packet: the outer frame is malformed. */
    len = encap(outer, inner, ilen, &vx, &outer_l3);
    outer[outer_l3 + 25]++;
    assert_int_equal(parse_tunnelled(len, &h, &st), AWAFS_PARSE_MALFORMED);
    assert_int_equal(st.tunnel[AWAFS_TUN_TRUNCATED], 8);
}

/* A tunnel inside a tunnel, of either kind in either: not read. */
static void
test_tunnel_nested(void **state)
{
    static uint8_t middle[2000];
    struct frame_spec s = { .payload_len = 10 };
    size_t ilen = build_frame(inner, &s, NULL, NULL);
    struct awafs_parse_stats st = { .n = { 0 } };
    struct awafs_hdr h;

    (void) state;
    for (int i = 0; i < 4; i++) {
        struct tunnel_spec in = { .type = i % 2 ? AWAFS_TUNNEL_GENEVE
                                                : AWAFS_TUNNEL_VXLAN };
        struct tunnel_spec out = { .type = i / 2 ? AWAFS_TUNNEL_GENEVE
                                                 : AWAFS_TUNNEL_VXLAN };
        size_t mlen = encap(middle, inner, ilen, &in, NULL);
        size_t len = encap(outer, middle, mlen, &out, NULL);

        assert_int_equal(parse_tunnelled(len, &h, &st),
                         AWAFS_PARSE_UNSUPPORTED);
        assert_int_equal(h.l4_ofs, 0);
    }
    assert_int_equal(st.tunnel[AWAFS_TUN_NESTED], 4);
}

/* Padding inside the tunnel: up to the inner Ethernet minimum is honest,
 * more is padding that no flow counts. */
static void
test_tunnel_inner_padding(void **state)
{
    struct tunnel_spec t = { .vni = 1 };
    struct frame_spec s = { .eth_padding = 6 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    len = encap(outer, inner, build_frame(inner, &s, NULL, NULL), &t, NULL);
    assert_int_equal(parse_tunnelled(len, &h, NULL), AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.payload_len, 0);
    assert_false(awafs_hdr_padded(&h, len));
    s.eth_padding = 7;
    len = encap(outer, inner, build_frame(inner, &s, NULL, NULL), &t, NULL);
    assert_int_equal(parse_tunnelled(len, &h, NULL), AWAFS_PARSE_NO_OPTION);
    assert_true(awafs_hdr_padded(&h, len));
}

/* A multi-segment packet: the parser gets the first bytes (a copy of the
 * headers) and the whole frame's length, inside a tunnel or not. */
static void
test_head_of_a_longer_frame(void **state)
{
    struct awafs_tunnel_ports ports = standard_tunnel_ports();
    struct tunnel_spec t = { .type = AWAFS_TUNNEL_GENEVE, .vni = 9,
                             .geneve_opts_len = 16 };
    uint8_t opt[12];
    struct frame_spec s = { .tcp_opts = opt, .payload_len = 1400 };
    struct awafs_hdr h;
    size_t l4, len, ilen;

    (void) state;
    s.tcp_opts_len = awafs_opt_encode(opt, 100, true, 1500);
    for (int tunnelled = 0; tunnelled < 2; tunnelled++) {
        ilen = build_frame(inner, &s, NULL, &l4);
        len = tunnelled ? encap(outer, inner, ilen, &t, NULL) : ilen;
        if (!tunnelled) {
            memcpy(outer, inner, len);
        }
        l4 += len - ilen;
        /* Every head that holds the TCP header and its options parses as
         * the whole frame; a shorter one is not read (not malformed). */
        for (size_t head = 0; head <= len; head++) {
            enum awafs_parse_result r = awafs_parse_head(
                outer, head, len, &ports, &h, NULL);

            if (head >= l4 + 20 + s.tcp_opts_len) {
                assert_int_equal(r, AWAFS_PARSE_OK);
                assert_int_equal(h.payload_len, 1400);
                assert_int_equal(h.flow_size, 1500);
                assert_int_equal(h.ip_end, len);
            } else {
                assert_int_equal(r, AWAFS_PARSE_UNSUPPORTED);
            }
        }
        /* The same bytes as a whole frame are cut short. */
        assert_int_equal(awafs_parse_tunnel(outer, l4 + 20, &ports, &h,
                                            NULL), AWAFS_PARSE_MALFORMED);
    }
}

static void
test_previous_message_forms(void **state)
{
    uint8_t opt[28];
    struct frame_spec s = { .tcp_opts = opt };
    struct awafs_hdr h;
    size_t l4, len;

    (void) state;
    /* A data segment reporting that the previous message, 1234 bytes,
     * ended at sequence number 0x01020304. */
    s.tcp_opts_len = awafs_opt_encode_prev(opt, 0, false, 0, 1234,
                                           0x01020304);
    assert_int_equal(s.tcp_opts_len, AWAFS_OPT_LEN + AWAFS_OPT_PREV_LEN);
    len = build_frame(frame, &s, NULL, &l4);
    frame[l4 + 4] = 1;
    frame[l4 + 5] = 2;
    frame[l4 + 6] = 3;
    frame[l4 + 7] = 4;
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_false(h.completed);
    assert_true(h.has_prev);
    assert_int_equal(h.prev_size, 1234);
    assert_int_equal(h.prev_end, 0x01020304);
    assert_int_equal(h.bytes_sent, 0);
    assert_true(awafs_hdr_counts_prev(&h));
    /* A GSO copy further into the super-packet does not count. */
    frame[l4 + 6] = 9;
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_false(awafs_hdr_counts_prev(&h));

    /* Both: this segment completes its own message too. */
    s.tcp_opts_len = awafs_opt_encode_prev(opt, 10, true, 50, 7, 99);
    assert_int_equal(s.tcp_opts_len, 20);
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(parse(len, &h), AWAFS_PARSE_OK);
    assert_true(h.completed && h.has_prev);
    assert_int_equal(h.bytes_sent, 10);
    assert_int_equal(h.flow_size, 50);
    assert_int_equal(h.prev_size, 7);
    assert_int_equal(h.prev_end, 99);
    assert_true(awafs_hdr_counts_completion(&h));

    /* Lengths that fit no form. */
    awafs_opt_encode_prev(opt, 0, false, 0, 1, 1);
    opt[1] = 14;
    assert_int_equal(parse_opts(opt, 16), AWAFS_PARSE_MALFORMED);
    awafs_opt_encode_prev(opt, 0, true, 1, 1, 1);
    opt[1] = 28;
    memset(opt + 20, 0, 8);
    assert_int_equal(parse_opts(opt, 28), AWAFS_PARSE_MALFORMED);
}

/* The Karuna word (deadline, size) last in any of the four forms. */
static void
test_karuna_word(void **state)
{
    uint32_t word = awafs_karuna_word(25, 300);
    uint8_t opt[24];
    struct awafs_hdr h;
    size_t len;

    (void) state;
    assert_int_equal(awafs_karuna_deadline_ms(word), 25);
    assert_int_equal(awafs_karuna_size(word), 300 * 1024);
    assert_int_equal(awafs_karuna_type(word), AWAFS_FLOW_DEADLINE);
    assert_int_equal(awafs_karuna_type(awafs_karuna_word(0, 300)),
                     AWAFS_FLOW_SIZED);
    assert_int_equal(awafs_karuna_type(0), AWAFS_FLOW_UNKNOWN);
    assert_int_equal(awafs_karuna_word(AWAFS_KARUNA_DEADLINE_MAX,
                                       AWAFS_KARUNA_SIZE_MAX), 0xffffffff);

    /* Data, completion, previous message, both: 4 bytes longer each. */
    for (int form = 0; form < 4; form++) {
        bool completed = form & 1, prev = form & 2;

        len = (prev ? awafs_opt_encode_prev(opt, 7, completed, 9, 5, 6)
               : awafs_opt_encode(opt, 7, completed, 9));
        len = awafs_opt_add_karuna(opt, len, word);
        assert_int_equal(len, 12 + 4 * completed + 8 * prev);
        assert_int_equal(parse_opts_into(opt, len, &h), AWAFS_PARSE_OK);
        assert_int_equal(h.bytes_sent, 7);
        assert_true(h.has_karuna);
        assert_int_equal(h.karuna, word);
        assert_int_equal(h.completed, completed);
        assert_int_equal(h.flow_size, completed ? 9 : 0);
        assert_int_equal(h.has_prev, prev);
        assert_int_equal(h.prev_size, prev ? 5 : 0);
        assert_int_equal(h.prev_end, prev ? 6 : 0);
    }

    /* Today's forms carry none. */
    awafs_opt_encode_prev(opt, 7, true, 9, 5, 6);
    assert_int_equal(parse_opts_into(opt, 20, &h), AWAFS_PARSE_OK);
    assert_false(h.has_karuna);
    assert_int_equal(h.karuna, 0);
}

static void
test_encode_saturates(void **state)
{
    uint8_t o[12];
    struct awafs_hdr h;

    (void) state;
    assert_int_equal(awafs_opt_encode(o, 1ull << 40, false, 0), 8);
    assert_int_equal(parse_opts(o, 8), AWAFS_PARSE_OK);
    awafs_parse(frame, build_frame(frame, &(struct frame_spec) {
                    .tcp_opts = o, .tcp_opts_len = 8 }, NULL, NULL),
                &h, NULL);
    assert_int_equal(h.bytes_sent, AWAFS_BYTES_SENT_MAX);
    assert_false(h.completed);

    assert_int_equal(awafs_opt_encode(o, 1ull << 40, true, 1ull << 40), 12);
    awafs_parse(frame, build_frame(frame, &(struct frame_spec) {
                    .tcp_opts = o, .tcp_opts_len = 12 }, NULL, NULL),
                &h, NULL);
    assert_int_equal(h.bytes_sent, AWAFS_BYTES_SENT_MAX);
    assert_int_equal(h.flow_size, AWAFS_FLOW_SIZE_MAX);
    assert_true(h.completed);
    assert_memory_equal(o, "\xfd\x0c\x41\x57\xff\xff\xff\xff"
                        "\xff\xff\xff\xff", 12);
}

/* Attack 4: a frame is classified by the bytes it carries.  The parser
 * takes the payload from the IP length (never from the frame: padding is
 * not payload) and says where the IP packet ends, so the datapath can tell
 * a frame padded past the Ethernet minimum: an ACK with IP length 40 in a
 * 1514-byte frame is a byte-free segment with 1460 bytes of padding. */
static void
test_padding_is_not_payload(void **state)
{
    uint8_t buf[1600];
    struct frame_spec s = { .eth_padding = 1514 - 54 };
    struct awafs_hdr h;
    size_t len;

    (void) state;
    len = build_frame(buf, &s, NULL, NULL);
    assert_int_equal(len, 1514);
    assert_int_equal(awafs_parse(buf, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.payload_len, 0);
    assert_int_equal(h.ip_end, 54);
    assert_true(awafs_hdr_padded(&h, len));
    /* The NIC's pad to 60 bytes is not padding anyone chose. */
    s.eth_padding = 6;
    len = build_frame(buf, &s, NULL, NULL);
    awafs_parse(buf, len, &h, NULL);
    assert_false(awafs_hdr_padded(&h, len));
    s.eth_padding = 7;
    len = build_frame(buf, &s, NULL, NULL);
    awafs_parse(buf, len, &h, NULL);
    assert_true(awafs_hdr_padded(&h, len));
    /* A VLAN tag's 4 bytes raise the minimum; IPv6 too. */
    s = (struct frame_spec) { .n_vlans = 1, .eth_padding = 6 };
    len = build_frame(buf, &s, NULL, NULL);
    awafs_parse(buf, len, &h, NULL);
    assert_false(awafs_hdr_padded(&h, len));
    s = (struct frame_spec) { .ipv6 = true, .payload_len = 10,
                              .eth_padding = 100 };
    len = build_frame(buf, &s, NULL, NULL);
    assert_int_equal(awafs_parse(buf, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.payload_len, 10);
    assert_int_equal(h.ip_end, len - 100);
    assert_true(awafs_hdr_padded(&h, len));
    /* An IP length beyond the frame is malformed, never trusted. */
    s = (struct frame_spec) { .payload_len = 100 };
    len = build_frame(buf, &s, NULL, NULL);
    assert_int_equal(awafs_parse(buf, len - 1, &h, NULL),
                     AWAFS_PARSE_MALFORMED);
}

AWAFS_UNIT_MAIN(hdr)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_padding_is_not_payload),
        cmocka_unit_test(test_ipv4_data),
        cmocka_unit_test(test_ipv4_completed),
        cmocka_unit_test(test_fast_path_reads_as_general),
        cmocka_unit_test(test_previous_message_forms),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_vlan_tags),
        cmocka_unit_test(test_among_other_options),
        cmocka_unit_test(test_headerless),
        cmocka_unit_test(test_frames_that_cannot_be_ip),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_ethernet_padding),
        cmocka_unit_test(test_bad_ip_headers),
        cmocka_unit_test(test_ipv6_extension_headers),
        cmocka_unit_test(test_bad_tcp_header),
        cmocka_unit_test(test_bad_option_lengths),
        cmocka_unit_test(test_bad_awafs_option),
        cmocka_unit_test(test_every_option_length),
        cmocka_unit_test(test_short_cut_reads_as_the_loop),
        cmocka_unit_test(test_stats_count_every_result),
        cmocka_unit_test(test_tunnel_inner_headers),
        cmocka_unit_test(test_tunnel_configured_port),
        cmocka_unit_test(test_tunnel_inner_cut_short),
        cmocka_unit_test(test_tunnel_bad_headers),
        cmocka_unit_test(test_tunnel_nested),
        cmocka_unit_test(test_tunnel_inner_padding),
        cmocka_unit_test(test_head_of_a_longer_frame),
        cmocka_unit_test(test_encode_saturates),
        cmocka_unit_test(test_karuna_word),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
