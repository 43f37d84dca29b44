// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* awafs-host's BPF program: writes the AWAFS TCP option (docs/header.md) on
 * every data segment of the TCP connections of a cgroup.
 *
 * Linux TCP always sends GSO super-packets (segmented in software if the NIC
 * cannot), and this runs once per super-packet: all its segments carry the
 * same option.  The switch counts a completion only on the segment with PSH
 * or FIN, the last one, so sizes and counts stay exact; bytes-sent is the
 * super-packet's first offset.  'awafs-host per-segment IFACE on' limits
 * GSO to one segment for exact per-segment values, at a throughput cost.
 *
 * Messages (PIAS-style, for persistent connections): a message starts on a
 * connection's first data segment, and again on a new segment sent after
 * the connection was idle for longer than 'idle_ns' with all data sent.  A
 * segment that sends the last byte the application has written so far, with
 * PSH or FIN, ends the message: its option carries the completed flag and
 * the message's size.  Retransmissions carry their offset, never a
 * completion.
 *
 * Space: HDR_OPT_LEN reserves 8 bytes, or 12 for a completion, before the
 * header exists; WRITE_HDR_OPT writes the option into the TCP header, whose
 * sequence number it reads.  When TCP computes its MSS (HDR_OPT_LEN with no
 * segment), 12 bytes are reserved, so that a full-sized segment that ends a
 * message still fits the MTU: the option costs 12 bytes of MSS.  If the option does not fit, the segment goes
 * without it and 'no_space' counts it: TCP is never affected. */

#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define AWAFS_KIND 253
#define AWAFS_EXID 0x4157
#define OPT_LEN 8
#define OPT_LEN_COMPLETED 12
#define COMPLETED_BIT 0x80000000u
#define SENT_MAX 0x7fffffffu
#define TCPHDR_FIN 0x01
#define TCPHDR_PSH 0x08
#define ENOSPC 28

#define SOL_TCP 6
#define TCP_CONGESTION 13
#define CC_NAME_LEN 16

/* Set by awafs-host before loading. */
const volatile __u64 idle_ns = 500 * 1000;
/* Congestion control for the cgroup's connections, e.g. "awafs_dctcp";
 * empty: the system's. */
const volatile char cc_name[CC_NAME_LEN] = "";

enum counter {
    C_CONNECTIONS,      /* Connections the program saw established. */
    C_MESSAGES,         /* Messages started. */
    C_OPTIONS,          /* Options written. */
    C_COMPLETIONS,      /* ... of which completions. */
    C_NO_SPACE,         /* Segments that had no room for the option. */
    C_RETRANSMITS,      /* Options written on retransmissions. */
    C_ERRORS,           /* Unexpected helper failures. */
    N_COUNTERS
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} counters SEC(".maps");

struct awafs_opt {
    __u8 kind;
    __u8 len;
    __be16 exid;
    __be32 word;        /* Completed bit, bytes sent before the segment. */
    __be32 size;        /* Message size, if completed. */
};

struct msg_state {
    __u32 start;        /* Sequence number of the message's first byte. */
    __u32 end;          /* Highest end sequence number sent. */
    __u64 last_tx_ns;   /* Last new data sent. */
    __u8 active;
    __u8 all_sent;      /* The last segment sent everything written. */
    __u8 want_completion;  /* Decided in HDR_OPT_LEN. */
};

struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct msg_state);
} msgs SEC(".maps");

static void
count(enum counter c)
{
    __u32 key = c;
    __u64 *v = bpf_map_lookup_elem(&counters, &key);

    if (v) {
        *v += 1;
    }
}

/* The bytes the application has written and TCP has not sent yet end at
 * write_seq; a segment ending there (FIN takes one more) sends all. */
static int
ends_written_data(struct bpf_sock *sk, __u32 end, __u8 flags)
{
    struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

    if (!tp) {
        return 0;
    }
    return end == tp->write_seq
           || ((flags & TCPHDR_FIN) && end + 1 == tp->write_seq);
}

