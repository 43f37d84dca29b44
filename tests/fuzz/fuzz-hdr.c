/* libFuzzer target for the AWAFS header parsers: any byte string is a frame.
 * Built with ASan + UBSan; besides memory errors it checks the parsers'
 * promises about what they return: awafs_parse_l3() given the offset at
 * which awafs_parse() found the network header returns the same, and given
 * any offset stays inside the frame. */

#include "awafs.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless 'h', parsed from a 'size'-byte frame with result 'r', keeps
 * the parser's promises. */
static void
check(enum awafs_parse_result r, const struct awafs_parse_stats *st,
      const struct awafs_hdr *h, size_t size)
{
    if (r >= AWAFS_PARSE_N_RESULTS || st->n[r] != 1) {
        abort();
    }
    if (r == AWAFS_PARSE_OK) {
        /* Offsets point inside the frame, in order; values are in range. */
        if (h->l3_ofs < 14 || h->l4_ofs <= h->l3_ofs || h->l4_ofs + 20 > size
            || (h->ip_version != 4 && h->ip_version != 6)
            || h->bytes_sent > AWAFS_BYTES_SENT_MAX
            || (h->completed && h->flow_size < h->bytes_sent)
            || (!h->completed && h->flow_size)
            || (!h->has_prev && (h->prev_size || h->prev_end))
            || (awafs_hdr_counts_prev(h) && !h->has_prev)
            || (awafs_hdr_counts_completion(h) && !h->completed)) {
            abort();
        }
    }
}

/* Where the Ethernet header and up to two VLAN tags end, as a datapath's
 * flow extraction finds the network header; 0 if beyond the frame. */
static size_t
l3_offset(const uint8_t *d, size_t size)
{
    size_t ofs = 14;

    for (int i = 0; i < 2 && ofs <= size; i++) {
        uint16_t type = d[ofs - 2] << 8 | d[ofs - 1];

        if (type != 0x8100 && type != 0x88a8) {
            break;
        }
        ofs += 4;
    }
    return ofs <= size ? ofs : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct awafs_parse_stats st = { { 0 } };
    struct awafs_hdr h, h2;
    enum awafs_parse_result r;
    size_t l3;

    memset(&h, 0, sizeof h);
    r = awafs_parse(data, size, &h, &st);
    check(r, &st, &h, size);

    l3 = l3_offset(data, size);
    if (l3) {
        memset(&st, 0, sizeof st);
        memset(&h2, 0, sizeof h2);
        if (awafs_parse_l3(data, size, l3, &h2, &st) != r
            || memcmp(&h, &h2, sizeof h)) {
            abort();
        }
    }

    /* Any offset, even past the end. */
    l3 = size >= 2 ? (size_t) (data[0] | data[1] << 8) % (size + 16) : 0;
    memset(&st, 0, sizeof st);
    r = awafs_parse_l3(data, size, l3, &h2, &st);
    check(r, &st, &h2, size);
    return 0;
}
