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
 * and observation: the window before, alpha, and the new ssthresh.
 *
 * "awafs_mcp" is Karuna's MCP (seed 003, §4) on top of it: a message whose
 * socket mark has a deadline (Karuna's word: deadline in ms << 20 | size in
 * KB, as the host agent's attach --karuna copies it) takes just the rate that
 * finishes it by its deadline, so that flows without one keep the rest.  Its
 * window is DCTCP's (MCP's network term, from the fraction of ECN marks), but
 * never below what carries the source term for a round trip, and its pacing
 * rate is capped at the source term: the expected rate gamma = bytes left /
 * (time left - an RTT - an 8th of the deadline), plus 1/4, recomputed once
 * per window.  A message that falls behind asks for more as its deadline
 * nears, as eq. 10's source term grows.  (Eq. 11 as printed mixes a window
 * with a rate and packets; its technical report is not available here.)  A
 * message that can no longer make it -- its deadline passed, or, with a
 * capacity set (awafs-host dctcp register --mcp-capacity), gamma above it
 * (§4.2.3's Z > C) -- is terminated as a deadline flow: its mark loses the
 * deadline and keeps the size, so the switch schedules the rest as a flow
 * of known size, and the cap goes.  (A congestion control cannot abort the
 * application's response; giving up the deadline is what frees the
 * bandwidth.)  Messages without a deadline are plain DCTCP.  'mcp_stats'
 * counts them. */

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* From include/net/tcp.h (macros, not in vmlinux.h). */
#define TCP_ECN_DEMAND_CWR 4
#define TCP_CONG_NON_RESTRICTED 0x1
#define TCP_CONG_NEEDS_ECN 0x2
#define TCP_INFINITE_SSTHRESH 0x7fffffff

/* From include/uapi/asm-generic/socket.h. */
#define SOL_SOCKET 1
#define SO_MARK 36
#define SO_MAX_PACING_RATE 47

/* Karuna's word in a socket mark: deadline in ms << 20 | size in KB. */
#define KARUNA_DEADLINE_SHIFT 20
#define KARUNA_SIZE_MASK 0xfffff

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
    __u32 ssthresh_repairs; /* Sender: ssthresh found out of range ... */
    __u32 ssthresh_stored;  /* ... the last such value. */
};


struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct reduction);
} reductions SEC(".maps");

/* MCP's state: DCTCP's, then the message's. */
struct mcp {
    struct dctcp dctcp;
    __u64 start_us;         /* tcp_mstamp when the message started. */
    __u32 start_seq;        /* Its first sequence number. */
    __u32 size;             /* Bytes, from the mark (rounded up to KB). */
    __u32 deadline_us;      /* From its start; 0: no deadline. */
    __u32 mark;             /* The socket's mark when it started. */
    __u32 rate;             /* Pacing cap now, bytes/s; 0: none. */
    __u32 min_cwnd;         /* Segments that carry it for an RTT. */
};

struct mcp_stats {
    __u32 messages;         /* Messages with a deadline ... */
    __u32 rate_updates;     /* ... their caps set ... */
    __u32 terminated_late;  /* ... given up at the deadline ... */
    __u32 terminated_capacity;  /* ... or earlier, gamma above 'capacity'. */
    __u32 last_rate;        /* The last cap, bytes/s. */
    __u32 setsockopt_errors;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct mcp_stats);
} mcp_stats SEC(".maps");

/* The bottleneck's capacity in bits/s for early termination (0: unknown,
 * terminate only at the deadline); awafs-host dctcp register
 * --mcp-capacity sets it. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} mcp_capacity_bps SEC(".maps");

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

static void
dctcp_init(struct sock *sk)
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

/* The window after a reduction: cwnd (1 - alpha / 2), at least MIN_CWND. */
static __u32
cut(__u32 cwnd, __u32 alpha)
{
    __u32 ssthresh = cwnd - ((cwnd * alpha) >> 11);

    return ssthresh < MIN_CWND ? MIN_CWND : ssthresh;
}