static int
reserve(struct bpf_sock_ops *skops)
{
    struct bpf_sock *sk = skops->sk;
    struct msg_state *st;
    __u32 len = skops->skb_len;     /* Payload: no header yet. */
    __u8 flags = skops->skb_tcp_flags;
    int want;

    if (!skops->skb_data) {
        /* TCP is computing its MSS: room for the larger form. */
        if (bpf_reserve_hdr_opt(skops, OPT_LEN_COMPLETED, 0)) {
            count(C_NO_SPACE);
        }
        return 1;
    }
    if (!len || !sk) {
        return 1;                   /* Not a data segment. */
    }
    st = bpf_sk_storage_get(&msgs, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (!st) {
        count(C_ERRORS);
        return 1;
    }
    /* New data is sent at snd_nxt; a retransmission never completes. */
    want = (flags & (TCPHDR_PSH | TCPHDR_FIN))
           && ends_written_data(sk, skops->snd_nxt + len, flags);
    st->want_completion = want;
    if (bpf_reserve_hdr_opt(skops, want ? OPT_LEN_COMPLETED : OPT_LEN, 0)) {
        count(C_NO_SPACE);
    }
    return 1;
}

static int
write(struct bpf_sock_ops *skops)
{
    void *data = (void *) (long) skops->skb_data;
    void *data_end = (void *) (long) skops->skb_data_end;
    struct bpf_sock *sk = skops->sk;
    struct tcphdr *th = data;
    struct msg_state *st;
    struct awafs_opt opt;
    __u32 seq, end, sent, hlen, payload;
    __u64 now = bpf_ktime_get_ns();
    int completed = 0;
    long err;

    if ((void *) (th + 1) > data_end || !sk) {
        return 1;
    }
    st = bpf_sk_storage_get(&msgs, sk, 0, 0);
    if (!st) {
        return 1;
    }
    hlen = th->doff * 4;
    if (skops->skb_len <= hlen) {
        return 1;
    }
    payload = skops->skb_len - hlen;
    seq = bpf_ntohl(th->seq);
    end = seq + payload;

    if (!st->active || (__s32) (seq - st->end) >= 0) {
        /* New data. */
        if (!st->active || (st->all_sent
                            && now - st->last_tx_ns > idle_ns)) {
            st->start = seq;
            st->active = 1;
            count(C_MESSAGES);
        }
        st->end = end;
        st->last_tx_ns = now;
        completed = st->want_completion;
        st->all_sent = completed;
    } else {
        count(C_RETRANSMITS);
    }

    sent = (__s32) (seq - st->start) >= 0 ? seq - st->start : 0;
    if (sent > SENT_MAX) {
        sent = SENT_MAX;
    }
    opt.kind = AWAFS_KIND;
    opt.len = completed ? OPT_LEN_COMPLETED : OPT_LEN;
    opt.exid = bpf_htons(AWAFS_EXID);
    opt.word = bpf_htonl(sent | (completed ? COMPLETED_BIT : 0));
    opt.size = bpf_htonl(end - st->start);
    err = bpf_store_hdr_opt(skops, &opt, opt.len, 0);
    if (err) {
        /* No room (reservation failed) or another option with our
         * kind/ExID: the segment leaves without ours. */
        count(err == -ENOSPC ? C_NO_SPACE : C_ERRORS);
        return 1;
    }
    count(C_OPTIONS);
    if (completed) {
        count(C_COMPLETIONS);
    }
    return 1;
}

/* Before the SYN (active) or when listening (passive), so that a congestion
 * control that needs ECN negotiates it. */
static void
set_cc(struct bpf_sock_ops *skops)
{
    char name[CC_NAME_LEN];

    if (!cc_name[0]) {
        return;
    }
    /* Read through 'volatile', byte by byte: a plain copy of the const
     * array would be folded to its "" initializer at compile time. */
    for (int i = 0; i < CC_NAME_LEN; i++) {
        name[i] = cc_name[i];
    }
    if (bpf_setsockopt(skops, SOL_TCP, TCP_CONGESTION, name, CC_NAME_LEN)) {
        count(C_ERRORS);
    }
}

SEC("sockops")
int awafs_sockops(struct bpf_sock_ops *skops)
{
    switch (skops->op) {
    case BPF_SOCK_OPS_TCP_CONNECT_CB:
    case BPF_SOCK_OPS_TCP_LISTEN_CB:
        set_cc(skops);
        return 1;
    case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
    case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
        count(C_CONNECTIONS);
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags
                                  | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
        return 1;
    case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
        return reserve(skops);
    case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
        return write(skops);
    default:
        return 1;
    }
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
