/* libFuzzer target for the AWAFS header parser and the flow key extraction:
 * any byte string is a frame, read inside VXLAN and Geneve tunnels at their
 * standard ports and at 8472 (Linux's old VXLAN port) as tunnel=auto
 * would.  Built with ASan + UBSan; besides memory errors
 * it checks their promises about what they return.
 *
 * The same bytes are then read as a sequence of frames, each a 2-byte
 * big-endian length and that many bytes (the last one cut short if the
 * input ends), which go through the flow table one after another as the
 * datapath's would, a microsecond apart: frames of several segments of the
 * same flows, with whatever flags, sequence numbers and padding the fuzzer
 * finds.  Over the sequence no completion reports more bytes than its
 * segments carried. */

#include "awafs.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct awafs_tunnel_ports ports;

/* Checks 'frame' of 'len' bytes parsed into 'h' as TCP; feeds it to 't'.
 * Returns the bytes its completions report. */
static uint64_t
through_table(struct awafs_flowtab *t, const uint8_t *frame, size_t len,
              const struct awafs_hdr *h, int64_t now)
{
    static const struct awafs_thresholds thr = {
        .n_queues = 4,
        .thr = { 3000, 30000, 300000, UINT64_MAX, UINT64_MAX, UINT64_MAX,
                 UINT64_MAX },
    };
    struct awafs_flow_result res;
    struct awafs_flow_key key;
    uint64_t bytes = 0;

    if (!awafs_flow_key_from_frame(frame, len, h, &key)
        || h->ip_end > len || h->l4_ofs >= h->ip_end
        || h->payload_len > h->ip_end - h->l4_ofs) {
        abort();
    }
    awafs_flowtab_update(t, &key, h, now & 1, now, 50000, &thr, &res);
    if (res.queue >= thr.n_queues || res.n_completed > 2) {
        abort();
    }
    for (int c = 0; c < res.n_completed; c++) {
        bytes += res.completed[c];
    }
    return bytes;
}

static void
sequence(const uint8_t *data, size_t size)
{
    struct awafs_flowtab *t = awafs_flowtab_create(8, 1);
    uint64_t payload = 0, completed = 0;
    int64_t now = 0;

    for (size_t i = 0; i + 2 <= size; ) {
        size_t len = (size_t) data[i] << 8 | data[i + 1];
        const uint8_t *frame = data + i + 2;
        struct awafs_hdr h;
        enum awafs_parse_result r;

        i += 2;
        len = len < size - i ? len : size - i;
        i += len;
        r = awafs_parse_tunnel(frame, len, &ports, &h, NULL);
        if (r == AWAFS_PARSE_OK || r == AWAFS_PARSE_NO_OPTION) {
            payload += h.payload_len;
            completed += through_table(t, frame, len, &h, ++now);
            if (completed > payload) {
                abort();
            }
        }
    }
    awafs_flowtab_destroy(t);
}

/* The inline fast path read the 'head_len' bytes at 'head' of a frame of
 * 'len' bytes as 'r' and 'h': so must the general parser. */
static void
check_general(const uint8_t *head, size_t head_len, size_t len,
              enum awafs_parse_result r, const struct awafs_hdr *h)
{
    struct awafs_hdr general;

    if (awafs_parse_head__(head, head_len, len, &ports, &general, NULL) != r
        || memcmp(&general, h, sizeof general)
        || h->padded != awafs_hdr_padded(h, len)) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct awafs_parse_stats st = { .n = { 0 } };
    enum awafs_parse_result r;
    struct awafs_hdr h;
    uint64_t events = 0;

    if (!ports.n) {
        awafs_tunnel_ports_add(&ports, AWAFS_VXLAN_PORT, AWAFS_TUNNEL_VXLAN);
        awafs_tunnel_ports_add(&ports, AWAFS_GENEVE_PORT,
                               AWAFS_TUNNEL_GENEVE);
        awafs_tunnel_ports_add(&ports, 8472, AWAFS_TUNNEL_VXLAN);
    }
    r = awafs_parse_tunnel(data, size, &ports, &h, &st);
    if (r >= AWAFS_PARSE_N_RESULTS || st.n[r] != 1) {
        abort();
    }
    check_general(data, size, size, r, &h);
    for (int e = 0; e < AWAFS_TUN_N_EVENTS; e++) {
        events += st.tunnel[e];
    }
    /* A tunnel is read once, and a tunnelled frame's inner headers lie
     * after its outer ones. */
    if (events > 2 || (h.tunnel && (h.outer_l3_ofs < 14
                                    || h.outer_l3_ofs >= h.l2_ofs
                                    || h.vni > 0xffffff
                                    || (h.l3_ofs
                                        && h.l3_ofs < h.l2_ofs + 14)))) {
        abort();
    }
    if (size) {
        /* Marking writes only inside the frame (ASan checks the copy). */
        uint8_t *copy = malloc(size);
        size_t head = data[0] % 2 ? size / 2 : size - 1;
        struct awafs_hdr hh;
        enum awafs_parse_result rh;

        memcpy(copy, data, size);
        awafs_ecn_set_ce(copy, size, &h);
        free(copy);

        /* The head of a longer frame (a multi-segment packet): nothing is
         * read past it, and what it decides the whole frame decides. */
        copy = malloc(head ? head : 1);
        memcpy(copy, data, head);
        rh = awafs_parse_head(copy, head, size, &ports, &hh, NULL);
        check_general(copy, head, size, rh, &hh);
        free(copy);
        if (rh != AWAFS_PARSE_UNSUPPORTED && rh != r) {
            abort();
        }
    }
    if (r == AWAFS_PARSE_OK || r == AWAFS_PARSE_NO_OPTION) {
        /* TCP found: the flow key extraction takes it. */
        struct awafs_flow_key key;

        if (!awafs_flow_key_from_frame(data, size, &h, &key)
            || key.ip_version != h.ip_version) {
            abort();
        }
    }
    if (r == AWAFS_PARSE_OK) {
        /* Offsets point inside the frame, in order; values are in range. */
        if (h.l3_ofs < h.l2_ofs + 14 || h.l4_ofs <= h.l3_ofs
            || h.l4_ofs + 20 > size
            || (h.ip_version != 4 && h.ip_version != 6)
            || h.bytes_sent > AWAFS_BYTES_SENT_MAX
            || (h.completed && h.flow_size < h.bytes_sent)
            || (!h.completed && h.flow_size)
            || (!h.has_prev && (h.prev_size || h.prev_end))
            || (awafs_hdr_counts_prev(&h) && !h.has_prev)
            || (awafs_hdr_counts_completion(&h) && !h.completed)
            || (!h.has_karuna && h.karuna)
            || awafs_karuna_type(h.karuna) > AWAFS_FLOW_DEADLINE) {
            abort();
        }
    }
    sequence(data, size);
    return 0;
}
