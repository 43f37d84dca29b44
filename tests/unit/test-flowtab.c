/* Unit tests: the switch-side flow table (trust=switch, trust=verify). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"
#include "awafs-private.h"

#define IDLE 500
#define QUIET 1000000           /* AWAFS_FLOWTAB_QUIET_US */
#define FIN 0x01
#define RST 0x04
#define ACK 0x10
#define PSH_ACK 0x18
#define AWAFS_FLOWTAB_TEST_N 8     /* A probe window: 8 slots. */

/* Two queues, split at 'thr.thr[0]' bytes (tests may move it). */
static struct awafs_thresholds thr = {
    .n_queues = 2,
    .thr = { 1000000, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
             UINT64_MAX, UINT64_MAX },
};

static struct awafs_flow_key
key(uint16_t sport)
{
    struct awafs_flow_key k = { .ip_version = 4, .sport = sport,
                                .dport = 5001 };

    memcpy(k.src, "\x0a\x00\x00\x01", 4);
    memcpy(k.dst, "\x0a\x00\x00\x02", 4);
    return k;
}

/* A segment of flow 'sport' from 10.0.0.'src' that acknowledges 'ack'
 * and reports nothing. */
static struct awafs_flow_result
seg_src_ack(struct awafs_flowtab *t, uint8_t src, uint16_t sport,
            uint32_t seq, uint32_t len, uint8_t flags, uint32_t ack,
            int64_t now)
{
    struct awafs_flow_key k = key(sport);
    struct awafs_hdr h = { .seq = seq, .ack = ack, .payload_len = len,
                           .tcp_flags = flags };
    struct awafs_flow_result r;

    k.src[3] = src;
    awafs_flowtab_update(t, &k, &h, false, now, IDLE, &thr, &r);
    return r;
}

/* A segment from 10.0.0.1 that acknowledges 'ack' and reports nothing. */
static struct awafs_flow_result
seg_ack(struct awafs_flowtab *t, uint16_t sport, uint32_t seq, uint32_t len,
        uint8_t flags, uint32_t ack, int64_t now)
{
    return seg_src_ack(t, 1, sport, seq, len, flags, ack, now);
}

static struct awafs_flow_result
seg(struct awafs_flowtab *t, uint16_t sport, uint32_t seq, uint32_t len,
    uint8_t flags, int64_t now)
{
    return seg_ack(t, sport, seq, len, flags, 0, now);
}

/* awafs_flowtab_sweep() of 64 entries at 'now'. */
static size_t
sweep(struct awafs_flowtab *t, int64_t now, uint64_t *sizes)
{
    return awafs_flowtab_sweep(t, 64, now, IDLE, sizes, NULL, NULL);
}

/* The SYN of a connection whose data starts at 'seq'. */
static void
syn(struct awafs_flowtab *t, uint16_t sport, uint32_t seq, int64_t now)
{
    seg(t, sport, seq - 1, 0, 0x02, now);
}

static void
test_counts_by_sequence(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_result r;

    (void) state;
    assert_int_equal(seg(t, 1, 1000, 1000, PSH_ACK, 0).bytes_sent, 0);
    assert_int_equal(seg(t, 1, 2000, 1000, PSH_ACK, 10).bytes_sent, 1000);
    /* A retransmission does not count twice. */
    assert_int_equal(seg(t, 1, 1000, 1000, PSH_ACK, 20).bytes_sent, 0);
    assert_int_equal(seg(t, 1, 3000, 1000, PSH_ACK, 30).bytes_sent, 2000);
    /* Sequence numbers wrap. */
    assert_int_equal(seg(t, 2, 0xfffffc00, 1024, 0, 0).bytes_sent, 0);
    r = seg(t, 2, 0, 1000, 0, 1);
    assert_int_equal(r.bytes_sent, 1024);
    assert_int_equal(r.n_completed, 0);
    awafs_flowtab_destroy(t);
}

/* A message longer than 2^31 and 2^32 bytes (sequence numbers wrap): its
 * count keeps growing -- it must not fall back to 0, which would promote a
 * bulk flow to the top queue every 2 GB -- and it completes with its size. */
static void
test_messages_beyond_two_gigabytes(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    const uint64_t total = 5ull * 1000 * 1000 * 1000;
    const uint32_t len = 62500;
    struct awafs_flow_result r;
    uint64_t sent = 0;
    uint32_t seq = 12345;

    (void) state;
    seg(t, 1, seq - 1, 0, 0x02, 0);
    while (sent < total) {
        r = seg(t, 1, seq, len, ACK, 1);
        if (r.bytes_sent != sent) {
            fail_msg("segment at offset %llu counted as %llu",
                     (unsigned long long) sent,
                     (unsigned long long) r.bytes_sent);
        }
        seq += len;
        sent += len;
    }
    /* A retransmission from 3 GB back is behind the window: not new. */
    r = seg(t, 1, seq - len, len, ACK, 2);
    assert_true(r.bytes_sent == total - len);
    r = seg(t, 1, seq, 0, FIN, 3);
    assert_int_equal(r.n_completed, 1);
    assert_true(r.completed[0] == total);
    awafs_flowtab_destroy(t);
}

static void
test_fin_and_rst_end_the_message(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;

    (void) state;
    /* A whole connection: the SYN's sequence number is not data. */
    seg(t, 1, 999, 0, 0x02, 0);
    seg(t, 1, 1000, 1000, 0, 1);
    r = seg(t, 1, 2000, 500, FIN, 10);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 1500);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.flows, 0);
    /* Data retransmitted after the FIN starts nothing, even when idle. */
    r = seg(t, 1, 1000, 1000, 0, 20);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 0);
    {
        uint64_t sizes[64];

        assert_int_equal(sweep(t, 10 * IDLE, sizes), 0);
    }
    /* A new connection on the same 5-tuple counts again. */
    seg(t, 1, 5000, 0, 0x02, 10 * IDLE);
    r = seg(t, 1, 5001, 100, FIN, 10 * IDLE + 1);
    assert_int_equal(r.completed[0], 100);
    /* RST; a FIN with no data ends nothing. */
    syn(t, 2, 0, 0);
    seg(t, 2, 0, 700, 0, 0);
    r = seg(t, 2, 700, 0, RST, 10);
    assert_int_equal(r.completed[0], 700);
    r = seg(t, 3, 0, 0, FIN, 10);
    assert_int_equal(r.n_completed, 0);
    awafs_flowtab_destroy(t);
}

