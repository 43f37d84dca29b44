// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* awafs-host's BPF program: writes the AWAFS TCP option (docs/header.md) on
 * the segments of the TCP connections of a cgroup.
 *
 * Every data segment carries bytes-sent, the offset of its first byte in its
 * message.  Linux TCP sends GSO super-packets and this runs once per
 * super-packet, so all its segments carry the super-packet's first offset
 * ('awafs-host per-segment IFACE on' limits GSO to one segment).
 *
 * Messages.  What the switch learns from is the size of each completed
 * message, so a message must be what the application means by one, even
 * when it writes a response in several calls (header, then body) or in
 * chunks.  Two ways:
 *
 *   - Records (exact): an application that sends with MSG_EOR marks the end
 *     of each record; TCP never merges data across it and keeps the mark on
 *     the skb.  The segment that sends the marked byte completes the message
 *     ("completed" form, counted by the switch on its PSH/FIN segment).  A
 *     connection that sent one marked record is in record mode for good;
 *     with 'records_only' (awafs-host attach --records) every connection
 *     is, from its first byte.
 *   - Otherwise, a message that has sent everything written so far ends
 *     before the connection's next segment if the peer has sent data since
 *     (the exchange turned around: a new request) or if the connection
 *     wrote nothing new for 'coalesce_ns' (header + body + trailer written
 *     within that time, or a transfer paused by its congestion window, stay
 *     one message).  A FIN ends the message too.  The end is known only
 *     then, after the message's last segment left, so the completion rides
 *     on that next segment -- a pure ACK, the FIN, or the next message's
 *     first segment, all starting at the message's end sequence number --
 *     in the "previous message" form (size and end sequence number of the
 *     previous message; the switch counts it on the segment that starts at
 *     that sequence number, so GSO copies count once).
 *
 * Retransmissions carry their offset, never a completion.
 *
 * Karuna (seed 003): with 'karuna_mark' (awafs-host attach --karuna), the
 * socket's mark, as a Karuna-aware application sets it (SO_MARK: deadline
 * in ms << 20 | size in KB, host-agent/README.md), rides in the option as
 * its Karuna word on every segment that carries the option, unless it is 0.
 * The cgroup's setsockopt program counts marks set on sockets that are not
 * TCP, which no switch will see ('mark-not-tcp').
 *
 * Space: HDR_OPT_LEN reserves the option's length before the header exists;
 * WRITE_HDR_OPT writes it.  When TCP computes its MSS (no segment) the
 * largest form is reserved, so that a full-sized segment still fits the MTU:
 * the option costs OPT_LEN_MAX bytes of MSS.  If the option does not fit,
 * the segment goes without it and 'no_space' counts it: TCP is never
 * affected. */

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* The option's wire format comes from lib/awafs.h, its one definition
 * (the Makefile passes its AWAFS_OPT_* lines as -D flags: a BPF program
 * cannot include the core's header beside vmlinux.h). */
#ifndef AWAFS_OPT_KIND
#error "build with the AWAFS_OPT_* flags the Makefile reads from lib/awafs.h"
#endif
#define OPT_LEN AWAFS_OPT_LEN   /* bytes-sent */
#define OPT_COMPLETED (AWAFS_OPT_LEN_COMPLETED - AWAFS_OPT_LEN)
                                /* + this message's size */
#define OPT_PREVIOUS AWAFS_OPT_PREV_LEN /* + previous message's size, end */
#define OPT_KARUNA AWAFS_OPT_KARUNA_LEN /* + the Karuna word */
#define OPT_LEN_MAX (OPT_LEN + OPT_COMPLETED + OPT_PREVIOUS + OPT_KARUNA)
#define COMPLETED_BIT AWAFS_OPT_COMPLETED_BIT
#define SENT_MAX AWAFS_BYTES_SENT_MAX
#define TCPHDR_FIN 0x01
#define TCPHDR_PSH 0x08
#define ENOSPC 28
#define N_SIZE_BUCKETS 33       /* log2 buckets: [2^(i-1), 2^i). */

#define SOL_SOCKET 1
#define SO_MARK 36
#define IPPROTO_TCP 6
#define SOL_TCP 6
#define TCP_CONGESTION 13
#define CC_NAME_LEN 16

extern void *bpf_cast_to_kern_ctx(void *) __ksym;

/* Set by awafs-host before loading. */
const volatile __u64 coalesce_ns = 10000 * 1000;
/* Messages end only at MSG_EOR marks (and FIN) from the first byte of every
 * connection: the cgroup's applications mark their records. */
const volatile __u8 records_only = 0;
/* The socket's mark is its Karuna word. */
const volatile __u8 karuna_mark = 0;
/* Congestion control for the cgroup's connections, e.g. "awafs_dctcp";
 * empty: the system's. */
const volatile char cc_name[CC_NAME_LEN] = "";

enum counter {
    C_CONNECTIONS,      /* Connections the program saw established. */
    C_MESSAGES,         /* Messages started. */
    C_OPTIONS,          /* Options written. */
    C_COMPLETIONS,      /* ... that carried a completion. */
    C_NO_SPACE,         /* Segments that had no room for the option. */
    C_RETRANSMITS,      /* Options written on retransmissions. */
    C_ERRORS,           /* Unexpected helper failures. */
    C_END_RECORD,       /* Messages ended by MSG_EOR, */
    C_END_TURNAROUND,   /* ... by data from the peer, */
    C_END_IDLE,         /* ... by the coalescing time, */
    C_END_FIN,          /* ... by FIN. */
    C_LOST,             /* Completions that found no segment to ride on. */
    C_KARUNA,           /* Options that carried a Karuna word. */
    C_MARK_NOT_TCP,     /* SO_MARK set on a socket that is not TCP. */
    N_COUNTERS
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, N_COUNTERS);
    __type(key, __u32);
    __type(value, __u64);
} counters SEC(".maps");

