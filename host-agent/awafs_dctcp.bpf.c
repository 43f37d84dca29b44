// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* DCTCP (RFC 8257) as a BPF struct_ops congestion control, "awafs_dctcp",
 * for kernels built without tcp_dctcp.
 *
 * Sender: once per window of data, alpha <- (1 - g) alpha + g F, where F is
 * the fraction of segments delivered with ECE in that window (the kernel's
 * tp->delivered and tp->delivered_ce; g = 1/16, alpha in units of 1/1024).  On congestion the window becomes
 * cwnd (1 - alpha / 2), so it shrinks in proportion to how much was marked,
 * instead of halving as classic ECN does.
 *
 * Receiver: echoes every CE change at once (an immediate ACK for the bytes
 * before the change), so that the sender sees the marked fraction exactly.
 *
 * 'reductions' (an array of one) keeps the last window reduction for tests
 * and observation: the window before, alpha, and the new ssthresh. */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* From include/net/tcp.h (macros, not in vmlinux.h). */
#define TCP_ECN_DEMAND_CWR 4
#define TCP_CONG_NON_RESTRICTED 0x1
#define TCP_CONG_NEEDS_ECN 0x2

#define ALPHA_ONE 1024U             /* alpha = 1 */
#define SHIFT_G 4                   /* g = 1/16 */
#define MIN_CWND 2U

struct dctcp {
    __u32 window_end;       /* snd_nxt when the current window started. */
    __u32 old_delivered;    /* tp->delivered then ... */
    __u32 old_delivered_ce; /* ... and tp->delivered_ce. */
    __u32 alpha;            /* 0..ALPHA_ONE */
    __u32 loss_cwnd;
    __u32 prior_rcv_nxt;    /* Receiver: rcv_nxt at the last CE change. */
    __u8 ce_state;          /* Receiver: last packet was CE. */
    __u8 ca_state;
};

struct reduction {
    __u32 cwnd;
    __u32 alpha;
    __u32 ssthresh;
    __u32 count;
    __u32 acks;             /* Sender: ACK events ... */
    __u32 ece_acks;         /* ... with ECE. */
    __u32 ce_changes;       /* Receiver: changes to CE ... */
    __u32 no_ce_changes;    /* ... and back. */
    __u32 alpha_updates;    /* Sender: windows folded into alpha. */
    __u32 last_alpha;
    __u32 inits;
};


struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct reduction);
} reductions SEC(".maps");

static struct reduction *
stats(void)
{
    __u32 key = 0;

    return bpf_map_lookup_elem(&reductions, &key);
}

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack,
                                __u32 acked) __ksym;

static struct dctcp *
ca_of(struct sock *sk)
{
    return (void *) ((struct inet_connection_sock *) sk)->icsk_ca_priv;
}

static struct tcp_sock *
tp_of(struct sock *sk)
{
    return (struct tcp_sock *) sk;
}