static void
test_idle_gap_ends_the_previous_message(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_result r;
    uint8_t srcs[64][16];
    uint64_t sizes[64];

    (void) state;
    syn(t, 1, 0, 0);
    seg(t, 1, 0, 1000, ACK, 0);
    seg(t, 1, 1000, 600, PSH_ACK, 100);     /* The end of a write. */
    /* Exactly 'idle' later is not yet a gap. */
    r = seg(t, 1, 1600, 400, PSH_ACK, 100 + IDLE);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 1600);
    r = seg(t, 1, 2000, 400, PSH_ACK, 100 + 2 * IDLE + 1);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 2000);
    assert_int_equal(r.bytes_sent, 0);

    /* With no next segment, the sweep finds it once the flow has been
     * quiet for longer than a retransmission timeout. */
    assert_int_equal(sweep(t, 100 + 3 * IDLE + 2, sizes), 0);
    assert_int_equal(awafs_flowtab_sweep(t, 64, 100 + 2 * IDLE + 2 + QUIET,
                                         IDLE, sizes, NULL, srcs), 1);
    assert_int_equal(sizes[0], 400);
    /* With its sender, for the window's weights. */
    assert_memory_equal(srcs[0], key(1).src, sizeof srcs[0]);
    /* Once. */
    assert_int_equal(sweep(t, 9 * QUIET, sizes), 0);
    awafs_flowtab_destroy(t);
}

static void
test_pauses_inside_a_write_do_not_split(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_result r;
    uint64_t sizes[64];

    (void) state;
    /* A sender waiting for ACKs in the middle of a write, after a segment
     * without PSH or with the PSH Linux sets inside long writes on a
     * full-sized segment: however long the pause. */
    syn(t, 1, 0, 0);
    seg(t, 1, 0, 1000, ACK, 0);
    assert_int_equal(sweep(t, 10 * QUIET, sizes), 0);
    r = seg(t, 1, 1000, 1000, PSH_ACK, 10 * QUIET);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 1000);
    assert_int_equal(sweep(t, 20 * QUIET, sizes), 0);
    r = seg(t, 1, 2000, 500, PSH_ACK, 20 * QUIET);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 2000);
    assert_int_equal(sweep(t, 21 * QUIET + 1, sizes), 1);
    assert_int_equal(sizes[0], 2500);

    /* The SYN's MSS tells a short first segment from a full one. */
    {
        struct awafs_flow_key k = key(2);
        struct awafs_hdr h = { .seq = 99, .tcp_flags = 0x02, .mss = 1460 };

        awafs_flowtab_update(t, &k, &h, false, 0, IDLE, &thr, &r);
    }
    seg(t, 2, 100, 1000, PSH_ACK, 1);
    r = seg(t, 2, 1100, 1000, PSH_ACK, 2 + IDLE);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 1000);
    awafs_flowtab_destroy(t);
}

static void
test_retransmission_after_a_timeout_continues(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_result r;

    (void) state;
    seg(t, 1, 0, 1000, ACK, 0);
    seg(t, 1, 1000, 1000, PSH_ACK, 1);
    /* 200 ms later (an RTO), the lost segment again, then new data. */
    r = seg(t, 1, 1000, 1000, PSH_ACK, 200000);
    assert_int_equal(r.n_completed, 0);
    r = seg(t, 1, 2000, 1000, PSH_ACK, 200100);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 2000);
    awafs_flowtab_destroy(t);
}

static void
test_turnaround_ends_the_message(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_result r;

    (void) state;
    /* A response written as a header, then a body, acknowledging request 1
     * (ACK 100); the client's window updates move nothing. */
    syn(t, 1, 0, 0);
    seg_ack(t, 1, 0, 200, PSH_ACK, 100, 0);
    seg_ack(t, 1, 200, 1000, ACK, 100, 1);
    r = seg_ack(t, 1, 1200, 800, PSH_ACK, 100, 2);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 1200);
    /* Request 2 arrives: the server's pure ACK of it ends response 1... */
    r = seg_ack(t, 1, 2000, 0, ACK, 150, 3);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 2000);
    /* ... and response 2 starts at 0, once. */
    r = seg_ack(t, 1, 2000, 300, PSH_ACK, 150, 4);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 0);
    /* Request 3, answered at once: the response's first segment ends
     * response 2 and starts response 3. */
    r = seg_ack(t, 1, 2300, 100, PSH_ACK, 170, 5);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 300);
    assert_int_equal(r.bytes_sent, 0);
    awafs_flowtab_destroy(t);
}

static struct awafs_flow_result
seg_report(struct awafs_flowtab *t, const struct awafs_hdr *h, int64_t now)
{
    struct awafs_flow_key k = key(1);
    struct awafs_flow_result r;

    awafs_flowtab_update(t, &k, h, true, now, IDLE, &thr, &r);
    return r;
}

static void
test_host_completion_must_agree(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_hdr h = { .payload_len = 1000, .tcp_flags = PSH_ACK };
    struct awafs_flow_result r;

    (void) state;
    syn(t, 1, 0, 0);
    seg_report(t, &h, 0);
    /* A liar claiming a 10-byte flow does not reset the count. */
    h.seq = 1000;
    h.completed = true;
    h.flow_size = 10;
    r = seg_report(t, &h, 1);
    assert_int_equal(r.n_completed, 0);
    h.seq = 2000;
    h.completed = false;
    assert_int_equal(seg_report(t, &h, 2).bytes_sent, 2000);
    /* An honest completion does, and the next message starts at 0; not on
     * a GSO copy without PSH. */
    h.seq = 3000;
    h.completed = true;
    h.flow_size = 4000;
    h.tcp_flags = ACK;
    assert_int_equal(seg_report(t, &h, 3).n_completed, 0);
    h.tcp_flags = PSH_ACK;
    r = seg_report(t, &h, 3);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 4000);
    h.seq = 4000;
    h.completed = false;
    assert_int_equal(seg_report(t, &h, 4).bytes_sent, 0);

    /* The "previous message" form: counted on the segment that starts at
     * the reported end, if the size agrees. */
    h.seq = 5000;
    h.has_prev = true;
    h.prev_end = 5000;
    h.prev_size = 999;
    assert_int_equal(seg_report(t, &h, 5).n_completed, 0);
    assert_int_equal(seg_report(t, &h, 5).bytes_sent, 1000);
    h.seq = 6000;
    h.prev_end = 6000;
    h.prev_size = 2000;
    r = seg_report(t, &h, 6);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 2000);
    assert_int_equal(r.bytes_sent, 0);
    awafs_flowtab_destroy(t);
}

/* A message whose first byte the switch did not see has an unknown size:
 * it ends, and its successor is counted from 0, but it is not reported.
 * So spoofed one-byte FINs from fresh 5-tuples -- no handshake -- cannot
 * fill the window with completions of size 1. */
static void
test_messages_not_seen_from_their_start(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(1024, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;

    (void) state;
    for (uint16_t i = 0; i < 500; i++) {
        r = seg(t, 2000 + i, 7777, 1, FIN, i);
        assert_int_equal(r.n_completed, 0);
    }
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.completions, 0);
    assert_int_equal(st.partial, 500);

    /* A connection adopted mid-stream (the switch restarted, or the entry
     * was evicted): its first message is partial, the next one whole. */
    seg_ack(t, 1, 50000, 1000, PSH_ACK, 100, 0);
    r = seg_ack(t, 1, 51000, 0, ACK, 150, 1);       /* Turnaround. */
    assert_int_equal(r.n_completed, 0);
    seg_ack(t, 1, 51000, 700, PSH_ACK, 150, 2);
    r = seg_ack(t, 1, 51700, 0, ACK, 200, 3);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 700);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.completions, 1);
    assert_int_equal(st.partial, 501);
    awafs_flowtab_destroy(t);
}