/* Completions reported, by size: what the switch will learn from. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, N_SIZE_BUCKETS);
    __type(key, __u32);
    __type(value, __u64);
} sizes SEC(".maps");

struct msg_state {
    __u32 start;        /* Sequence number of the open message's first byte. */
    __u32 end;          /* End of the new data sent so far. */
    __u32 rcv_nxt;      /* What the peer had sent when 'end' was sent. */
    __u32 prev_size;    /* A message that ended and awaits its report: */
    __u32 prev_end;     /* its size and end sequence number. */
    __u64 last_tx_ns;   /* When 'end' was sent. */
    __u8 open;          /* The message has bytes. */
    __u8 all_sent;      /* 'end' was everything written. */
    __u8 pending;       /* prev_* not reported yet. */
    __u8 records;       /* The application marks records (MSG_EOR). */
    /* Decided in HDR_OPT_LEN for WRITE_HDR_OPT: */
    __u8 opt_len;       /* 0 (no option), 8 to OPT_LEN_MAX. */
    __u8 retransmit;
    __u8 w_completed, w_previous;
    __u32 w_sent, w_size, w_prev_size, w_prev_end;
    __u32 w_karuna;     /* 0: none. */
};

struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct msg_state);
} msgs SEC(".maps");

static void
bump(void *map, __u32 key)
{
    __u64 *v = bpf_map_lookup_elem(map, &key);

    if (v) {
        *v += 1;
    }
}

static void
count(enum counter c)
{
    bump(&counters, c);
}

static __u32
size_bucket(__u32 size)
{
    __u32 b = 0;

    for (int i = 0; i < 32 && size; i++) {
        size >>= 1;
        b++;
    }
    return b;
}

static void
end_message(struct msg_state *st, enum counter why)
{
    if (st->pending) {
        count(C_LOST);          /* Its segment never came. */
    }
    st->pending = 1;
    st->prev_size = st->end - st->start;
    st->prev_end = st->end;
    st->open = 0;
    count(why);
}

/* Decides the option of the segment being built (skb in the kernel context:
 * sequence numbers, payload, flags and the MSG_EOR mark), updates the
 * connection's message state and reserves the option's room. */