/* The kernel keeps ssthresh at or below TCP_INFINITE_SSTHRESH.  On the
 * kernel this was measured on (6.18 in a VM, x86 with SRSO mitigations),
 * about one DCTCP test run in four saw it become 0x81104110 (the low half of
 * a return address in srso_alias_return_thunk) at a reduction for an ECN
 * echo.  dctcp_ssthresh() never returns more than the window, and bpf_stats
 * counts no recursion misses; where the value comes from is not known.  PRR
 * then scaled the window by it, to 2^31 segments, and the sender overflowed
 * the switch's buffer.  At the next ACK, put back what ssthresh returns for
 * the window before the reduction, and count it. */
static void
repair_ssthresh(struct sock *sk, struct dctcp *ca)
{
    struct tcp_sock *tp = tp_of(sk);
    __u32 prior = tp->prior_cwnd;
    struct reduction *r;

    if (tp->snd_ssthresh <= TCP_INFINITE_SSTHRESH) {
        return;
    }
    r = stats();
    if (r) {
        r->ssthresh_repairs++;
        r->ssthresh_stored = tp->snd_ssthresh;
    }
    tp->snd_ssthresh = cut(prior, ca->alpha);
    if (tp->snd_cwnd > prior) {
        tp->snd_cwnd = prior > MIN_CWND ? prior : MIN_CWND;
    }
}

/* Per ACK: at the end of a window of data, fold the fraction of segments
 * delivered with ECE into alpha; true at the end of a window. */
static bool
dctcp_in_ack_event(struct sock *sk, __u32 flags)
{
    struct tcp_sock *tp = tp_of(sk);
    struct dctcp *ca = ca_of(sk);
    struct reduction *r = stats();

    if (r) {
        r->acks++;
        r->ece_acks += !!(flags & CA_ACK_ECE);
    }
    repair_ssthresh(sk, ca);
    if ((__s32) (ca->window_end - tp->snd_nxt) > 0) {
        /* A window that ends beyond anything sent was set before the
         * connection had sequence numbers (init from the sockops
         * TCP_CONNECT_CB, ahead of tcp_connect_init(): snd_nxt 0), and
         * would not end for up to 2^31 bytes if the ISN is "before" 0:
         * alpha would stay at 1.  Start the first window now. */
        new_window(tp, ca);
        return false;
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
        return true;
    }
    return false;
}

static __u32
dctcp_ssthresh(struct sock *sk)
{
    struct tcp_sock *tp = tp_of(sk);
    struct dctcp *ca = ca_of(sk);
    __u32 cwnd = tp->snd_cwnd;
    __u32 ssthresh = cut(cwnd, ca->alpha);
    struct reduction *r = stats();

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

static void
dctcp_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
    struct dctcp *ca = ca_of(sk);

    if (ev == CA_EVENT_ECN_IS_CE) {
        ce_change(sk, ca, 1);
    } else if (ev == CA_EVENT_ECN_NO_CE) {
        ce_change(sk, ca, 0);
    }
}

static void
dctcp_set_state(struct sock *sk, __u8 new_state)
{
    struct dctcp *ca = ca_of(sk);

    /* A loss is not a mark: remember the window to undo to. */
    if (new_state == TCP_CA_Recovery && ca->ca_state != TCP_CA_Recovery) {
        ca->loss_cwnd = tp_of(sk)->snd_cwnd;
    }
    ca->ca_state = new_state;
}

static __u32
dctcp_undo_cwnd(struct sock *sk)
{
    __u32 cwnd = tp_of(sk)->snd_cwnd, loss = ca_of(sk)->loss_cwnd;

    return cwnd > loss ? cwnd : loss;
}

/* ---- awafs_dctcp ---- */

SEC("struct_ops/awafs_dctcp_init")
void BPF_PROG(awafs_dctcp_init, struct sock *sk)
{
    dctcp_init(sk);
}

SEC("struct_ops/awafs_dctcp_in_ack_event")
void BPF_PROG(awafs_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
    dctcp_in_ack_event(sk, flags);
}

SEC("struct_ops/awafs_dctcp_ssthresh")
__u32 BPF_PROG(awafs_dctcp_ssthresh, struct sock *sk)
{
    return dctcp_ssthresh(sk);
}

SEC("struct_ops/awafs_dctcp_cwnd_event")
void BPF_PROG(awafs_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
    dctcp_cwnd_event(sk, ev);
}

SEC("struct_ops/awafs_dctcp_set_state")
void BPF_PROG(awafs_dctcp_set_state, struct sock *sk, __u8 new_state)
{
    dctcp_set_state(sk, new_state);
}