static void
test_bounded_with_eviction(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(8, 1);
    struct awafs_flowtab_stats st;

    (void) state;
    assert_null(awafs_flowtab_create(4, 1));
    for (uint16_t i = 0; i < 100; i++) {
        seg(t, 1000 + i, 0, 100, 0, i);
    }
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.flows, 8);
    assert_int_equal(st.evictions, 92);
    /* The most recent flows are still there. */
    assert_int_equal(seg(t, 1099, 100, 100, 0, 200).bytes_sent, 100);
    assert_true(awafs_flowtab_memsize(4096) < 4096 * 72);
    awafs_flowtab_destroy(t);
}

static void
test_key_from_frames(void **state)
{
    uint8_t frame[1600];
    struct frame_spec s = { .payload_len = 123 };
    struct awafs_flow_key k4, k6;
    struct awafs_hdr h;
    size_t l4, len;

    (void) state;
    len = build_frame(frame, &s, NULL, &l4);
    frame[l4 + 4] = 0x12;
    frame[l4 + 7] = 0x34;
    frame[l4 + 8] = 0x56;
    frame[l4 + 11] = 0x78;
    assert_int_equal(awafs_parse(frame, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.payload_len, 123);
    assert_int_equal(h.seq, 0x12000034);
    assert_int_equal(h.ack, 0x56000078);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k4));
    assert_int_equal(k4.sport, 40000);
    assert_int_equal(k4.dport, 5001);
    assert_int_equal(k4.ip_version, 4);

    s.ipv6 = true;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k6));
    assert_int_equal(k6.ip_version, 6);
    assert_int_equal(h.payload_len, 123);

    s.ip_proto = 17;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, NULL);
    assert_false(awafs_flow_key_from_frame(frame, len, &h, &k6));

    /* A SYN's MSS option. */
    s = (struct frame_spec) {
        .tcp_opts = (const uint8_t *) "\x02\x04\x05\xb4",
        .tcp_opts_len = 4,
    };
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(awafs_parse(frame, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.mss, 1460);
}

/* A message's segments never move to a higher queue, even when the
 * thresholds rise under it or a segment is sent again; the next message
 * starts at the top. */
static void
test_queue_never_rises_within_a_message(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;

    (void) state;
    thr.thr[0] = 1000;
    syn(t, 1, 1, 0);
    assert_int_equal(seg(t, 1, 1, 1000, ACK, 1).queue, 0);
    assert_int_equal(seg(t, 1, 1001, 1000, ACK, 2).queue, 1);
    thr.thr[0] = 100000;                    /* The thresholds rise. */
    assert_int_equal(seg(t, 1, 2001, 1000, ACK, 3).queue, 1);
    assert_int_equal(seg(t, 1, 1, 1000, ACK, 4).queue, 1);   /* Resent. */
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.held_down, 2);
    /* The peer's data moves the ACK: a new message, from queue 0. */
    r = seg_ack(t, 1, 3001, 100, PSH_ACK, 500, 5);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.queue, 0);
    thr.thr[0] = 50;
    assert_int_equal(seg_ack(t, 1, 3101, 100, PSH_ACK, 500, 6).queue, 1);
    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* An attacker who knew the hash could pick 5-tuples that share a victim's
 * probe window and evict it; with another (secret) key the same 5-tuples
 * scatter and the victim keeps its count. */
static void
test_hash_is_keyed(void **state)
{
    struct awafs_flowtab *known = awafs_flowtab_create(1024, 1);
    struct awafs_flow_key victim = key(1), chosen[AWAFS_FLOWTAB_TEST_N];
    uint32_t slot = awafs_flowtab_slot(known, &victim);
    int n = 0;

    (void) state;
    for (uint32_t port = 2; n < AWAFS_FLOWTAB_TEST_N; port++) {
        struct awafs_flow_key k = key(port);

        k.dport = port >> 16;
        if (awafs_flowtab_slot(known, &k) == slot) {
            chosen[n++] = k;
        }
    }
    for (uint64_t seed = 1; seed <= 2; seed++) {
        struct awafs_flowtab *t = awafs_flowtab_create(1024, seed);
        struct awafs_flowtab_stats st;
        struct awafs_hdr h = { .seq = 0, .payload_len = 1000,
                               .tcp_flags = ACK };
        struct awafs_flow_result r;

        awafs_flowtab_update(t, &victim, &h, false, 0, IDLE, &thr, &r);
        for (int i = 0; i < n; i++) {
            awafs_flowtab_update(t, &chosen[i], &h, false, 1 + i, IDLE,
                                 &thr, &r);
        }
        h.seq = 1000;
        awafs_flowtab_update(t, &victim, &h, false, 100, IDLE, &thr, &r);
        awafs_flowtab_get_stats(t, &st);
        if (seed == 1) {
            assert_true(st.evictions > 0);
            assert_int_equal(r.bytes_sent, 0);      /* Counted again. */
        } else {
            assert_int_equal(st.evictions, 0);
            assert_int_equal(r.bytes_sent, 1000);
        }
        awafs_flowtab_destroy(t);
    }
    awafs_flowtab_destroy(known);
}

/* Tardy flows (TFS/TFS+): a retransmitted segment makes its flow tardy
 * until its message ends; only with a limit set do its segments
 * go to queue 0, and with TFS+ only below the limit. */