static int
reserve(struct bpf_sock_ops *skops)
{
    struct bpf_sock_ops_kern *kctx = bpf_cast_to_kern_ctx(skops);
    struct bpf_sock *sk = skops->sk;
    struct tcp_skb_cb *cb;
    struct tcp_sock *tp;
    struct msg_state *st;
    __u32 seq, len, end;
    __u8 flags = skops->skb_tcp_flags;
    int completes = 0, eor;
    __u64 now;

    if (!skops->skb_data) {
        /* TCP is computing its MSS: room for the largest form. */
        if (bpf_reserve_hdr_opt(skops, (karuna_mark ? OPT_LEN_MAX
                                        : OPT_LEN_MAX - OPT_KARUNA), 0)) {
            count(C_NO_SPACE);
        }
        return 1;
    }
    if (!sk || !kctx->skb) {
        return 1;
    }
    st = bpf_sk_storage_get(&msgs, sk, 0, 0);
    tp = bpf_skc_to_tcp_sock(sk);
    if (!st || !tp) {
        return 1;
    }
    cb = (struct tcp_skb_cb *) kctx->skb->cb;
    seq = cb->seq;
    len = skops->skb_len;           /* Payload: no header yet. */
    end = seq + len;
    eor = BPF_CORE_READ_BITFIELD(cb, eor);
    now = bpf_ktime_get_ns();
    st->opt_len = 0;
    st->w_completed = 0;
    st->w_previous = 0;
    st->w_karuna = karuna_mark ? sk->mark : 0;
    st->retransmit = (__s32) (seq - st->end) < 0;

    if (st->retransmit) {
        /* Old data, never a boundary. */
        if (!len) {
            return 1;
        }
        st->w_sent = (__s32) (seq - st->start) >= 0 ? seq - st->start : 0;
        st->opt_len = OPT_LEN;
        goto out;
    }

    /* Did the open message end before this segment? */
    if (st->open && st->all_sent && !st->records) {
        if (skops->rcv_nxt != st->rcv_nxt) {
            end_message(st, C_END_TURNAROUND);
        } else if (now - st->last_tx_ns >= coalesce_ns) {
            end_message(st, C_END_IDLE);
        } else if ((flags & TCPHDR_FIN) && !len) {
            end_message(st, C_END_FIN);
        }
    } else if (st->open && (flags & TCPHDR_FIN) && !len) {
        end_message(st, C_END_FIN);
    }
    if (st->pending && seq != st->prev_end) {
        st->pending = 0;            /* Overtaken by new data. */
        count(C_LOST);
    }

    if (len) {
        if (!st->open) {
            st->open = 1;
            st->start = seq;
            count(C_MESSAGES);
        }
        st->w_sent = seq - st->start;
        st->end = end;
        st->last_tx_ns = now;
        st->rcv_nxt = skops->rcv_nxt;
        st->all_sent = end == tp->write_seq
                       || ((flags & TCPHDR_FIN) && end + 1 == tp->write_seq);
        if (eor) {
            st->records = 1;
        }
        if ((eor || (flags & TCPHDR_FIN))
            && (flags & (TCPHDR_PSH | TCPHDR_FIN))) {
            /* Ends here, exactly: the record's last byte or the FIN. */
            completes = 1;
            st->w_completed = 1;
            st->w_size = end - st->start;
            st->open = 0;
            count(eor ? C_END_RECORD : C_END_FIN);
        }
        st->opt_len = OPT_LEN + (completes ? OPT_COMPLETED : 0);
    }
    if (st->pending) {
        /* This segment starts at the previous message's end. */
        st->opt_len = (st->opt_len ? st->opt_len : OPT_LEN) + OPT_PREVIOUS;
        st->w_previous = 1;
        st->w_prev_size = st->prev_size;
        st->w_prev_end = st->prev_end;
        if (!len) {
            st->w_sent = 0;
        }
    }
    if (!st->opt_len) {
        return 1;                   /* A pure ACK with nothing to report. */
    }
out:
    if (st->w_karuna) {
        st->opt_len += OPT_KARUNA;
    }
    if (bpf_reserve_hdr_opt(skops, st->opt_len, 0)) {
        count(C_NO_SPACE);
        st->opt_len = 0;
    }
    return 1;
}