static void
new_window(struct tcp_sock *tp, struct dctcp *ca)
{
    ca->window_end = tp->snd_nxt;
    ca->old_delivered = tp->delivered;
    ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops/awafs_dctcp_init")
void BPF_PROG(awafs_dctcp_init, struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct dctcp *ca = ca_of(sk);

    struct reduction *r = stats();

    if (r) {
        r->inits++;
    }
    ca->alpha = ALPHA_ONE;      /* Start cautious, as RFC 8257 suggests. */
    ca->loss_cwnd = 0;
    ca->ce_state = 0;
    ca->ca_state = 0;
    ca->prior_rcv_nxt = tp->rcv_nxt;
    new_window(tp, ca);
}

/* Per ACK: at the end of a window of data, fold the fraction of segments
 * delivered with ECE into alpha. */
SEC("struct_ops/awafs_dctcp_in_ack_event")
void BPF_PROG(awafs_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
    struct tcp_sock *tp = tp_of(sk);
    struct dctcp *ca = ca_of(sk);
    struct reduction *r = stats();

    if (r) {
        r->acks++;
        r->ece_acks += !!(flags & CA_ACK_ECE);
    }
    if ((__s32) (tp->snd_una - ca->window_end) >= 0) {
        __u32 delivered = tp->delivered - ca->old_delivered;
        __u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
        __u32 alpha = ca->alpha;

        if (delivered) {
            /* alpha += g (F - alpha), in integers. */
            alpha = alpha - (alpha >> SHIFT_G)
                    + (delivered_ce << (10 - SHIFT_G)) / delivered;
            ca->alpha = alpha > ALPHA_ONE ? ALPHA_ONE : alpha;
            if (r) {
                r->alpha_updates++;
                r->last_alpha = ca->alpha;
            }
        }
        new_window(tp, ca);
    }
}

SEC("struct_ops/awafs_dctcp_ssthresh")
__u32 BPF_PROG(awafs_dctcp_ssthresh, struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct dctcp *ca = ca_of(sk);
    __u32 cwnd = tp->snd_cwnd;
    __u32 ssthresh = cwnd - ((cwnd * ca->alpha) >> 11);  /* alpha/2 */
    struct reduction *r = stats();

    if (ssthresh < MIN_CWND) {
        ssthresh = MIN_CWND;
    }
    ca->loss_cwnd = cwnd;
    if (r) {
        r->cwnd = cwnd;
        r->alpha = ca->alpha;
        r->ssthresh = ssthresh;
        r->count++;
    }
    return ssthresh;
}

/* Receiver side: on a change between CE and not-CE, ACK what came before
 * the change at once, with the old ECE state, then switch. */
static void
ce_change(struct sock *sk, struct dctcp *ca, __u8 ce)
{
    struct tcp_sock *tp = tp_of(sk);
    struct reduction *r = stats();

    if (ca->ce_state != ce) {
        if (r) {
            if (ce) {
                r->ce_changes++;
            } else {
                r->no_ce_changes++;
            }
        }
        bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
        ca->ce_state = ce;
        if (ce) {
            tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
        } else {
            tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
        }
    }
    ca->prior_rcv_nxt = tp->rcv_nxt;
}

SEC("struct_ops/awafs_dctcp_cwnd_event")
void BPF_PROG(awafs_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
    struct dctcp *ca = ca_of(sk);

    if (ev == CA_EVENT_ECN_IS_CE) {
        ce_change(sk, ca, 1);
    } else if (ev == CA_EVENT_ECN_NO_CE) {
        ce_change(sk, ca, 0);
    }
}

SEC("struct_ops/awafs_dctcp_set_state")
void BPF_PROG(awafs_dctcp_set_state, struct sock *sk, __u8 new_state)
{
    struct dctcp *ca = ca_of(sk);

    /* A loss is not a mark: remember the window to undo to. */
    if (new_state == TCP_CA_Recovery && ca->ca_state != TCP_CA_Recovery) {
        ca->loss_cwnd = tp_of(sk)->snd_cwnd;
    }
    ca->ca_state = new_state;
}

SEC("struct_ops/awafs_dctcp_undo_cwnd")
__u32 BPF_PROG(awafs_dctcp_undo_cwnd, struct sock *sk)
{
    __u32 cwnd = tp_of(sk)->snd_cwnd, loss = ca_of(sk)->loss_cwnd;

    return cwnd > loss ? cwnd : loss;
}

SEC("struct_ops/awafs_dctcp_cong_avoid")
void BPF_PROG(awafs_dctcp_cong_avoid, struct sock *sk, __u32 ack,
              __u32 acked)
{
    tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops awafs_dctcp = {
    .init = (void *) awafs_dctcp_init,
    .in_ack_event = (void *) awafs_dctcp_in_ack_event,
    .cwnd_event = (void *) awafs_dctcp_cwnd_event,
    .ssthresh = (void *) awafs_dctcp_ssthresh,
    .cong_avoid = (void *) awafs_dctcp_cong_avoid,
    .undo_cwnd = (void *) awafs_dctcp_undo_cwnd,
    .set_state = (void *) awafs_dctcp_set_state,
    /* Any user and any network namespace may select it, as cubic. */
    .flags = TCP_CONG_NEEDS_ECN | TCP_CONG_NON_RESTRICTED,
    .name = "awafs_dctcp",
};

char LICENSE[] SEC("license") = "Dual BSD/GPL";