static void
test_tardy_flows(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;

    (void) state;
    thr.thr[0] = 1500;
    syn(t, 1, 1000, 0);
    for (uint32_t i = 0; i < 3; i++) {
        seg(t, 1, 1000 + 1000 * i, 1000, ACK, 1 + i);
    }
    /* Tardy, but no limit set: classified as usual (held in queue 1). */
    assert_int_equal(seg(t, 1, 2000, 1000, ACK, 10).queue, 1);
    assert_int_equal(seg(t, 1, 4000, 1000, ACK, 11).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.tardy_flows, 1);
    assert_int_equal(st.tardy_packets, 0);

    /* TFS: every later segment goes to queue 0. */
    awafs_flowtab_set_tardy(t, UINT64_MAX);
    assert_int_equal(seg(t, 1, 5000, 1000, ACK, 12).queue, 0);
    /* Another flow, never retransmitted, is classified as usual. */
    syn(t, 2, 1000, 13);
    seg(t, 2, 1000, 1000, ACK, 14);
    seg(t, 2, 2000, 1000, ACK, 15);
    assert_int_equal(seg(t, 2, 3000, 1000, ACK, 16).queue, 1);

    /* TFS+: below the limit only.  A new connection is not tardy. */
    awafs_flowtab_set_tardy(t, 2500);
    assert_int_equal(seg(t, 1, 6000, 1000, ACK, 17).queue, 1);
    seg(t, 1, 7000, 0, FIN | ACK, 18);
    syn(t, 1, 100000, 18);
    assert_int_equal(seg(t, 1, 100000, 1000, ACK, 19).queue, 0);
    assert_int_equal(seg(t, 1, 101000, 1000, ACK, 20).queue, 0);
    seg(t, 1, 102000, 1000, ACK, 21);
    assert_int_equal(seg(t, 1, 101000, 1000, ACK, 22).queue, 0); /* Lost. */
    assert_int_equal(seg(t, 1, 103000, 1000, ACK, 23).queue, 1); /* 3000 */
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.tardy_flows, 2);
    assert_int_equal(st.tardy_packets, 2);

    /* The next message on the connection (the peer's request acknowledged)
     * starts untardy, and a retransmission makes it tardy again. */
    awafs_flowtab_set_tardy(t, UINT64_MAX);
    assert_int_equal(seg_ack(t, 1, 104000, 1000, ACK, 5, 24).queue, 0);
    assert_int_equal(seg_ack(t, 1, 105000, 1000, ACK, 5, 25).queue, 0);
    assert_int_equal(seg_ack(t, 1, 106000, 1000, ACK, 5, 26).queue, 1);
    assert_int_equal(seg_ack(t, 1, 105000, 1000, ACK, 5, 27).queue, 0);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.tardy_flows, 3);

    /* A late retransmission of the previous message's data, once the next
     * message has started, does not make the new message tardy. */
    assert_int_equal(seg_ack(t, 1, 107000, 1000, ACK, 9, 28).queue, 0);
    assert_int_equal(seg_ack(t, 1, 106000, 1000, ACK, 9, 29).queue, 0);
    assert_int_equal(seg_ack(t, 1, 108000, 1000, ACK, 9, 30).queue, 0);
    assert_int_equal(seg_ack(t, 1, 109000, 1000, ACK, 9, 31).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.tardy_flows, 3);

    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* A data segment whose header carries the Karuna word 'word'. */
static struct awafs_flow_result
seg_karuna(struct awafs_flowtab *t, uint16_t sport, uint32_t seq,
           uint32_t len, uint8_t flags, uint32_t word, int64_t now)
{
    struct awafs_flow_key k = key(sport);
    struct awafs_hdr h = { .seq = seq, .payload_len = len,
                           .tcp_flags = flags, .has_karuna = true,
                           .karuna = word };
    struct awafs_flow_result r;

    awafs_flowtab_update(t, &k, &h, false, now, IDLE, &thr, &r);
    return r;
}

#define RTO 200000              /* AWAFS_FLOWTAB_RTO_MIN_US */

/* A retransmission after a silence of at least the minimum RTO is a
 * timeout; one that follows the flow's last segment sooner (a fast
 * retransmit, a tail loss probe) is not. */
static void
test_timeouts_not_fast_retransmits(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;

    (void) state;
    syn(t, 1, 1000, 0);
    for (int i = 0; i < 4; i++) {
        seg(t, 1, 1000 + 1000 * i, 1000, ACK, 1 + i);
    }
    seg(t, 1, 2000, 1000, ACK, 100);                    /* Fast. */
    seg(t, 1, 3000, 1000, ACK, 100 + RTO - 1);          /* Just too soon. */
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.timeouts, 0);
    seg(t, 1, 3000, 1000, ACK, 100 + 2 * RTO);          /* Timeout. */
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.timeouts, 1);
    assert_int_equal(st.aged_flows, 0);                 /* Aging is off. */

    /* New data after a silence is no retransmission. */
    seg(t, 1, 5000, 1000, ACK, 100 + 4 * RTO);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.timeouts, 1);

    assert_false(awafs_flowtab_set_aging(t, 0, 2, 10));
    assert_false(awafs_flowtab_set_aging(t, RTO, 3, 2));
    assert_false(awafs_flowtab_set_aging(t, RTO, 2, 16));
    assert_false(awafs_flowtab_set_aging(t, RTO, 0, 2));
    assert_true(awafs_flowtab_set_aging(t, RTO, 0, 0));
    assert_true(awafs_flowtab_set_aging(t, RTO, 2, 10));
    awafs_flowtab_destroy(t);
}

/* A message of unknown size that suffers kappa timeouts restarts at the
 * top queue, its count from zero; its end is then not reported. */
static void
test_aging_restarts_unknown_size(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;
    int64_t now = 10;

    (void) state;
    thr.thr[0] = 3000;
    assert_true(awafs_flowtab_set_aging(t, RTO, 2, 2));
    syn(t, 1, 1000, 0);
    for (int i = 0; i < 5; i++) {
        r = seg(t, 1, 1000 + 1000 * i, 1000, ACK, now++);
    }
    assert_int_equal(r.queue, 1);
    now += RTO;
    r = seg(t, 1, 4000, 1000, ACK, now);               /* Timeout 1. */
    assert_false(r.aged);
    assert_int_equal(r.queue, 1);
    now += 2 * RTO;
    r = seg(t, 1, 4000, 1000, ACK, now);               /* Timeout 2. */
    assert_true(r.aged);
    assert_int_equal(r.bytes_sent, 0);
    assert_int_equal(r.queue, 0);
    /* New data counts from the restart: 2 kB later still queue 0. */
    r = seg(t, 1, 6000, 1000, ACK, ++now);
    assert_int_equal(r.bytes_sent, 0);
    r = seg(t, 1, 7000, 1000, ACK, ++now);
    assert_int_equal(r.bytes_sent, 1000);
    assert_int_equal(r.queue, 0);
    r = seg(t, 1, 9000, 1000, ACK, ++now);
    assert_int_equal(r.queue, 1);
    /* Starved again: two more timeouts restart it again. */
    now += RTO;
    r = seg(t, 1, 9000, 1000, ACK, now);
    assert_false(r.bytes_sent == 0);
    now += 2 * RTO;
    r = seg(t, 1, 9000, 1000, ACK, now);
    assert_int_equal(r.bytes_sent, 0);
    assert_int_equal(r.queue, 0);
    /* Its end is partial: the size the switch saw is not the message's. */
    seg(t, 1, 10000, 1000, ACK, ++now);
    r = seg(t, 1, 11000, 0, FIN | ACK, ++now);
    assert_int_equal(r.n_completed, 0);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.timeouts, 4);
    assert_int_equal(st.aged_flows, 2);
    assert_int_equal(st.partial, 1);
    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* A message of known size keeps its count when it ages (the caller splits
 * it again by what it has left); a deadline message never ages; the
 * message's type goes with its completion. */
/* A message of known size ages (split again by what it has left) without
 * restarting; a Karuna deadline is the sender's claim, which the switch
 * does not take: such a message is typed by the size it declares (so it
 * ages as one of known size), or as unknown without one. */