static int
write(struct bpf_sock_ops *skops)
{
    struct bpf_sock *sk = skops->sk;
    struct msg_state *st;
    __u8 opt[OPT_LEN_MAX];
    __u32 word, len, off = OPT_LEN;
    int completed, previous;
    long err;

    if (!sk) {
        return 1;
    }
    st = bpf_sk_storage_get(&msgs, sk, 0, 0);
    if (!st || !st->opt_len) {
        return 1;
    }
    len = st->opt_len;
    if (len < OPT_LEN || len > OPT_LEN_MAX) {
        return 1;                   /* Bounds for the verifier. */
    }
    completed = st->w_completed;
    previous = st->w_previous;
    word = st->w_sent > SENT_MAX ? SENT_MAX : st->w_sent;
    opt[0] = AWAFS_OPT_KIND;
    opt[1] = len;
    *(__be16 *) &opt[2] = bpf_htons(AWAFS_OPT_EXID);
    *(__be32 *) &opt[4] = bpf_htonl(word | (completed ? COMPLETED_BIT : 0));
    if (completed) {
        *(__be32 *) &opt[off] = bpf_htonl(st->w_size);
        off += OPT_COMPLETED;
    }
    if (previous) {
        *(__be32 *) &opt[off] = bpf_htonl(st->w_prev_size);
        *(__be32 *) &opt[off + 4] = bpf_htonl(st->w_prev_end);
        off += OPT_PREVIOUS;
    }
    if (st->w_karuna) {
        *(__be32 *) &opt[off] = bpf_htonl(st->w_karuna);
        off += OPT_KARUNA;
    }
    if (off != len) {
        count(C_ERRORS);            /* Reserved for another form. */
        st->opt_len = 0;
        return 1;
    }
    err = bpf_store_hdr_opt(skops, opt, len, 0);
    st->opt_len = 0;
    if (err) {
        /* No room (reservation failed) or another option with our
         * kind/ExID: the segment leaves without ours. */
        count(err == -ENOSPC ? C_NO_SPACE : C_ERRORS);
        return 1;
    }
    count(C_OPTIONS);
    if (st->retransmit) {
        count(C_RETRANSMITS);
    }
    if (completed) {
        count(C_COMPLETIONS);
        bump(&sizes, size_bucket(st->w_size));
    }
    if (st->w_karuna) {
        count(C_KARUNA);
    }
    if (previous) {
        st->pending = 0;
        count(C_COMPLETIONS);
        bump(&sizes, size_bucket(st->w_prev_size));
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

/* Data starts at snd_nxt; no message is open yet. */
static void
established(struct bpf_sock_ops *skops)
{
    struct bpf_sock *sk = skops->sk;
    struct msg_state *st;

    if (!sk) {
        return;
    }
    st = bpf_sk_storage_get(&msgs, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
    if (!st) {
        count(C_ERRORS);
        return;
    }
    st->start = st->end = skops->snd_nxt;
    st->rcv_nxt = skops->rcv_nxt;
    st->records = records_only;
    bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags
                              | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
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
        established(skops);
        return 1;
    case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
        return reserve(skops);
    case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
        return write(skops);
    default:
        return 1;
    }
}

/* Counts SO_MARK on sockets that are not TCP (the option rides on TCP
 * only); the call itself goes on unchanged. */
SEC("cgroup/setsockopt")
int awafs_setsockopt(struct bpf_sockopt *ctx)
{
    struct bpf_sock *sk = ctx->sk;

    if (karuna_mark && ctx->level == SOL_SOCKET && ctx->optname == SO_MARK
        && sk && sk->protocol != IPPROTO_TCP) {
        count(C_MARK_NOT_TCP);
    }
    return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
