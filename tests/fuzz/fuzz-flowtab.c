/* libFuzzer target for the switch's flow table (trust=switch|verify): the
 * input is a sequence of TCP segments, each 16 bytes that say which of a
 * few hosts and ports sends it, its flags, sequence and ACK numbers,
 * payload length, AWAFS option (none, data, completion, previous message's
 * report, with fuzzed values, and a fuzzed Karuna word or none) and the
 * time since the previous segment.
 * Each is built into a real frame and goes through what the datapath does:
 * awafs_parse(), awafs_flow_key_from_frame(), awafs_flowtab_update(), and
 * now and then awafs_flowtab_sweep(), on a table of 8 flows so that
 * evictions happen, with tardy flows off, TFS or TFS+ (by input length),
 * and a per-source completion limit.  A segment may be padded past the
 * Ethernet minimum, and byte-free ones go through the port's budget, as
 * the datapath does.  Built with ASan + UBSan; checks the table's promises,
 * over the whole sequence: no completion reports more bytes than the
 * segments forwarded, a Karuna deadline is never taken on the sender's
 * word, every limited completion is counted, padding is told. */

#include "awafs.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECORD 16
#define N_QUEUES 4

static uint32_t
rd32(const uint8_t *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | p[2] << 8 | p[3];
}

