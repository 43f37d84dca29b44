/* Unit tests: strict-priority queues, buffer drops, token bucket, ECN. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <stdlib.h>
#include <string.h>

/* Packets are small integers cast to pointers: (queue << 8) | seq. */
#define PKT(q, seq) ((void *) (uintptr_t) ((q) << 8 | (seq)))

static void
test_strict_priority_and_fifo(void **state)
{
    struct awafs_sched *s = awafs_sched_create(4, 100);
    void *out[16];

    (void) state;
    assert_null(awafs_sched_enqueue(s, 3, PKT(3, 0), 100));
    assert_null(awafs_sched_enqueue(s, 1, PKT(1, 0), 100));
    assert_null(awafs_sched_enqueue(s, 3, PKT(3, 1), 100));
    assert_null(awafs_sched_enqueue(s, 0, PKT(0, 0), 100));
    assert_null(awafs_sched_enqueue(s, 1, PKT(1, 1), 100));
    assert_null(awafs_sched_enqueue(s, 9, PKT(3, 2), 100));  /* Clamped. */
    assert_int_equal(awafs_sched_backlog(s), 6);

    assert_int_equal(awafs_sched_peek(s, out, 16, INT64_MAX, 0), 6);
    assert_ptr_equal(out[0], PKT(0, 0));
    assert_ptr_equal(out[1], PKT(1, 0));
    assert_ptr_equal(out[2], PKT(1, 1));
    assert_ptr_equal(out[3], PKT(3, 0));
    assert_ptr_equal(out[5], PKT(3, 2));

    /* Only what was sent leaves; the rest stays in order.  The shaper is
     * charged each frame's wire overhead too. */
    assert_int_equal(awafs_sched_commit(s, 2),
                     2 * (100 + AWAFS_WIRE_OVERHEAD));
    assert_int_equal(awafs_sched_backlog(s), 4);
    /* A later high-priority packet overtakes the queued low ones. */
    assert_null(awafs_sched_enqueue(s, 0, PKT(0, 1), 100));
    assert_int_equal(awafs_sched_peek(s, out, 2, INT64_MAX, 0), 2);
    assert_ptr_equal(out[0], PKT(0, 1));
    assert_ptr_equal(out[1], PKT(1, 1));
    /* A commit removes only what the last peek returned. */
    assert_int_equal(awafs_sched_peek(s, out, 16, INT64_MAX, 0), 5);
    awafs_sched_commit(s, 5);
    assert_int_equal(awafs_sched_backlog(s), 0);
    assert_int_equal(awafs_sched_peek(s, out, 16, INT64_MAX, 0), 0);
    awafs_sched_destroy(s);
}

static void
test_byte_budget(void **state)
{
    struct awafs_sched *s = awafs_sched_create(2, 10);
    void *out[8];

    (void) state;
    for (int i = 0; i < 4; i++) {
        awafs_sched_enqueue(s, 0, PKT(0, i), 1000);
    }
    assert_int_equal(awafs_sched_peek(s, out, 8, 0, 0), 0);
    assert_int_equal(awafs_sched_peek(s, out, 8, 1, 0), 1);
    /* Each packet costs its length and the wire overhead. */
    assert_int_equal(awafs_sched_peek(s, out, 8, 1000 + AWAFS_WIRE_OVERHEAD,
                                      0), 1);
    assert_int_equal(awafs_sched_peek(s, out, 8, 1001 + AWAFS_WIRE_OVERHEAD,
                                      0), 2);
    awafs_sched_commit(s, 4);
    awafs_sched_destroy(s);
}

static void
test_full_buffer_drops_lowest_first(void **state)
{
    struct awafs_sched *s = awafs_sched_create(3, 4);
    struct awafs_queue_stats st;
    void *out[8];

    (void) state;
    awafs_sched_enqueue(s, 0, PKT(0, 0), 10);
    awafs_sched_enqueue(s, 2, PKT(2, 0), 20);
    awafs_sched_enqueue(s, 2, PKT(2, 1), 20);
    awafs_sched_enqueue(s, 1, PKT(1, 0), 30);
    /* Full.  A queue-0 packet pushes out queue 2's newest. */
    assert_ptr_equal(awafs_sched_enqueue(s, 0, PKT(0, 1), 10), PKT(2, 1));
    assert_ptr_equal(awafs_sched_enqueue(s, 1, PKT(1, 1), 30), PKT(2, 0));
    /* Queue 2 is empty now: queue 1 is the lowest; a queue-1 packet is
     * not above it, so it is the one dropped. */
    assert_ptr_equal(awafs_sched_enqueue(s, 1, PKT(1, 2), 30), PKT(1, 2));
    assert_ptr_equal(awafs_sched_enqueue(s, 2, PKT(2, 2), 20), PKT(2, 2));
    assert_ptr_equal(awafs_sched_enqueue(s, 0, PKT(0, 2), 10), PKT(1, 1));
    assert_int_equal(awafs_sched_backlog(s), 4);

    awafs_sched_get_queue_stats(s, 2, &st);
    assert_int_equal(st.drop_packets, 3);
    assert_int_equal(st.drop_bytes, 60);
    assert_int_equal(st.backlog_packets, 0);
    awafs_sched_get_queue_stats(s, 1, &st);
    assert_int_equal(st.drop_packets, 2);
    assert_int_equal(st.backlog_packets, 1);
    assert_int_equal(st.backlog_bytes, 30);
    awafs_sched_get_queue_stats(s, 0, &st);
    assert_int_equal(st.drop_packets, 0);
    assert_int_equal(st.enq_packets, 3);
    assert_int_equal(st.backlog_packets, 3);

    assert_int_equal(awafs_sched_peek(s, out, 8, INT64_MAX, 0), 4);
    assert_ptr_equal(out[0], PKT(0, 0));
    assert_ptr_equal(out[1], PKT(0, 1));
    assert_ptr_equal(out[2], PKT(0, 2));
    assert_ptr_equal(out[3], PKT(1, 0));
    awafs_sched_commit(s, 4);
    awafs_sched_get_queue_stats(s, 0, &st);
    assert_int_equal(st.tx_packets, 3);
    assert_int_equal(st.tx_bytes, 30);
    awafs_sched_destroy(s);
}