SEC("struct_ops/awafs_dctcp_undo_cwnd")
__u32 BPF_PROG(awafs_dctcp_undo_cwnd, struct sock *sk)
{
    return dctcp_undo_cwnd(sk);
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

/* ---- awafs_mcp ---- */

/* A message aims to end this share of its whole deadline early. */
#define MCP_RESERVE_SHARE 8

static struct mcp *
mcp_of(struct sock *sk)
{
    return (void *) ((struct inet_connection_sock *) sk)->icsk_ca_priv;
}

static struct mcp_stats *
mcp_counters(void)
{
    __u32 key = 0;

    return bpf_map_lookup_elem(&mcp_stats, &key);
}

static void
mcp_setsockopt(struct sock *sk, int optname, int val)
{
    struct mcp_stats *st = mcp_counters();

    if (bpf_setsockopt(sk, SOL_SOCKET, optname, &val, sizeof val) && st) {
        st->setsockopt_errors++;
    }
}

/* Caps the pacing rate at 'rate' bytes/s (0: no cap). */
static void
mcp_pace(struct sock *sk, struct mcp *m, __u32 rate)
{
    if (rate != m->rate) {
        mcp_setsockopt(sk, SO_MAX_PACING_RATE, rate ? (int) rate : -1);
        m->rate = rate;
    }
}

/* The message has no deadline (any more): plain DCTCP. */
static void
mcp_end(struct sock *sk, struct mcp *m)
{
    m->deadline_us = 0;
    m->min_cwnd = 0;
    mcp_pace(sk, m, 0);
}

/* The message can no longer make its deadline: it goes on as a flow of
 * known size. */
static void
mcp_terminate(struct sock *sk, struct mcp *m, bool late)
{
    struct mcp_stats *st = mcp_counters();

    mcp_end(sk, m);
    mcp_setsockopt(sk, SO_MARK, sk->sk_mark & KARUNA_SIZE_MASK);
    if (st) {
        if (late) {
            st->terminated_late++;
        } else {
            st->terminated_capacity++;
        }
    }
}

/* Whether the message's bytes are all acknowledged: its size is rounded
 * up to KB, so it is done once less than a KB is left. */
static bool
mcp_done(struct tcp_sock *tp, const struct mcp *m)
{
    return tp->snd_una - m->start_seq + 1024 > m->size;
}

/* The source term: the rate that sends what is left by the deadline. */
static void
mcp_update(struct sock *sk, struct mcp *m)
{
    struct tcp_sock *tp = tp_of(sk);
    __u32 acked = tp->snd_una - m->start_seq;
    __u64 elapsed = tp->tcp_mstamp - m->start_us, rate, left, margin;
    __u64 *capacity;
    __u32 key = 0, srtt = tp->srtt_us >> 3, mss = tp->mss_cache, min_rtt;
    struct mcp_stats *st;

    if (!m->deadline_us) {
        return;
    }
    if (mcp_done(tp, m)) {
        mcp_end(sk, m);
        return;
    }
    if (elapsed >= m->deadline_us) {
        mcp_terminate(sk, m, true);
        return;
    }
    /* The last byte is acknowledged a round trip after it is sent, and the
     * message aims to end an 8th of its deadline early: a reserve for the
     * delays after its last update.  In the last two of those margins, it
     * spreads what is left over half the time left. */
    left = m->deadline_us - elapsed;
    margin = srtt + m->deadline_us / MCP_RESERVE_SHARE;
    left = left > 2 * margin ? left - margin : (left + 1) / 2;  /* Not 0. */
    rate = (__u64) (m->size - acked) * 1000000 / left;
    capacity = bpf_map_lookup_elem(&mcp_capacity_bps, &key);
    if (capacity && *capacity && rate * 8 > *capacity) {
        mcp_terminate(sk, m, false);
        return;
    }
    rate += rate >> 2;          /* Headroom for the senders' own delays. */
    rate = rate < 0x7fffffff ? rate : 0x7fffffff;
    mcp_pace(sk, m, rate ? rate : 1);
    /* The source term holds against the network term: the window never
     * drops below what carries the rate for a round trip of the empty
     * path, so marks caused by other queues (the port's ECN counts them
     * all) cannot make the message late; the cap keeps it from taking
     * more.  The smoothed RTT would count the queues too, and grow the
     * floor with them. */
    min_rtt = tp->rtt_min.s[0].v;
    min_rtt = min_rtt && min_rtt != ~0U ? min_rtt : srtt ? srtt : 1000;
    m->min_cwnd = rate * min_rtt / 1000000 / (mss ? mss : 1448) + 2;
    if (tp->snd_cwnd < m->min_cwnd) {
        tp->snd_cwnd = m->min_cwnd;
    }
    st = mcp_counters();
    if (st) {
        st->rate_updates++;
        st->last_rate = rate;
    }
}

SEC("struct_ops/awafs_mcp_init")
void BPF_PROG(awafs_mcp_init, struct sock *sk)
{
    struct mcp *m = mcp_of(sk);

    dctcp_init(sk);
    m->deadline_us = 0;
    m->rate = 0;
    m->min_cwnd = 0;
}

/* The rate once per window; a deadline that passed, at once. */
SEC("struct_ops/awafs_mcp_in_ack_event")
void BPF_PROG(awafs_mcp_in_ack_event, struct sock *sk, __u32 flags)
{
    struct mcp *m = mcp_of(sk);

    if (dctcp_in_ack_event(sk, flags)
        || (m->deadline_us
            && tp_of(sk)->tcp_mstamp - m->start_us >= m->deadline_us)) {
        mcp_update(sk, m);
    }
}

SEC("struct_ops/awafs_mcp_ssthresh")
__u32 BPF_PROG(awafs_mcp_ssthresh, struct sock *sk)
{
    __u32 ssthresh = dctcp_ssthresh(sk), floor = mcp_of(sk)->min_cwnd;

    return ssthresh > floor ? ssthresh : floor;
}

/* A message starts when data is sent with nothing in flight: a response on
 * a connection that was idle, after the application set its mark.  A
 * message paced below a segment a round trip empties the pipe between its
 * segments: until it is done or late, with the same mark, it goes on (else
 * each segment would start it again with its whole deadline, and it would
 * keep its first rate). */
SEC("struct_ops/awafs_mcp_cwnd_event")
void BPF_PROG(awafs_mcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
    struct tcp_sock *tp = tp_of(sk);
    struct mcp *m = mcp_of(sk);
    __u32 mark = sk->sk_mark;
    struct mcp_stats *st;

    if (ev != CA_EVENT_TX_START) {
        dctcp_cwnd_event(sk, ev);
        return;
    }
    if (!(mark >> KARUNA_DEADLINE_SHIFT)) {
        mcp_end(sk, m);
        return;
    }
    if (m->deadline_us && mark == m->mark && !mcp_done(tp, m)
        && tp->tcp_mstamp - m->start_us < m->deadline_us) {
        return;
    }
    m->deadline_us = (mark >> KARUNA_DEADLINE_SHIFT) * 1000;
    m->mark = mark;
    m->size = (mark & KARUNA_SIZE_MASK) * 1024;
    m->start_seq = tp->snd_una;
    m->start_us = tp->tcp_mstamp;
    st = mcp_counters();
    if (st) {
        st->messages++;
    }
    mcp_update(sk, m);
}

SEC("struct_ops/awafs_mcp_set_state")
void BPF_PROG(awafs_mcp_set_state, struct sock *sk, __u8 new_state)
{
    dctcp_set_state(sk, new_state);
}

SEC("struct_ops/awafs_mcp_undo_cwnd")
__u32 BPF_PROG(awafs_mcp_undo_cwnd, struct sock *sk)
{
    return dctcp_undo_cwnd(sk);
}

SEC("struct_ops/awafs_mcp_cong_avoid")
void BPF_PROG(awafs_mcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
    tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops awafs_mcp = {
    .init = (void *) awafs_mcp_init,
    .in_ack_event = (void *) awafs_mcp_in_ack_event,
    .cwnd_event = (void *) awafs_mcp_cwnd_event,
    .ssthresh = (void *) awafs_mcp_ssthresh,
    .cong_avoid = (void *) awafs_mcp_cong_avoid,
    .undo_cwnd = (void *) awafs_mcp_undo_cwnd,
    .set_state = (void *) awafs_mcp_set_state,
    .flags = TCP_CONG_NEEDS_ECN | TCP_CONG_NON_RESTRICTED,
    .name = "awafs_mcp",
};

char LICENSE[] SEC("license") = "Dual BSD/GPL";