static void
test_aging_sized_and_deadline(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    uint32_t sized = awafs_karuna_word(0, 10);
    uint32_t deadline = awafs_karuna_word(20, 10);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;
    int64_t now = 10;

    (void) state;
    assert_true(awafs_flowtab_set_aging(t, RTO, 1, 1));
    syn(t, 1, 1000, 0);
    syn(t, 2, 1000, 0);
    for (int i = 0; i < 4; i++) {
        r = seg_karuna(t, 1, 1000 + 1000 * i, 1000, ACK, sized, now);
        assert_int_equal(r.type, AWAFS_FLOW_SIZED);
        r = seg_karuna(t, 2, 1000 + 1000 * i, 1000, ACK, deadline, now++);
        assert_int_equal(r.type, AWAFS_FLOW_SIZED);
    }
    now += RTO;
    r = seg_karuna(t, 1, 3000, 1000, ACK, sized, now);
    assert_true(r.aged);
    assert_int_equal(r.bytes_sent, 2000);
    r = seg_karuna(t, 2, 3000, 1000, ACK, deadline, now);
    assert_true(r.aged);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.timeouts, 2);
    assert_int_equal(st.aged_flows, 2);
    assert_int_equal(st.deadlines_refused, 5);

    r = seg_karuna(t, 1, 5000, 0, FIN | ACK, sized, ++now);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 4000);
    assert_int_equal(r.completed_type[0], AWAFS_FLOW_SIZED);
    r = seg_karuna(t, 2, 5000, 0, FIN | ACK, deadline, now);
    assert_int_equal(r.completed_type[0], AWAFS_FLOW_SIZED);

    /* Without the word, a message is of unknown size; a deadline without
     * a size too. */
    syn(t, 3, 1000, now);
    r = seg(t, 3, 1000, 1000, ACK, ++now);
    assert_int_equal(r.type, AWAFS_FLOW_UNKNOWN);
    r = seg_karuna(t, 3, 2000, 1000, ACK, awafs_karuna_word(20, 0), ++now);
    assert_int_equal(r.type, AWAFS_FLOW_UNKNOWN);
    awafs_flowtab_destroy(t);
}

/* kappa is uniform in [kappa_min, kappa_max] over flows. */
static void
test_kappa_per_flow(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(1024, 7);
    unsigned int seen[16] = { 0 };

    (void) state;
    assert_true(awafs_flowtab_set_aging(t, RTO, 2, 10));
    for (uint16_t f = 1; f <= 450; f++) {
        int64_t now = 0;
        unsigned int n;

        syn(t, f, 1000, now);
        seg(t, f, 1000, 1000, ACK, ++now);
        for (n = 1; n <= 15; n++) {
            now += RTO;
            if (seg(t, f, 1000, 1000, ACK, now).aged) {
                break;
            }
        }
        assert_in_range(n, 2, 10);
        seen[n]++;
    }
    for (unsigned int n = 2; n <= 10; n++) {
        /* 50 expected each. */
        assert_in_range(seen[n], 25, 75);
    }
    awafs_flowtab_destroy(t);
}

/* ---- Trust that holds (issue 28): what the receiver would not take ---- */

/* SipHash-2-4's reference outputs (the paper's appendix and its test
 * vectors: key 00 01 .. 0f), so the flow key's hash is SipHash, not
 * something like it; and SipHash-1-3, which the table uses, differs. */
static void
test_siphash_reference_vectors(void **state)
{
    uint64_t k[2] = { UINT64_C(0x0706050403020100),
                      UINT64_C(0x0f0e0d0c0b0a0908) };
    uint8_t msg[15];

    (void) state;
    for (int i = 0; i < 15; i++) {
        msg[i] = i;
    }
    assert_true(awafs_siphash(k, msg, 0, 2, 4)
                == UINT64_C(0x726fdb47dd0e0e31));
    assert_true(awafs_siphash(k, msg, 15, 2, 4)
                == UINT64_C(0xa129ca6149be45e5));
    assert_true(awafs_siphash(k, msg, 15, 1, 3)
                != awafs_siphash(k, msg, 15, 2, 4));
}

/* Attack 1: a bulk flow demoted past 3000 bytes, then a FIN or a RST at
 * seq + 2^30, which its receiver drops: ignored, and the next segments stay
 * in queue 1.  Nearer, a FIN after a gap and a RST in the window but not at
 * its end are ignored too (counted); a RST exactly at the end and a FIN in
 * sequence close the connection. */
static void
test_forged_fin_and_rst_are_ignored(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;
    uint32_t seq = 1000;

    (void) state;
    thr.thr[0] = 3000;
    syn(t, 1, seq, 0);
    for (int i = 0; i < 5; i++, seq += 1000) {
        seg(t, 1, seq, 1000, ACK, 1 + i);
    }
    r = seg(t, 1, seq + (1u << 30), 0, FIN | ACK, 10);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.queue, 1);
    r = seg(t, 1, seq + (1u << 30), 0, RST, 11);
    assert_int_equal(r.queue, 1);
    r = seg(t, 1, seq + 10, 0, FIN | ACK, 12);      /* After a gap. */
    assert_int_equal(r.n_completed, 0);
    r = seg(t, 1, seq + 500, 0, RST | ACK, 13);     /* In the window. */
    assert_int_equal(r.n_completed, 0);
    r = seg(t, 1, seq - 1000, 0, RST | ACK, 13);    /* Behind its end. */
    assert_int_equal(r.n_completed, 0);
    for (int i = 0; i < 10; i++, seq += 1000) {
        assert_int_equal(seg(t, 1, seq, 1000, ACK, 20 + i).queue, 1);
    }
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.out_of_window, 2);
    assert_int_equal(st.fin_ignored, 1);
    assert_int_equal(st.rst_ignored, 2);
    assert_int_equal(st.flows, 1);

    /* A RST exactly at the end is taken: the message ends (15 kB). */
    r = seg(t, 1, seq, 0, RST | ACK, 40);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 15000);
    /* A retransmission of its tail keeps its queue; data beyond the
     * reset, which the receiver would not take, the lowest. */
    assert_int_equal(seg(t, 1, seq - 1000, 1000, ACK, 41).queue, 1);
    thr.thr[0] = 1000000;
    assert_int_equal(seg(t, 1, seq, 1000, ACK, 42).queue, 1);
    assert_int_equal(seg(t, 1, seq - 100000, 1000, ACK, 43).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.late_refused, 2);

    /* A FIN in sequence, with its last data, closes the connection. */
    syn(t, 2, 1000, 50);
    seg(t, 2, 1000, 1000, ACK, 51);
    r = seg(t, 2, 2000, 500, FIN | ACK, 52);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 1500);
    /* A lone RST from a fresh 5-tuple, then data: nothing gained. */
    seg(t, 3, 7000, 0, RST, 60);
    assert_int_equal(seg(t, 3, 7000, 1000, ACK, 61).queue, 1);
    awafs_flowtab_destroy(t);
}

/* RFC 5961 4: a SYN on a connection that sent data does not restart its
 * count; after more than a quiet period it opens a new connection. */