static void
test_wraparound(void **state)
{
    struct awafs_sched *s = awafs_sched_create(2, 5);    /* 8 slots. */
    void *out[8];
    uint32_t next = 0;

    (void) state;
    for (uint32_t i = 0; i < 1000; i++) {
        assert_null(awafs_sched_enqueue(s, 1, PKT(1, i & 0xff), 1));
        if (i % 3 == 2) {
            size_t n = awafs_sched_peek(s, out, 8, INT64_MAX, 0);

            for (size_t j = 0; j < n; j++) {
                assert_ptr_equal(out[j], PKT(1, next & 0xff));
                next++;
            }
            awafs_sched_commit(s, n);
        }
    }
    awafs_sched_commit(s, awafs_sched_peek(s, out, 8, INT64_MAX, 0));
    assert_int_equal(awafs_sched_backlog(s), 0);
    awafs_sched_destroy(s);
}

/* The burst path makes the same decisions as one enqueue at a time. */
static void
test_burst_equals_single(void **state)
{
    struct awafs_sched *a = awafs_sched_create(4, 20);
    struct awafs_sched *b = awafs_sched_create(4, 20);
    void *victims[32], *out_a[32], *out_b[32];
    uint8_t queues[32], ecn[32];
    uint32_t lens[32];
    void *pkts[32];
    size_t n_victims = 0;

    (void) state;
    awafs_test_srand(3);
    for (int i = 0; i < 32; i++) {
        queues[i] = awafs_test_rand() % 5;      /* 4 is clamped to 3. */
        lens[i] = 60 + i;
        pkts[i] = PKT(queues[i], i);
    }
    for (int i = 0; i < 32; i++) {
        void *v = awafs_sched_enqueue(a, queues[i], pkts[i], lens[i]);

        if (v) {
            victims[n_victims++] = v;
        }
    }
    memset(ecn, 0, sizeof ecn);
    assert_int_equal(awafs_sched_enqueue_burst(b, queues, pkts, lens, ecn,
                                               32, 0, out_b), n_victims);
    for (size_t i = 0; i < n_victims; i++) {
        assert_ptr_equal(out_b[i], victims[i]);
    }
    assert_int_equal(awafs_sched_backlog(b), 20);
    assert_int_equal(awafs_sched_peek(a, out_a, 32, INT64_MAX, 0), 20);
    assert_int_equal(awafs_sched_peek(b, out_b, 32, INT64_MAX, 0), 20);
    assert_memory_equal(out_a, out_b, 20 * sizeof out_a[0]);
    for (unsigned int q = 0; q < 4; q++) {
        struct awafs_queue_stats sa, sb;

        awafs_sched_get_queue_stats(a, q, &sa);
        awafs_sched_get_queue_stats(b, q, &sb);
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    awafs_sched_commit(a, 20);
    awafs_sched_commit(b, 20);
    awafs_sched_destroy(a);
    awafs_sched_destroy(b);
}

/* Packets burst() enqueued, per queue. */
static uint64_t arrived[AWAFS_MAX_QUEUES];

/* Enqueues packets 'first'..'first + n - 1' (100 bytes) to queue 'q' at
 * 'now', all ECN-capable; returns how many the scheduler asked to mark. */
static int
burst(struct awafs_sched *s, unsigned int q, int first, int n,
      uint32_t now, void **victims, size_t *n_victims)
{
    uint8_t queues[32], ecn[32];
    uint32_t lens[32];
    void *pkts[32];
    int marks = 0;

    for (int i = 0; i < n; i++) {
        queues[i] = q;
        lens[i] = 100;
        pkts[i] = PKT(q, first + i);
        ecn[i] = 1;
    }
    *n_victims = awafs_sched_enqueue_burst(s, queues, pkts, lens, ecn, n,
                                           now, victims);
    arrived[q] += n;
    for (int i = 0; i < n; i++) {
        marks += ecn[i];
    }
    return marks;
}

/* Per port: the backlog of all queues counts; per queue: only the packet's
 * own queue.  A packet dropped at a full buffer is never marked, and a mark
 * counts only when its packet is sent. */
static void
test_ecn_modes_after_drop(void **state)
{
    struct awafs_sched *s = awafs_sched_create(2, 10);
    struct awafs_queue_stats st;
    void *victims[32], *out[32];
    size_t nv;

    (void) state;
    awafs_sched_set_ecn(s, 3, false);
    assert_int_equal(burst(s, 1, 0, 4, 0, victims, &nv), 0);
    /* 4 queued in queue 1: queue-0 packets find more than 3 ahead. */
    assert_int_equal(burst(s, 0, 0, 2, 0, victims, &nv), 2);
    /* 6 queued; of 6 more for queue 1, 4 fit and are marked, 2 dropped
     * unmarked. */
    assert_int_equal(burst(s, 1, 4, 6, 0, victims, &nv), 4);
    assert_int_equal(nv, 2);
    /* A queue-0 packet pushes out queue 1's newest, which was marked. */
    assert_int_equal(burst(s, 0, 2, 1, 0, victims, &nv), 1);
    assert_int_equal(nv, 1);
    assert_ptr_equal(victims[0], PKT(1, 7));

    assert_int_equal(awafs_sched_peek(s, out, 32, INT64_MAX, 0), 10);
    awafs_sched_commit(s, 10);
    awafs_sched_get_queue_stats(s, 0, &st);
    assert_int_equal(st.ecn_marks, 3);
    awafs_sched_get_queue_stats(s, 1, &st);
    assert_int_equal(st.ecn_marks, 3);      /* 4 marked, 1 of them lost. */
    assert_int_equal(st.drop_packets, 3);

    /* Per queue: a backlog of another queue does not mark. */
    awafs_sched_set_ecn(s, 3, true);
    burst(s, 1, 0, 8, 0, victims, &nv);
    assert_int_equal(burst(s, 0, 0, 2, 0, victims, &nv), 0);
    assert_int_equal(burst(s, 1, 8, 1, 0, victims, &nv), 0);    /* Full. */
    awafs_sched_commit(s, awafs_sched_peek(s, out, 32, INT64_MAX, 0));
    burst(s, 0, 0, 4, 0, victims, &nv);
    assert_int_equal(burst(s, 0, 4, 2, 0, victims, &nv), 2);
    awafs_sched_commit(s, awafs_sched_peek(s, out, 32, INT64_MAX, 0));
    awafs_sched_destroy(s);
}

/* With the guard, a low queue's head that waited longer than the limit
 * goes ahead of a higher queue's packets; otherwise strict priority. */
static void
test_starvation_guard(void **state)
{
    struct awafs_sched *s = awafs_sched_create(3, 100);
    struct awafs_queue_stats st;
    void *victims[32], *out[32];
    size_t nv;

    (void) state;
    awafs_sched_set_max_wait(s, 1000);
    burst(s, 2, 0, 2, 100, victims, &nv);
    burst(s, 2, 2, 2, 900, victims, &nv);
    burst(s, 0, 0, 3, 1000, victims, &nv);
    /* At 1050 nothing waited more than 1000 us: strict order. */
    assert_int_equal(awafs_sched_peek(s, out, 2, INT64_MAX, 1050), 2);
    assert_ptr_equal(out[0], PKT(0, 0));
    /* At 1200 the first two of queue 2 waited 1100 us: they go first,
     * then queue 0, then the rest of queue 2 in order. */
    assert_int_equal(awafs_sched_peek(s, out, 32, INT64_MAX, 1200), 7);
    assert_ptr_equal(out[0], PKT(2, 0));
    assert_ptr_equal(out[1], PKT(2, 1));
    assert_ptr_equal(out[2], PKT(0, 0));
    assert_ptr_equal(out[4], PKT(0, 2));
    assert_ptr_equal(out[5], PKT(2, 2));
    assert_ptr_equal(out[6], PKT(2, 3));
    /* The NIC takes 3: the two aged ones and the first queue-0 packet. */
    assert_int_equal(awafs_sched_commit(s, 3),
                     3 * (100 + AWAFS_WIRE_OVERHEAD));
    assert_int_equal(awafs_sched_peek(s, out, 32, INT64_MAX, 1200), 4);
    assert_ptr_equal(out[0], PKT(0, 1));
    assert_ptr_equal(out[2], PKT(2, 2));
    awafs_sched_commit(s, 4);
    awafs_sched_get_queue_stats(s, 2, &st);
    assert_int_equal(st.aged_packets, 2);
    assert_int_equal(st.tx_packets, 4);
    /* Wrapping clock: queued at 2^32 - 500, aged at 600. */
    burst(s, 1, 0, 1, UINT32_MAX - 500, victims, &nv);
    burst(s, 0, 0, 1, 600, victims, &nv);
    assert_int_equal(awafs_sched_peek(s, out, 32, INT64_MAX, 600), 2);
    assert_ptr_equal(out[0], PKT(1, 0));
    awafs_sched_commit(s, 2);
    awafs_sched_destroy(s);
}

/* Whatever happens, every packet that arrived is accounted for once:
 * arrived = tx + drop + flush + backlog, per queue, in packets and bytes
 * (100 each), through partial commits, flushes and the guard. */
static void
test_counters_add_up(void **state)
{
    struct awafs_sched *s = awafs_sched_create(4, 50);
    uint64_t drops = 0, flushes = 0, marks = 0;
    void *victims[32], *out[32];
    size_t nv;

    (void) state;
    awafs_test_srand(7);
    memset(arrived, 0, sizeof arrived);
    awafs_sched_set_ecn(s, 5, false);
    awafs_sched_set_max_wait(s, 300);
    for (uint32_t t = 0; t < 20000; t += 10) {
        burst(s, awafs_test_rand() % 4, 0, 1 + awafs_test_rand() % 32, t,
              victims, &nv);
        if (awafs_test_rand() % 3) {
            size_t n = awafs_sched_peek(s, out, 32,
                                        awafs_test_rand() % 5000, t);

            awafs_sched_commit(s, n ? awafs_test_rand() % (n + 1) : 0);
        }
        if (awafs_test_rand() % 200 == 0) {
            while (awafs_sched_flush(s, out, 7)) {
                continue;
            }
        }
    }
    for (unsigned int q = 0; q < 4; q++) {
        struct awafs_queue_stats st;

        awafs_sched_get_queue_stats(s, q, &st);
        drops += st.drop_packets;
        flushes += st.flush_packets;
        marks += st.ecn_marks;
        assert_int_equal(arrived[q], st.tx_packets + st.drop_packets
                         + st.flush_packets + st.backlog_packets);
        assert_int_equal(arrived[q] * 100, st.tx_bytes + st.drop_bytes
                         + st.flush_bytes + st.backlog_bytes);
        assert_int_equal(st.enq_packets, arrived[q]);
        assert_true(st.ecn_marks <= st.tx_packets);
    }
    assert_true(drops && flushes && marks);
    while (awafs_sched_flush(s, out, 32)) {
        continue;
    }
    assert_int_equal(awafs_sched_backlog(s), 0);
    awafs_sched_destroy(s);
}

static void
test_create_limits(void **state)
{
    (void) state;
    assert_null(awafs_sched_create(1, 10));
    assert_null(awafs_sched_create(9, 10));
    assert_null(awafs_sched_create(2, 0));
    assert_null(awafs_sched_create(2, AWAFS_SCHED_MAX_LIMIT + 1));
    assert_int_equal(awafs_sched_memsize(8, 1000),
                     awafs_sched_memsize(8, 1024));
}

static void
test_token_bucket(void **state)
{
    struct awafs_tb tb;

    (void) state;
    /* 1000 bytes/s on a 1 MHz clock, 1500-byte bucket. */
    awafs_tb_init(&tb, 1000, 1500, 1000000, 0);
    assert_int_equal(awafs_tb_budget(&tb, 0), 1500);
    awafs_tb_consume(&tb, 1600);
    assert_int_equal(awafs_tb_budget(&tb, 0), -100);
    assert_false(awafs_tb_allows(&tb, 0, 1));               /* In debt. */
    assert_int_equal(awafs_tb_budget(&tb, 100000), 0);      /* +100 B. */
    assert_true(awafs_tb_allows(&tb, 100000, 0));
    assert_false(awafs_tb_allows(&tb, 100000, 1));
    /* Many calls within one byte's time still add up. */
    for (uint64_t t = 100000; t <= 600000; t += 10) {
        awafs_tb_budget(&tb, t);
    }
    assert_int_equal(awafs_tb_budget(&tb, 600000), 500);
    /* Idle refills only up to the bucket. */
    assert_int_equal(awafs_tb_budget(&tb, 100000000), 1500);
    assert_true(awafs_tb_allows(&tb, 100000000, 1500));
    assert_false(awafs_tb_allows(&tb, 100000000, 1501));
    /* Unlimited. */
    /* 400 Gbit/s, a 3 GHz clock, in debt, then idle for years: the refill
     * stays within 64 bits (no 128-bit arithmetic) and fills the bucket. */
    awafs_tb_init(&tb, 50000000000ULL, 2500000, 3000000000ULL, 0);
    awafs_tb_consume(&tb, 2600000);
    assert_int_equal(awafs_tb_budget(&tb, 1), -100000 + 16);
    assert_int_equal(awafs_tb_budget(&tb, 1000000000000000000ULL), 2500000);
    /* A burst too large to keep that product in range is bounded. */
    awafs_tb_init(&tb, 1000, UINT64_MAX, 1000, 0);
    assert_int_equal(awafs_tb_budget(&tb, 0), AWAFS_TB_MAX_BURST);

    awafs_tb_init(&tb, 0, 0, 1000, 0);
    assert_int_equal(awafs_tb_budget(&tb, 5), INT64_MAX);
    assert_true(awafs_tb_allows(&tb, 5, UINT64_MAX / 2));
}

/* Refilled every 100 ticks of a 3 GHz clock for one simulated second,
 * the bucket adds the rate's bytes to within one byte: nothing below a
 * byte is lost at any refill, however slow the rate or frequent the
 * calls. */
static void
test_token_bucket_refill_is_exact(void **state)
{
    static const uint64_t rates_bits[] = {
        1000000ULL, 25000000ULL, 100000000ULL, 10000000000ULL,
        100000000000ULL,
    };
    const uint64_t hz = 3000000000ULL;

    (void) state;
    for (size_t i = 0; i < sizeof rates_bits / sizeof rates_bits[0]; i++) {
        uint64_t rate = rates_bits[i] / 8;
        uint64_t burst = rate / 1000 > 3000 ? rate / 1000 : 3000;
        int64_t credited = 0, budget;
        struct awafs_tb tb;

        awafs_tb_init(&tb, rate, burst, hz, 0);
        /* Start empty, then spend every refill as it comes, as a sender
         * that always has something queued does. */
        awafs_tb_consume(&tb, burst);
        for (uint64_t t = 100; t <= hz; t += 100) {
            budget = awafs_tb_budget(&tb, t);
            if (budget > 0) {
                credited += budget;
                awafs_tb_consume(&tb, budget);
            }
        }
        /* Within 0.5 % as a bound, and in fact to the byte. */
        assert_true(llabs(credited - (int64_t) rate) <= (int64_t) rate / 200);
        assert_true(llabs(credited - (int64_t) rate) <= 1);
    }
}

/* The largest refill below 'full_ticks' (the biggest bucket, all its debt,
 * 100 Gbit/s on an 8 GHz clock) stays within 64 bits: one tick before the
 * bucket is full it holds all but about that tick's bytes. */
static void
test_token_bucket_largest_refill(void **state)
{
    const uint64_t rate = 100000000000ULL / 8, hz = 8000000000ULL;
    struct awafs_tb tb;
    int64_t budget;

    (void) state;
    awafs_tb_init(&tb, rate, AWAFS_TB_MAX_BURST, hz, 0);
    awafs_tb_consume(&tb, AWAFS_TB_MAX_BURST + AWAFS_TB_MAX_DEBT);
    budget = awafs_tb_budget(&tb, tb.full_ticks - 1);
    assert_true(budget <= (int64_t) AWAFS_TB_MAX_BURST);
    assert_true(budget >= (int64_t) AWAFS_TB_MAX_BURST
                          - (int64_t) (2 * rate / hz + 2));
}

/* A port shaped to 100 Mbit/s and always backlogged sends, in a second,
 * the frames its wire rate allows: each frame costs its length and
 * AWAFS_WIRE_OVERHEAD, for 64-byte frames (142,045 a second: a wire rate
 * the lengths alone would exceed by 37 %) as for 1518-byte ones.  The
 * queues count the lengths alone. */
static void
test_shaper_charges_wire_overhead(void **state)
{
    static const uint32_t frame_lens[] = { 64, 1518 };
    const uint64_t rate = 100000000 / 8, hz = 1000000000;

    (void) state;
    for (size_t i = 0; i < sizeof frame_lens / sizeof frame_lens[0]; i++) {
        uint32_t len = frame_lens[i];
        struct awafs_sched *s = awafs_sched_create(2, 64);
        uint64_t frames = 0, charged = 0, expected;
        struct awafs_queue_stats st;
        struct awafs_tb tb;
        void *out[32];

        awafs_tb_init(&tb, rate, 3000, hz, 0);
        /* One 'tick' a microsecond, as a PMD loop would poll. */
        for (uint64_t t = 1000; t <= hz; t += 1000) {
            uint64_t bytes;
            size_t n;

            while (awafs_sched_backlog(s) < 32) {
                awafs_sched_enqueue(s, 0, PKT(0, 0), len);
            }
            n = awafs_sched_peek(s, out, 32, awafs_tb_budget(&tb, t), 0);
            bytes = awafs_sched_commit(s, n);
            awafs_tb_consume(&tb, bytes);
            charged += bytes;
            frames += n;
        }
        expected = rate / (len + AWAFS_WIRE_OVERHEAD);
        assert_true(frames * 1000 >= expected * 995);
        assert_true(frames * 1000 <= expected * 1005);
        assert_int_equal(charged, frames * (len + AWAFS_WIRE_OVERHEAD));
        awafs_sched_get_queue_stats(s, 0, &st);
        assert_int_equal(st.tx_packets, frames);
        assert_int_equal(st.tx_bytes, frames * len);
        awafs_sched_destroy(s);
    }
}

/* What a sender backlogged on a bucket at 'rate' bytes a second sends in a
 * second if it comes back every 'gap_us' (a 1 MHz clock: a tick a
 * microsecond) and spends the whole budget at each visit. */
static uint64_t
sent_with_gaps(uint64_t rate, uint64_t burst, uint64_t gap_us)
{
    struct awafs_tb tb;
    uint64_t sent = 0;

    awafs_tb_init(&tb, rate, burst, 1000000, 0);
    awafs_tb_consume(&tb, burst);
    for (uint64_t t = gap_us; t <= 1000000; t += gap_us) {
        int64_t budget = awafs_tb_budget(&tb, t);

        sent += budget;
        awafs_tb_consume(&tb, budget);
    }
    return sent;
}

/* The arithmetic of the burst of a port shaped to its 10 Gb/s link
 * (1.25e9 bytes a second), whose PMD comes back every 80 us: a 50 us
 * burst (62,500 bytes) fills after 50 us of each 80, and the other 30 us
 * of the link's time are lost, idle: 50 / 80 = 62.5 % of its rate.  The
 * burst awafs_burst_for_gap() gives for 80 us (100,000 bytes) loses
 * nothing.  The histogram of the gaps tells the 80 us apart. */
static void
test_burst_covers_the_gap(void **state)
{
    const uint64_t rate = 10000000000ULL / 8;
    struct awafs_gaps gaps, before;
    uint64_t burst;

    (void) state;
    assert_int_equal(awafs_burst_for_gap(rate, 50, 50, 1000), 62500);
    assert_int_equal(sent_with_gaps(rate, 62500, 80), rate / 1000 * 625);
    burst = awafs_burst_for_gap(rate, 80, 50, 1000);
    assert_int_equal(burst, 100000);
    assert_int_equal(sent_with_gaps(rate, burst, 80), rate);
    /* Shorter gaps than the least burst's lose nothing either. */
    assert_int_equal(sent_with_gaps(rate, 62500, 40), rate);
    /* The burst stays within its bounds; exact at slow rates too. */
    assert_int_equal(awafs_burst_for_gap(rate, 5, 50, 1000), 62500);
    assert_int_equal(awafs_burst_for_gap(rate, 1000000, 50, 1000),
                     1250000);
    assert_int_equal(awafs_burst_for_gap(999999, 1000, 50, 1000), 999);

    memset(&gaps, 0, sizeof gaps);
    awafs_gaps_add(&gaps, 3);
    awafs_gaps_add(&gaps, 80);                  /* In [64, 128). */
    before = gaps;
    assert_int_equal(awafs_gaps_longest(&gaps, &before), 0);
    awafs_gaps_add(&gaps, 0);
    assert_int_equal(awafs_gaps_longest(&gaps, &before), 0);
    awafs_gaps_add(&gaps, 5);                   /* In [4, 8). */
    assert_int_equal(awafs_gaps_longest(&gaps, &before), 8);
    awafs_gaps_add(&gaps, UINT64_MAX);          /* The last bucket. */
    assert_int_equal(awafs_gaps_longest(&gaps, &before),
                     1ULL << (AWAFS_GAP_BUCKETS - 1));
    memset(&before, 0, sizeof before);
    awafs_gaps_sum(&before, &gaps);
    awafs_gaps_sum(&before, &gaps);
    assert_int_equal(before.n[7], 2);
}

/* The ones' complement sum of the IPv4 header at 'ip' (0xffff if its
 * checksum is right). */
static uint32_t
ipv4_sum(const uint8_t *ip)
{
    uint32_t sum = 0;

    for (int i = 0; i < 20; i += 2) {
        sum += ip[i] << 8 | ip[i + 1];
    }
    sum = (sum & 0xffff) + (sum >> 16);
    return (sum & 0xffff) + (sum >> 16);
}

static void
test_ecn_marking(void **state)
{
    uint8_t frame[1600];
    struct frame_spec s = { .ip_proto = 17, .payload_len = 20 };
    struct awafs_hdr h;
    size_t l3, len;

    (void) state;
    for (int ecn = 0; ecn < 4; ecn++) {
        len = build_frame(frame, &s, &l3, NULL);
        frame[l3 + 1] = ecn;
        /* A valid IPv4 checksum to start from. */
        put16(frame + l3 + 10, ~ipv4_sum(frame + l3) & 0xffff);

        assert_int_equal(awafs_parse(frame, len, &h, NULL),
                         AWAFS_PARSE_NOT_TCP);
        assert_int_equal(awafs_ecn_set_ce(frame, len, &h),
                         ecn == 1 || ecn == 2);
        assert_int_equal(frame[l3 + 1] & 3, ecn ? 3 : 0);
        /* The checksum still verifies. */
        assert_int_equal(ipv4_sum(frame + l3), 0xffff);
    }

    s.ipv6 = true;
    len = build_frame(frame, &s, &l3, NULL);
    frame[l3 + 1] = 0x20;                       /* ECT(0) in IPv6. */
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_ecn_set_ce(frame, len, &h));
    assert_int_equal(frame[l3 + 1], 0x30);
    frame[l3 + 1] = 0x00;                       /* Not ECT. */
    assert_false(awafs_ecn_set_ce(frame, len, &h));

    /* Not IP: nothing to mark. */
    put16(frame + 12, 0x0806);
    awafs_parse(frame, 60, &h, NULL);
    assert_false(awafs_ecn_set_ce(frame, 60, &h));
}

