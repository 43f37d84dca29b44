// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test helper: a lying end host.  Writes a well-formed AWAFS option that
 * always claims 0 bytes sent, on every data segment, so that with
 * trust=host its flows would never be demoted.  The option's constants
 * are lib/awafs.h's (-D flags from the Makefile). */

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct awafs_opt {
    __u8 kind;
    __u8 len;
    __be16 exid;
    __be32 word;
};

SEC("sockops")
int lying_sender(struct bpf_sock_ops *skops)
{
    struct awafs_opt opt = { .kind = AWAFS_OPT_KIND, .len = AWAFS_OPT_LEN,
                             .exid = bpf_htons(AWAFS_OPT_EXID), .word = 0 };

    switch (skops->op) {
    case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
    case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags
                                  | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
        break;
    case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
        bpf_reserve_hdr_opt(skops, sizeof opt, 0);
        break;
    case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
        if (skops->skb_len > 60) {      /* Data, not a bare header. */
            bpf_store_hdr_opt(skops, &opt, sizeof opt, 0);
        }
        break;
    }
    return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