static void
test_syn_on_an_open_connection_is_ignored(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;

    (void) state;
    thr.thr[0] = 3000;
    syn(t, 1, 1000, 0);
    for (int i = 0; i < 5; i++) {
        seg(t, 1, 1000 + 1000 * i, 1000, ACK, 1 + i);
    }
    syn(t, 1, 50000, 10);
    assert_int_equal(seg(t, 1, 6000, 1000, ACK, 11).bytes_sent, 5000);
    assert_int_equal(seg(t, 1, 7000, 1000, ACK, 12).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.syn_ignored, 1);
    syn(t, 1, 90000, 12 + QUIET + 1);
    assert_int_equal(seg(t, 1, 90000, 1000, ACK, 14 + QUIET).queue, 0);
    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* Attack 2: a gap in the sequence numbers (the SYN, then 100 bytes and a
 * FIN 2^30 further) records no gigabyte: beyond the window it is not
 * counted at all; within it, the completion is the 100 bytes forwarded. */
static void
test_completion_bounded_by_bytes_forwarded(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;

    (void) state;
    syn(t, 1, 1001, 0);
    r = seg(t, 1, 1001 + (1u << 30), 100, FIN | PSH_ACK, 1);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.queue, 1);

    syn(t, 2, 1001, 2);
    r = seg(t, 2, 1001 + 1000000, 100, PSH_ACK, 3);
    assert_int_equal(r.bytes_sent, 1000000);    /* Demotes itself only. */
    r = seg(t, 2, 1001 + 1000100, 0, FIN | ACK, 4);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 100);
    /* Filling the gap for real makes the whole message count. */
    syn(t, 3, 1, 5);
    seg(t, 3, 1 + 2000, 1000, ACK, 6);
    seg(t, 3, 1, 1000, ACK, 7);
    seg(t, 3, 1 + 1000, 1000, ACK, 8);
    r = seg(t, 3, 1 + 3000, 0, FIN | ACK, 9);
    assert_int_equal(r.completed[0], 3000);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.gaps_trimmed, 1);
    assert_int_equal(st.completions, 2);
    awafs_flowtab_destroy(t);
}

/* Attack 3: in verify mode a sender whose every segment reports "the
 * previous message was 1000 bytes and ended here" (true, by the switch's
 * count) has its messages learned, but it never climbs back to queue 0:
 * a boundary only the host reports keeps the queue the last message
 * reached.  The switch's own boundaries (a turnaround) still start the
 * next message at the top. */
static void
test_host_reported_boundaries_never_promote(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_hdr h = { .payload_len = 1000, .tcp_flags = PSH_ACK };
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;
    int in_q0 = 0, completed = 0;

    (void) state;
    thr.thr[0] = 3000;
    syn(t, 1, 0, 0);
    for (int i = 0; i < 20; i++) {
        h.seq = 1000 * i;
        h.has_prev = i > 0;
        h.prev_end = h.seq;
        h.prev_size = 1000;
        r = seg_report(t, &h, 1 + i);
        in_q0 += r.queue == 0;
        completed += r.n_completed;
    }
    assert_int_equal(completed, 19);
    assert_true(in_q0 <= 3);
    /* The completion form ends messages too, without promoting. */
    h.has_prev = false;
    h.seq = 20000;
    h.completed = true;
    h.flow_size = 2000;         /* With this segment's bytes. */
    r = seg_report(t, &h, 30);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.queue, 1);
    h.completed = false;
    h.seq = 21000;
    assert_int_equal(seg_report(t, &h, 31).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.host_boundaries, 20);
    /* The switch's own boundary: the next message from the top. */
    h.seq = 22000;
    h.ack = 5;
    assert_int_equal(seg_report(t, &h, 32).queue, 0);

    /* An honest exchange: each response's last segment carries its
     * completion, and the next request (the ACK moves) turns it around,
     * so every response starts at the top. */
    for (int i = 0; i < 5; i++) {
        h.seq = 23000 + 4000 * i;
        h.ack = 10 + i;
        h.completed = false;
        assert_int_equal(seg_report(t, &h, 40 + i).queue, 0);
        for (int j = 1; j < 4; j++) {
            h.seq += 1000;
            h.completed = j == 3;
            h.flow_size = 4000;
            r = seg_report(t, &h, 40 + i);
        }
        assert_int_equal(r.n_completed, 1);
        assert_int_equal(r.completed[0], 4000);
    }
    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* Attack 5: a flow evicted by a flood of fresh 5-tuples comes back as one
 * whose start the switch did not see: the lowest queue, not the top, until
 * its message ends; the next message starts at the top as any other. */
static void
test_evicted_flow_restarts_in_the_lowest_queue(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(8, 1);
    struct awafs_flowtab_stats st;
    struct awafs_flow_result r;

    (void) state;
    thr.thr[0] = 3000;
    syn(t, 1, 1000, 0);
    for (int i = 0; i < 5; i++) {
        seg(t, 1, 1000 + 1000 * i, 1000, ACK, 1 + i);
    }
    for (uint16_t i = 0; i < 100; i++) {
        syn(t, 1000 + i, 1, 10 + i);
    }
    awafs_flowtab_get_stats(t, &st);
    assert_true(st.evictions >= 90);
    for (int i = 5; i < 15; i++) {
        r = seg(t, 1, 1000 + 1000 * i, 1000, ACK, 200 + i);
        assert_int_equal(r.queue, 1);
    }
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.midstream_packets, 10);
    /* A turnaround ends the unknown message (partial); the next starts at
     * the top. */
    r = seg_ack(t, 1, 16000, 100, PSH_ACK, 77, 300);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.queue, 0);
    thr.thr[0] = 1000000;
    awafs_flowtab_destroy(t);
}

/* Attack 2's loop (SYN, one byte and a FIN, 200 times on one 5-tuple):
 * with a per-source limit of 10 a second (burst 2), one source's
 * completions are cut to its rate; another source keeps its own. */
static void
test_completions_limited_per_source(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_srclimit *l = awafs_srclimit_create(1024, 10, 2, 7);
    struct awafs_flowtab_stats st;
    struct awafs_flow_key other = key(9);
    struct awafs_hdr h = { .seq = 0, .tcp_flags = 0x02 };
    struct awafs_flow_result r;
    int reported = 0;

    (void) state;
    awafs_flowtab_set_srclimit(t, l);
    for (int i = 0; i < 200; i++) {
        int64_t now = i * 1000;                 /* 200 in 0.2 s. */

        syn(t, 1, 1, now);
        r = seg(t, 1, 1, 1, FIN | PSH_ACK, now);
        reported += r.n_completed;
    }
    assert_true(reported >= 2 && reported <= 5);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.limited, 200 - reported);
    assert_int_equal(awafs_srclimit_limited(l), 200 - reported);
    memcpy(other.src, "\x0a\x00\x00\x09", 4);
    awafs_flowtab_update(t, &other, &h, false, 300000, IDLE, &thr, &r);
    h = (struct awafs_hdr) { .seq = 1, .payload_len = 1,
                             .tcp_flags = FIN | PSH_ACK };
    awafs_flowtab_update(t, &other, &h, false, 300000, IDLE, &thr, &r);
    assert_int_equal(r.n_completed, 1);
    awafs_flowtab_destroy(t);
    awafs_srclimit_destroy(l);
}