/* A tunnelled packet is marked on its outer header, and only if its inner
 * one is ECT too (RFC 6040); the inner header is left as it was. */
static void
test_ecn_marking_in_tunnels(void **state)
{
    static uint8_t inner[1600], frame[2200];
    struct awafs_tunnel_ports ports = standard_tunnel_ports();
    struct frame_spec s = { .payload_len = 20 };
    size_t l3, ilen;

    (void) state;
    ilen = build_frame(inner, &s, &l3, NULL);
    for (int i = 0; i < 2 * 4 * 4; i++) {
        struct tunnel_spec t = { .outer_ipv6 = i / 16, .outer_ecn = i % 4 };
        int inner_ecn = i / 4 % 4;
        bool ect = (t.outer_ecn == 1 || t.outer_ecn == 2)
                   && (inner_ecn == 1 || inner_ecn == 2);
        size_t len, ol3;
        struct awafs_hdr h;

        inner[l3 + 1] = inner_ecn;
        len = encap(frame, inner, ilen, &t, &ol3);
        if (!t.outer_ipv6) {
            put16(frame + ol3 + 10, ~ipv4_sum(frame + ol3) & 0xffff);
        }
        assert_int_equal(awafs_parse_tunnel(frame, len, &ports, &h, NULL),
                         AWAFS_PARSE_NO_OPTION);
        assert_int_equal(awafs_ecn_capable(frame, len, &h), ect);
        assert_int_equal(awafs_ecn_set_ce(frame, len, &h), ect);
        if (t.outer_ipv6) {
            assert_int_equal(frame[ol3 + 1] >> 4 & 3,
                             ect ? 3 : t.outer_ecn);
        } else {
            assert_int_equal(frame[ol3 + 1] & 3, ect ? 3 : t.outer_ecn);
            assert_int_equal(ipv4_sum(frame + ol3), 0xffff);
        }
        assert_int_equal(frame[h.l3_ofs + 1], inner_ecn);
    }
}

