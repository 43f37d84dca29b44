/* Unit tests: the switch-side flow table (trust=switch, trust=verify). */

#include "unit.h"

#define IDLE 500
#define FIN 0x01
#define RST 0x04
#define PSH_ACK 0x18

static struct awafs_flow_key
key(uint16_t sport)
{
    struct awafs_flow_key k = { .ip_version = 4, .sport = sport,
                                .dport = 5001 };

    memcpy(k.src, "\x0a\x00\x00\x01", 4);
    memcpy(k.dst, "\x0a\x00\x00\x02", 4);
    return k;
}

static struct awafs_flow_result
seg(struct awafs_flowtab *t, uint16_t sport, uint32_t seq, uint32_t len,
    uint8_t flags, int64_t now)
{
    struct awafs_flow_key k = key(sport);
    struct awafs_flow_result r;

    awafs_flowtab_update(t, &k, seq, len, flags, -1, now, IDLE, &r);
    return r;
}

static void
test_counts_by_sequence(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64);
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

static void
test_fin_and_rst_end_the_message(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64);
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

        assert_int_equal(awafs_flowtab_sweep(t, 64, 10 * IDLE, IDLE, sizes),
                         0);
    }
    /* A new connection on the same 5-tuple counts again. */
    seg(t, 1, 5000, 0, 0x02, 10 * IDLE);
    r = seg(t, 1, 5001, 100, FIN, 10 * IDLE + 1);
    assert_int_equal(r.completed[0], 100);
    /* RST; a FIN with no data ends nothing. */
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
    struct awafs_flowtab *t = awafs_flowtab_create(64);
    struct awafs_flow_result r;
    uint64_t sizes[64];

    (void) state;
    seg(t, 1, 0, 1000, 0, 0);
    seg(t, 1, 1000, 1000, 0, 100);
    /* Exactly 'idle' later is not yet a gap. */
    r = seg(t, 1, 2000, 1000, 0, 100 + IDLE);
    assert_int_equal(r.n_completed, 0);
    assert_int_equal(r.bytes_sent, 2000);
    r = seg(t, 1, 3000, 400, 0, 100 + 2 * IDLE + 1);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 3000);
    assert_int_equal(r.bytes_sent, 0);

    /* With no next segment, the sweep finds it. */
    assert_int_equal(awafs_flowtab_sweep(t, 64, 100 + 2 * IDLE + 10, IDLE,
                                         sizes), 0);
    assert_int_equal(awafs_flowtab_sweep(t, 64, 100 + 3 * IDLE + 2, IDLE,
                                         sizes), 1);
    assert_int_equal(sizes[0], 400);
    /* Once. */
    assert_int_equal(awafs_flowtab_sweep(t, 64, 100 + 9 * IDLE, IDLE,
                                         sizes), 0);
    awafs_flowtab_destroy(t);
}

static void
test_host_completion_must_agree(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(64);
    struct awafs_flow_key k = key(1);
    struct awafs_flow_result r;

    (void) state;
    awafs_flowtab_update(t, &k, 0, 1000, 0, -1, 0, IDLE, &r);
    /* A liar claiming a 10-byte flow does not reset the count. */
    awafs_flowtab_update(t, &k, 1000, 1000, 0, 10, 1, IDLE, &r);
    assert_int_equal(r.n_completed, 0);
    awafs_flowtab_update(t, &k, 2000, 1000, 0, -1, 2, IDLE, &r);
    assert_int_equal(r.bytes_sent, 2000);
    /* An honest completion does, and the next message starts at 0. */
    awafs_flowtab_update(t, &k, 3000, 1000, 0, 4000, 3, IDLE, &r);
    assert_int_equal(r.n_completed, 1);
    assert_int_equal(r.completed[0], 4000);
    awafs_flowtab_update(t, &k, 4000, 1000, 0, -1, 4, IDLE, &r);
    assert_int_equal(r.bytes_sent, 0);
    awafs_flowtab_destroy(t);
}

static void
test_bounded_with_eviction(void **state)
{
    struct awafs_flowtab *t = awafs_flowtab_create(8);
    struct awafs_flowtab_stats st;

    (void) state;
    assert_null(awafs_flowtab_create(4));
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
    uint32_t seq;
    size_t l4, len;

    (void) state;
    len = build_frame(frame, &s, NULL, &l4);
    frame[l4 + 4] = 0x12;
    frame[l4 + 7] = 0x34;
    assert_int_equal(awafs_parse(frame, len, &h, NULL),
                     AWAFS_PARSE_NO_OPTION);
    assert_int_equal(h.payload_len, 123);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k4, &seq));
    assert_int_equal(seq, 0x12000034);
    assert_int_equal(k4.sport, 40000);
    assert_int_equal(k4.dport, 5001);
    assert_int_equal(k4.ip_version, 4);

    s.ipv6 = true;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, NULL);
    assert_true(awafs_flow_key_from_frame(frame, len, &h, &k6, &seq));
    assert_int_equal(k6.ip_version, 6);
    assert_int_equal(h.payload_len, 123);

    s.ip_proto = 17;
    len = build_frame(frame, &s, NULL, NULL);
    awafs_parse(frame, len, &h, NULL);
    assert_false(awafs_flow_key_from_frame(frame, len, &h, &k6, &seq));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_by_sequence),
        cmocka_unit_test(test_fin_and_rst_end_the_message),
        cmocka_unit_test(test_idle_gap_ends_the_previous_message),
        cmocka_unit_test(test_host_completion_must_agree),
        cmocka_unit_test(test_bounded_with_eviction),
        cmocka_unit_test(test_key_from_frames),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