/* The segment of 'len' bytes at 'seq' of flow 'sport' from 10.0.0.'src'
 * at 'now'. */
static struct awafs_flow_result
seg_from(struct awafs_flowtab *t, uint8_t src, uint16_t sport, uint32_t seq,
         uint32_t len, uint8_t flags, int64_t now)
{
    return seg_src_ack(t, src, sport, seq, len, flags, 0, now);
}

/* A source opening connection after connection, each 1000 bytes and a FIN,
 * at 10 MB/s: queue 0 takes its burst and its rate of 1 MB/s, the rest
 * goes to queue 1, while another source's message keeps queue 0. */
static void
test_queue0_limited_per_source(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(4096, 1);
    struct awafs_flowtab_stats st;
    int top = 0, honest_top = 0;

    (void) state;
    awafs_flowtab_set_queue0_rate(t, 1000000);
    for (int i = 0; i < 1000; i++) {
        int64_t now = i * 100;
        uint16_t sport = 1000 + i;

        seg_from(t, 1, sport, 0, 0, 0x02, now);
        top += seg_from(t, 1, sport, 1, 1000, PSH_ACK, now).queue == 0;
        seg_from(t, 1, sport, 1001, 0, FIN | 0x10, now);
        if (i >= 500 && i < 510) {
            /* An honest 10 kB message from 10.0.0.9 meanwhile. */
            if (i == 500) {
                seg_from(t, 9, 7, 0, 0, 0x02, now);
            }
            honest_top += seg_from(t, 9, 7, 1 + (i - 500) * 1000, 1000,
                                   PSH_ACK, now).queue == 0;
        }
    }
    /* 65,536 bytes of burst and 1 MB/s for 0.1 s: 166 segments, and one
     * more while any budget is left. */
    assert_in_range(top, 160, 170);
    assert_int_equal(honest_top, 10);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.queue0_limited, 1000 - top);

    /* A message over the budget stays in queue 1 although the budget
     * refills; after a second of silence the source starts again in
     * queue 0. */
    seg_from(t, 1, 5, 0, 0, 0x02, 100000);
    assert_int_equal(seg_from(t, 1, 5, 1, 1000, PSH_ACK, 100000).queue, 1);
    assert_int_equal(seg_from(t, 1, 5, 1001, 1000, PSH_ACK, 150000).queue, 1);
    seg_from(t, 1, 6, 0, 0, 0x02, 1200000);
    assert_int_equal(seg_from(t, 1, 6, 1, 1000, PSH_ACK, 1200000).queue, 0);
    awafs_flowtab_destroy(t);
}

/* A byte-free segment (an ACK of 'ack') of flow 'sport' from
 * 10.0.0.'src' in a 54-byte IP frame, whether its source's byte-free budget
 * refused it. */
static bool
ack_refused(struct awafs_flowtab *t, uint8_t src, uint16_t sport,
            uint32_t ack, int64_t now)
{
    struct awafs_flow_key k = key(sport);
    struct awafs_hdr h = { .seq = 1, .ack = ack, .tcp_flags = 0x10,
                           .ip_version = 4, .ip_end = 54 };
    struct awafs_flow_result r;

    k.src[3] = src;
    awafs_flowtab_update(t, &k, &h, false, now, IDLE, &thr, &r);
    return r.byte_free_refused;
}

/* One source's byte-free segments spend its own budget, not another's:
 * a source that sends nothing but ACKs is refused beyond its burst and
 * rate while an honest source's ACKs meanwhile all pass, and a second of
 * silence refills the budget; segments with data are not charged. */
static void
test_byte_free_limited_per_source(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(4096, 1);
    struct awafs_flowtab_stats st;
    int allowed = 0, honest_refused = 0;

    (void) state;
    awafs_flowtab_set_byte_free_rate(t, 10000);
    for (int i = 0; i < 2000; i++) {
        int64_t now = i * 50;       /* 0.1 s. */

        allowed += !ack_refused(t, 1, 1000 + i % 8, i, now);
        if (i % 200 == 0) {
            honest_refused += ack_refused(t, 9, 7, i, now);
        }
    }
    /* 32,768 bytes of burst and 10 kB/s for 0.1 s, 54 bytes each: 625,
     * and one more while any budget is left. */
    assert_int_equal(AWAFS_BYTE_FREE_SOURCE_BURST, 32768);
    assert_in_range(allowed, 624, 628);
    assert_int_equal(honest_refused, 0);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.byte_free_limited, 2000 - allowed);

    /* Data is not charged; a second of silence refills the budget. */
    seg_from(t, 1, 1, 0, 0, 0x02, 100000);
    assert_false(seg_from(t, 1, 1, 1, 1000, PSH_ACK, 100000)
                 .byte_free_refused);
    assert_false(ack_refused(t, 1, 1000, 5000, 1200000));
    awafs_flowtab_destroy(t);
}

/* The tail of a closed message, sent again and again, keeps queue 0 only
 * within its source's budget: then the lowest queue. */
static void
test_queue0_limits_resent_tails(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    int top = 0;

    (void) state;
    awafs_flowtab_set_queue0_rate(t, 1000);
    seg_from(t, 1, 1, 0, 0, 0x02, 0);
    assert_int_equal(seg_from(t, 1, 1, 1, 1000, FIN | PSH_ACK, 0).queue, 0);
    for (int i = 1; i <= 100; i++) {
        top += seg_from(t, 1, 1, 1, 1000, FIN | PSH_ACK, i).queue == 0;
    }
    /* The burst, 65,536 bytes, less the first 1000: 65 more. */
    assert_int_equal(top, 65);
    awafs_flowtab_destroy(t);
}

/* A tardy flow (TFS) of a source beyond its queue-0 budget goes by its
 * count, to queue 1, and its segment is refused once. */
static void
test_queue0_limits_tardy_flows(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flowtab_stats st;
    uint64_t before;

    (void) state;
    awafs_flowtab_set_queue0_rate(t, 1000);
    awafs_flowtab_set_tardy(t, UINT64_MAX);
    seg_from(t, 1, 2, 0, 0, 0x02, 0);
    assert_int_equal(seg_from(t, 1, 2, 1, 1000, PSH_ACK, 0).queue, 0);
    /* Another flow of the source takes the rest of the budget. */
    seg_from(t, 1, 1, 0, 0, 0x02, 0);
    for (int i = 0; i < 70; i++) {
        seg_from(t, 1, 1, 1 + i * 1000, 1000, PSH_ACK, 0);
    }
    awafs_flowtab_get_stats(t, &st);
    before = st.queue0_limited;
    assert_true(before > 0);
    /* The first flow's segment sent again: tardy, beyond the budget. */
    assert_int_equal(seg_from(t, 1, 2, 1, 1000, PSH_ACK, 0).queue, 1);
    awafs_flowtab_get_stats(t, &st);
    assert_int_equal(st.queue0_limited, before + 1);
    assert_int_equal(st.tardy_packets, 0);
    awafs_flowtab_destroy(t);
}