/* What the NIC took of a directly sent burst is counted as sent with no
 * wait; the rest is queued by priority, behind nothing, and a later packet
 * of a higher queue overtakes it. */
static void
test_send_direct(void **state)
{
    struct awafs_sched *s = awafs_sched_create(4, 3);
    uint8_t queues[] = { 2, 0, 3, 1, 3 };
    void *pkts[] = { PKT(2, 0), PKT(0, 0), PKT(3, 0), PKT(1, 0), PKT(3, 1) };
    uint32_t lens[] = { 100, 200, 300, 400, 500 };
    struct awafs_queue_stats st;
    void *victims[5], *out[8];
    uint64_t bytes;

    (void) state;
    /* All taken: nothing queued. */
    assert_int_equal(awafs_sched_send_direct(s, queues, pkts, lens, NULL, 5,
                                             5, 0, victims, &bytes), 0);
    assert_int_equal(bytes, 1500 + 5 * AWAFS_WIRE_OVERHEAD);
    assert_int_equal(awafs_sched_backlog(s), 0);
    awafs_sched_get_queue_stats(s, 3, &st);
    assert_int_equal(st.tx_packets, 2);
    assert_int_equal(st.tx_bytes, 800);
    assert_int_equal(st.enq_packets, 2);
    assert_int_equal(st.sojourn_max, 0);

    /* Two taken; of the three left the buffer (3) holds all. */
    assert_int_equal(awafs_sched_send_direct(s, queues, pkts, lens, NULL, 5,
                                             2, 10, victims, &bytes), 0);
    assert_int_equal(bytes, 300 + 2 * AWAFS_WIRE_OVERHEAD);
    assert_int_equal(awafs_sched_backlog(s), 3);
    /* Full: the newest of the lowest queue makes room. */
    assert_ptr_equal(awafs_sched_enqueue(s, 0, PKT(0, 1), 50), PKT(3, 1));
    assert_int_equal(awafs_sched_peek(s, out, 8, INT64_MAX, 20), 3);
    assert_ptr_equal(out[0], PKT(0, 1));
    assert_ptr_equal(out[1], PKT(1, 0));
    assert_ptr_equal(out[2], PKT(3, 0));
    awafs_sched_commit(s, 3);
    awafs_sched_get_queue_stats(s, 3, &st);
    assert_int_equal(st.tx_packets, 3);
    assert_int_equal(st.drop_packets, 1);
    assert_int_equal(st.enq_packets, 4);
    awafs_sched_get_queue_stats(s, 2, &st);
    assert_int_equal(st.tx_packets, 2);
    awafs_sched_destroy(s);
}

