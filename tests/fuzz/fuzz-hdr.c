/* libFuzzer target for the AWAFS header parser and the flow key extraction:
 * any byte string is a frame.  Built with ASan + UBSan; besides memory errors
 * it checks their promises about what they return. */

#include "awafs.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct awafs_parse_stats st = { { 0 } };
    struct awafs_hdr h;
    enum awafs_parse_result r = awafs_parse(data, size, &h, &st);

    if (r >= AWAFS_PARSE_N_RESULTS || st.n[r] != 1) {
        abort();
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
        if (h.l3_ofs < 14 || h.l4_ofs <= h.l3_ofs || h.l4_ofs + 20 > size
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
    return 0;
}