/* Builds the segment 'r' describes into 'f'; returns the frame's length. */
static size_t
build(const uint8_t *r, uint8_t *f)
{
    static const uint8_t hosts[4] = { 1, 2, 3, 200 };
    bool v6 = r[0] & 0x10;
    size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), opt_len = 0;
    size_t payload = (r[2] << 8 | r[3]) % 1461;
    uint8_t opt[24];
    size_t tcp_len, len;

    memset(f, 0, 1600);
    f[12] = v6 ? 0x86 : 0x08;
    f[13] = v6 ? 0xdd : 0x00;
    switch (r[14] & 3) {
    case 1:
        opt_len = awafs_opt_encode(opt, rd32(r + 4) >> (r[15] & 31), false,
                                   0);
        break;
    case 2:
        opt_len = awafs_opt_encode(opt, rd32(r + 4) >> (r[15] & 31), true,
                                   rd32(r + 4) + payload);
        break;
    case 3:
        opt_len = awafs_opt_encode_prev(opt, 0, false, 0,
                                        rd32(r + 8) >> (r[15] & 31),
                                        rd32(r + 4));
        break;
    }
    if (opt_len && (r[14] & 16)) {
        opt_len = awafs_opt_add_karuna(opt, opt_len, rd32(r + 8));
    }
    while (opt_len % 4) {
        opt[opt_len++] = 1;     /* NOP. */
    }
    tcp_len = 20 + opt_len + payload;
    if (v6) {
        f[l3] = 0x60;
        f[l3 + 4] = tcp_len >> 8;
        f[l3 + 5] = tcp_len;
        f[l3 + 6] = 6;
        f[l3 + 23] = hosts[r[0] & 3];      /* Source fd00::x. */
        f[l3 + 39] = hosts[(r[0] >> 2) & 3] ^ 0x80;
    } else {
        f[l3] = 0x45;
        f[l3 + 2] = (20 + tcp_len) >> 8;
        f[l3 + 3] = 20 + tcp_len;
        f[l3 + 9] = 6;
        f[l3 + 12] = 10;
        f[l3 + 15] = hosts[r[0] & 3];
        f[l3 + 16] = 10;
        f[l3 + 19] = hosts[(r[0] >> 2) & 3] ^ 0x80;
    }
    f[l4] = 0x9c;                       /* Source port 40000 + x. */
    f[l4 + 1] = 0x40 + (r[0] >> 5);
    f[l4 + 3] = 80;
    memcpy(f + l4 + 4, r + 4, 8);       /* Sequence and ACK numbers. */
    f[l4 + 12] = (5 + opt_len / 4) << 4;
    f[l4 + 13] = r[1];                  /* Flags. */
    memcpy(f + l4 + 20, opt, opt_len);
    len = l4 + tcp_len;
    if (r[15] & 0x80) {
        len += r[15] & 0x7f;    /* Padding after the IP packet. */
    }
    return len < 60 ? 60 : len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t frame[1600];
    struct awafs_thresholds thr = { .n_queues = N_QUEUES,
                                    .thr = { 3000, 30000, 300000,
                                             UINT64_MAX, UINT64_MAX,
                                             UINT64_MAX, UINT64_MAX } };
    static const uint64_t tardy_limits[3] = { 0, UINT64_MAX, 3000 };
    struct awafs_flowtab *t = awafs_flowtab_create(8, size);
    struct awafs_srclimit *limit = awafs_srclimit_create(4, 1000, 2, size);
    struct awafs_flowtab_stats st;
    uint64_t payload = 0, completed = 0, over = 0, refused = 0;
    struct awafs_tb budget;
    int64_t now = 0;

    awafs_flowtab_set_srclimit(t, limit);
    awafs_byte_free_init(&budget, 125000, 1000000, 0);
    awafs_flowtab_set_tardy(t, tardy_limits[size % 3]);
    /* A queue-0 budget per source one time in two, and a byte-free one
     * per source one time in two, independently. */
    awafs_flowtab_set_queue0_rate(t, size % 2 ? 100000 : 0);
    awafs_flowtab_set_byte_free_rate(t, size % 4 < 2 ? 2000 : 0);
    /* Short timeouts on the fuzzer's clock; aging on two times in three. */
    if (!awafs_flowtab_set_aging(t, 1000, size % 3 ? 1 + size % 5 : 0,
                                 size % 3 ? 10 : 0)) {
        abort();
    }

    for (size_t i = 0; i + RECORD <= size; i += RECORD) {
        const uint8_t *r = data + i;
        size_t len = build(r, frame);
        struct awafs_flow_result res;
        struct awafs_flow_key key;
        struct awafs_hdr h;
        enum awafs_parse_result pr = awafs_parse(frame, len, &h, NULL);

        now += (int64_t) (r[12] << 8 | r[13]) << 4;
        if ((pr != AWAFS_PARSE_OK && pr != AWAFS_PARSE_NO_OPTION)
            || !awafs_flow_key_from_frame(frame, len, &h, &key)) {
            abort();            /* Every built segment is valid TCP. */
        }
        if (awafs_hdr_padded(&h, len) != ((r[15] & 0x80) && len > 60
                                          && len > h.ip_end)) {
            abort();
        }
        payload += h.payload_len;
        awafs_flowtab_update(t, &key, &h, r[14] & 4, now, 50000, &thr, &res);
        if (res.queue >= N_QUEUES || res.n_completed < 0
            || res.n_completed > 2 || res.type >= AWAFS_FLOW_DEADLINE
            || (res.byte_free_refused && h.payload_len)) {
            abort();            /* Only byte-free segments are refused. */
        }
        refused += res.byte_free_refused;
        for (int c = 0; c < res.n_completed; c++) {
            if (res.completed[c] > (UINT64_C(1) << 40)
                || res.completed_type[c] >= AWAFS_FLOW_DEADLINE) {
                abort();        /* Counts saturate at 1 TB. */
            }
            completed += res.completed[c];
        }
        if (completed > payload) {
            abort();            /* More than the segments forwarded. */
        }
        if (!h.payload_len
            && awafs_byte_free_queue(&budget, now, len, N_QUEUES, &over)
               >= N_QUEUES) {
            abort();
        }
        if (r[14] & 8) {
            uint8_t srcs[8][16];
            uint64_t sizes[8];

            size_t n = awafs_flowtab_sweep(t, 8, now, 50000, sizes, NULL,
                                             srcs);

            if (n > 8) {
                abort();
            }
            for (size_t c = 0; c < n; c++) {
                completed += sizes[c];
            }
            if (completed > payload) {
                abort();
            }
        }
    }
    awafs_flowtab_get_stats(t, &st);
    if (st.flows > 8 || st.tardy_packets > size / RECORD
        || st.aged_flows > st.timeouts || st.timeouts > size / RECORD
        || st.limited != awafs_srclimit_limited(limit)
        || st.midstream_packets > size / RECORD
        || over > size / RECORD || st.byte_free_limited != refused) {
        abort();
    }
    awafs_flowtab_destroy(t);
    awafs_srclimit_destroy(limit);
    return 0;
}
