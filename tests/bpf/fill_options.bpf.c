// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test helper: takes 28 bytes of TCP option space on every segment (an
 * RFC 6994 option of another experiment), so that beside timestamps (12
 * bytes) no room is left for the AWAFS option.  Attached to the cgroup
 * before awafs-host, it runs first and reserves first. */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define FILL_LEN 28

SEC("sockops")
int fill_options(struct bpf_sock_ops *skops)
{
    __u8 opt[FILL_LEN] = { 254, FILL_LEN, 0xbe, 0xef };

    switch (skops->op) {
    case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
    case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags
                                  | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
        break;
    case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
        bpf_reserve_hdr_opt(skops, FILL_LEN, 0);
        break;
    case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
        bpf_store_hdr_opt(skops, opt, FILL_LEN, 0);
        break;
    }
    return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