/* A direct send counts each packet and its bytes in its queue: bursts of
 * every queue, one queue at a time and in runs of one queue (as it counts
 * them), a queue out of range counted in the last, lengths from 60 bytes to
 * 1 MiB. */
static void
test_send_direct_counts_every_queue(void **state)
{
    enum { N = 41 };
    struct awafs_sched *s = awafs_sched_create(8, 64);
    uint64_t want_packets[8] = { 0 }, want_bytes[8] = { 0 }, total = 0;
    uint8_t queues[N];
    uint32_t lens[N];
    void *pkts[N], *victims[N];
    uint64_t bytes;

    (void) state;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            /* 8: out of range; runs of 5 in the last round. */
            queues[i] = round == 2 ? (i / 5 + 4) % 9 : (i * 5 + round) % 9;
            lens[i] = (round && i == 20 ? 1u << 20
                       : i % 7 == 0 ? (1u << 17) - 1 : 60 + i * 37);
            pkts[i] = PKT(queues[i] % 8, i);
            want_packets[queues[i] < 8 ? queues[i] : 7]++;
            want_bytes[queues[i] < 8 ? queues[i] : 7] += lens[i];
            total += lens[i];
        }
        assert_int_equal(awafs_sched_send_direct(s, queues, pkts, lens, NULL,
                                                 N, N, 0, victims, &bytes),
                         0);
    }
    for (uint32_t q = 0; q < 8; q++) {
        struct awafs_queue_stats st;

        awafs_sched_get_queue_stats(s, q, &st);
        assert_int_equal(st.tx_packets, want_packets[q]);
        assert_int_equal(st.tx_bytes, want_bytes[q]);
        total -= st.tx_bytes;
    }
    assert_int_equal(total, 0);
    awafs_sched_destroy(s);
}