/* Segments of one byte are charged their frames: of 2000 loops of SYN, one
 * byte and FIN, each 55 bytes up to the end of its IP packet, queue 0
 * takes the burst's 65,536 bytes and no more. */
static void
test_queue0_charges_frames(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(4096, 1);
    struct awafs_flow_key k = key(0);
    int top = 0;

    (void) state;
    awafs_flowtab_set_queue0_rate(t, 1000);
    for (int i = 0; i < 2000; i++) {
        struct awafs_hdr h = { .seq = 0, .tcp_flags = 0x02, .ip_end = 54 };
        struct awafs_flow_result r;

        k.sport = 1000 + i;
        awafs_flowtab_update(t, &k, &h, false, i, IDLE, &thr, &r);
        h = (struct awafs_hdr) { .seq = 1, .payload_len = 1, .ip_end = 55,
                                 .tcp_flags = FIN | PSH_ACK };
        awafs_flowtab_update(t, &k, &h, false, i, IDLE, &thr, &r);
        top += r.queue == 0;
    }
    assert_int_equal(top, 65536 / 55 + 1);
    awafs_flowtab_destroy(t);
}

/* Everything that tells two flows apart is in the key: the same 5-tuple
 * on two VLANs is two flows. */
static void
test_vlans_tell_flows_apart(void **state)
{
    struct frame_spec s = { .payload_len = 100, .n_vlans = 1 };
    struct awafs_flowtab *t = awafs_flowtab_create(64, 1);
    struct awafs_flow_key k1, k2;
    struct awafs_flow_result r;
    uint8_t frame[1600];
    struct awafs_hdr h;
    size_t len;

    (void) state;
    len = build_frame(frame, &s, NULL, NULL);
    assert_int_equal(awafs_parse(frame, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k1));
    assert_int_equal(k1.vlan[0], 100);
    frame[15] = 101;                            /* Another VLAN ID. */
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k2));
    assert_int_equal(k2.vlan[0], 101);
    assert_true(memcmp(&k1, &k2, sizeof k1) != 0);
    h.seq = 0;
    awafs_flowtab_update(t, &k1, &h, false, 0, IDLE, &thr, &r);
    h.seq = 100;
    awafs_flowtab_update(t, &k1, &h, false, 1, IDLE, &thr, &r);
    assert_int_equal(r.bytes_sent, 100);
    awafs_flowtab_update(t, &k2, &h, false, 2, IDLE, &thr, &r);
    assert_int_equal(r.bytes_sent, 0);          /* A flow of its own. */

    s.n_vlans = 2;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k1));
    assert_int_equal(k1.vlan[0], 100);
    assert_int_equal(k1.vlan[1], 101);
    awafs_flowtab_destroy(t);
}

/* In a tunnel the inner 5-tuple and VLANs make the key with the tunnel
 * and its key: two tenants with the same inner addresses are two flows,
 * and the outer headers tell nothing apart. */
static void
test_tunnels_tell_flows_apart(void **state)
{
    static uint8_t inner[1600], frame[2200];
    struct awafs_tunnel_ports ports = standard_tunnel_ports();
    struct frame_spec s = { .payload_len = 100, .n_vlans = 1 };
    struct tunnel_spec t = { .vni = 10, .outer_vlans = 1 };
    struct awafs_flow_key k[4];
    struct awafs_hdr h;
    size_t ilen, len;

    (void) state;
    ilen = build_frame(inner, &s, NULL, NULL);
    for (int i = 0; i < 4; i++) {
        t.vni = i == 1 ? 11 : 10;
        t.type = i == 2 ? AWAFS_TUNNEL_GENEVE : AWAFS_TUNNEL_VXLAN;
        t.outer_ipv6 = i == 3;
        len = encap(frame, inner, ilen, &t, NULL);
        assert_int_equal(awafs_parse_tunnel(frame, len, &ports, &h, NULL),
                         AWAFS_PARSE_NO_OPTION);
        assert_true(awafs_flow_key_from_frame(frame, len, &h, &k[i]));
        assert_int_equal(k[i].vlan[0], 100);    /* The inner frame's. */
        assert_int_equal(k[i].vlan[1], 0);
        assert_int_equal(k[i].sport, 40000);
    }
    assert_true(memcmp(&k[0], &k[1], sizeof k[0]) != 0);   /* VNI. */
    assert_true(memcmp(&k[0], &k[2], sizeof k[0]) != 0);   /* Geneve. */
    assert_true(memcmp(&k[0], &k[3], sizeof k[0]) == 0);   /* Outer v6. */
    assert_int_equal(k[1].vni[2], 11);
}

AWAFS_UNIT_MAIN(flowtab)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_by_sequence),
        cmocka_unit_test(test_messages_beyond_two_gigabytes),
        cmocka_unit_test(test_fin_and_rst_end_the_message),
        cmocka_unit_test(test_idle_gap_ends_the_previous_message),
        cmocka_unit_test(test_pauses_inside_a_write_do_not_split),
        cmocka_unit_test(test_retransmission_after_a_timeout_continues),
        cmocka_unit_test(test_turnaround_ends_the_message),
        cmocka_unit_test(test_host_completion_must_agree),
        cmocka_unit_test(test_messages_not_seen_from_their_start),
        cmocka_unit_test(test_bounded_with_eviction),
        cmocka_unit_test(test_key_from_frames),
        cmocka_unit_test(test_queue_never_rises_within_a_message),
        cmocka_unit_test(test_timeouts_not_fast_retransmits),
        cmocka_unit_test(test_aging_restarts_unknown_size),
        cmocka_unit_test(test_aging_sized_and_deadline),
        cmocka_unit_test(test_kappa_per_flow),
        cmocka_unit_test(test_hash_is_keyed),
        cmocka_unit_test(test_tardy_flows),
        cmocka_unit_test(test_queue0_limited_per_source),
        cmocka_unit_test(test_queue0_limits_resent_tails),
        cmocka_unit_test(test_queue0_charges_frames),
        cmocka_unit_test(test_queue0_limits_tardy_flows),
        cmocka_unit_test(test_byte_free_limited_per_source),
        cmocka_unit_test(test_siphash_reference_vectors),
        cmocka_unit_test(test_forged_fin_and_rst_are_ignored),
        cmocka_unit_test(test_syn_on_an_open_connection_is_ignored),
        cmocka_unit_test(test_completion_bounded_by_bytes_forwarded),
        cmocka_unit_test(test_host_reported_boundaries_never_promote),
        cmocka_unit_test(test_evicted_flow_restarts_in_the_lowest_queue),
        cmocka_unit_test(test_completions_limited_per_source),
        cmocka_unit_test(test_vlans_tell_flows_apart),
        cmocka_unit_test(test_tunnels_tell_flows_apart),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
