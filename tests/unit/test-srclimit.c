/* Unit tests: the per-source completion rate limit. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"
#include "awafs-private.h"

static const uint8_t HOST_A[16] = { 10, 0, 0, 1 };
static const uint8_t HOST_B[16] = { 10, 0, 0, 2 };

/* A burst, then the rate: 10/s with a burst of 3. */
static void
test_burst_then_rate(void **state)
{
    struct awafs_srclimit *l = awafs_srclimit_create(64, 10, 3, 1);
    int allowed = 0;

    (void) state;
    for (int i = 0; i < 10; i++) {
        allowed += awafs_srclimit_allow(l, HOST_A, 0);
    }
    assert_int_equal(allowed, 3);
    assert_int_equal(awafs_srclimit_limited(l), 7);
    /* One every 100 ms: over 1 s, 10 more, whatever the call rate. */
    allowed = 0;
    for (int64_t t = 1000; t <= 1000000; t += 1000) {
        allowed += awafs_srclimit_allow(l, HOST_A, t);
    }
    assert_int_equal(allowed, 10);
    /* Idle: full again, never more than the burst. */
    allowed = 0;
    for (int i = 0; i < 10; i++) {
        allowed += awafs_srclimit_allow(l, HOST_A, 60000000);
    }
    assert_int_equal(allowed, 3);
    awafs_srclimit_destroy(l);
}

/* Another source has its own bucket (with this key, another slot); a clock
 * that goes backwards adds nothing. */
static void
test_sources_apart_and_clock_steps(void **state)
{
    struct awafs_srclimit *l = awafs_srclimit_create(1024, 1, 1, 7);

    (void) state;
    assert_true(awafs_srclimit_allow(l, HOST_A, 5000000));
    assert_false(awafs_srclimit_allow(l, HOST_A, 5000000));
    assert_true(awafs_srclimit_allow(l, HOST_B, 5000000));
    assert_false(awafs_srclimit_allow(l, HOST_A, 1000));
    assert_false(awafs_srclimit_allow(l, HOST_A, 5500000));
    assert_true(awafs_srclimit_allow(l, HOST_A, 6000000));
    awafs_srclimit_destroy(l);
}

/* Sources that collide share a bucket: with one slot, all of them. */
static void
test_colliding_sources_share(void **state)
{
    struct awafs_srclimit *l = awafs_srclimit_create(1, 1, 2, 3);
    uint8_t addr[16] = { 0 };
    int allowed = 0;

    (void) state;
    for (int i = 0; i < 100; i++) {
        addr[3] = i;
        allowed += awafs_srclimit_allow(l, addr, 0);
    }
    assert_int_equal(allowed, 2);
    awafs_srclimit_destroy(l);
}

/* A busy source slows another only if it shares both of the other's
 * buckets: with 64 slots, about 1 source in 2,000 instead of 1 in 64.  Each
 * of 1,000 sources gets a table with the same key where the busy one has
 * just spent its tokens. */
static void
test_busy_source_rarely_slows_another(void **state)
{
    uint8_t addr[16] = { 192, 168 };
    int slowed = 0;

    (void) state;
    for (int i = 0; i < 1000; i++) {
        struct awafs_srclimit *l = awafs_srclimit_create(64, 1, 1, 11);

        assert_true(awafs_srclimit_allow(l, HOST_A, 0));
        assert_false(awafs_srclimit_allow(l, HOST_A, 0));
        addr[2] = i >> 8;
        addr[3] = i;
        slowed += !awafs_srclimit_allow(l, addr, 0);
        awafs_srclimit_destroy(l);
    }
    /* One bucket per source would slow about 16 of them. */
    assert_in_range(slowed, 0, 3);
}

/* Source names: stable under one key, unrelated under another. */
static void
test_source_ids_are_keyed(void **state)
{
    uint32_t k1[4], k2[4];
    uint8_t a[16] = { 10, 0, 0, 1 }, b[16] = { 10, 0, 0, 2 };
    int same = 0;

    (void) state;
    for (uint64_t seed = 0; seed < 100; seed++) {
        awafs_hash_key_init(k1, 4, seed);
        awafs_hash_key_init(k2, 4, seed + 1000);
        assert_int_equal(awafs_source_id(k1, a), awafs_source_id(k1, a));
        assert_true(awafs_source_id(k1, a) != awafs_source_id(k1, b));
        same += awafs_source_id(k1, a) == awafs_source_id(k2, a);
    }
    assert_int_equal(same, 0);
}

static void
test_create_limits(void **state)
{
    (void) state;
    assert_null(awafs_srclimit_create(0, 1, 1, 0));
    assert_null(awafs_srclimit_create(16, 0, 1, 0));
    assert_null(awafs_srclimit_create(16, 1, 0, 0));
    assert_null(awafs_srclimit_create(AWAFS_SRCLIMIT_MAX_SLOTS + 1, 1, 1, 0));
}

AWAFS_UNIT_MAIN(srclimit)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_rate),
        cmocka_unit_test(test_sources_apart_and_clock_steps),
        cmocka_unit_test(test_colliding_sources_share),
        cmocka_unit_test(test_busy_source_rarely_slows_another),
        cmocka_unit_test(test_source_ids_are_keyed),
        cmocka_unit_test(test_create_limits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