/* Byte-free segments take queue 0 only within the port's budget: 1/16 of
 * its rate and a 64 KiB burst, charged each frame's length, so 1000 ACKs
 * padded to 1514 bytes put at most the burst (and what the rate refills)
 * in queue 0, the rest in the lowest queue. */
static void
test_byte_free_budget(void **state)
{
    struct awafs_tb b;
    uint64_t over = 0, q0 = 0;

    (void) state;
    /* 100 Mb/s, on a clock of 1 MHz: 781,250 bytes/s of budget. */
    awafs_byte_free_init(&b, 12500000, 1000000, 0);
    for (int i = 0; i < 1000; i++) {
        /* 1000 frames in 10 ms: 7,812 bytes refilled. */
        unsigned int q = awafs_byte_free_queue(&b, i * 10, 1514, 4, &over);

        assert_true(q == 0 || q == 3);
        q0 += q == 0 ? 1514 : 0;
    }
    assert_true(q0 <= AWAFS_BYTE_FREE_BURST + 7812 + 1514);
    assert_true(q0 >= AWAFS_BYTE_FREE_BURST - 1514);
    assert_int_equal(over, 1000 - q0 / 1514);
    /* It refills: a second later, queue 0 again. */
    assert_int_equal(awafs_byte_free_queue(&b, 1010000, 54, 4, &over), 0);
    /* An unknown rate is taken as 10 Gb/s. */
    awafs_byte_free_init(&b, 0, 1000000, 0);
    assert_int_equal(b.rate, 10000000000ULL / 8 / AWAFS_BYTE_FREE_SHARE);
}

AWAFS_UNIT_MAIN(sched)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_free_budget),
        cmocka_unit_test(test_strict_priority_and_fifo),
        cmocka_unit_test(test_byte_budget),
        cmocka_unit_test(test_full_buffer_drops_lowest_first),
        cmocka_unit_test(test_wraparound),
        cmocka_unit_test(test_burst_equals_single),
        cmocka_unit_test(test_create_limits),
        cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_token_bucket_refill_is_exact),
        cmocka_unit_test(test_token_bucket_largest_refill),
        cmocka_unit_test(test_burst_covers_the_gap),
        cmocka_unit_test(test_shaper_charges_wire_overhead),
        cmocka_unit_test(test_ecn_marking),
        cmocka_unit_test(test_ecn_marking_in_tunnels),
        cmocka_unit_test(test_ecn_modes_after_drop),
        cmocka_unit_test(test_starvation_guard),
        cmocka_unit_test(test_counters_add_up),
        cmocka_unit_test(test_send_direct),
        cmocka_unit_test(test_send_direct_counts_every_queue),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
