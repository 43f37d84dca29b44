/* Unit tests of the NXST_AWAFS reply encoding (ofproto-ext/awafs-ofp.c). */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <stdio.h>
#include <string.h>

#include "awafs-ofp.h"

struct kv {
    const char *key, *value;
};

static const char *
lookup(const void *aux, const char *key)
{
    for (const struct kv *kv = aux; kv->key; kv++) {
        if (!strcmp(kv->key, key)) {
            return kv->value;
        }
    }
    return NULL;
}

static void
put(void *aux, const char *key, const char *value)
{
    char *out = aux;
    size_t len = strlen(out);

    snprintf(out + len, 1024 - len, " %s=%s", key, value);
}

static size_t
encode(uint8_t *buf, size_t size, uint32_t queue_id, const struct kv *kvs)
{
    size_t len = awafs_ofp_encode_entry(NULL, 0, 7, queue_id, lookup, kvs);

    assert_true(len <= size);
    assert_int_equal(awafs_ofp_encode_entry(buf, len, 7, queue_id, lookup,
                                            kvs), len);
    return len;
}

static void
format(const uint8_t *buf, size_t len, char out[1024])
{
    struct awafs_ofp_entry e;

    out[0] = '\0';
    assert_int_equal(awafs_ofp_parse_entry(buf, len, &e), len);
    assert_int_equal(e.port_no, 7);
    awafs_ofp_format_entry(&e, put, out);
}

static void
test_port_entry_round_trip(void **state)
{
    (void) state;
    /* In qos/show's (hash) order, with keys the message does not carry and
     * values that do not parse: those are left out. */
    static const struct kv kvs[] = {
        { "percentiles", "12.5,50" }, { "mode", "adaptive" },
        { "no-such-key", "1" }, { "queues", "3" },
        { "thresholds", "10000,200000" }, { "window-ms", "soon" },
        { "trust", "lying" }, { "completions", "18446744073709551615" },
        { "tx_packets", "5" },              /* A queue's key. */
        { NULL, NULL },
    };
    uint8_t buf[512];
    char out[1024];
    size_t len = encode(buf, sizeof buf, AWAFS_OFP_PORT_ENTRY, kvs);

    /* Header, then 5 properties: 3 of one value, 2 of two. */
    assert_int_equal(len, 16 + 3 * 16 + 2 * 24);
    assert_int_equal(buf[0] << 8 | buf[1], len);
    assert_memory_equal(buf + 8, "\xff\xff\xff\xff", 4);
    /* The first property: queues (type 1), 16 bytes, value 3. */
    assert_memory_equal(buf + 16, "\x00\x01\x00\x10\0\0\0\0"
                        "\0\0\0\0\0\0\0\x03", 16);
    format(buf, len, out);
    assert_string_equal(out, " queues=3 mode=adaptive thresholds=10000,200000"
                        " percentiles=12.5,50"
                        " completions=18446744073709551615");
}

static void
test_queue_entry(void **state)
{
    (void) state;
    static const struct kv kvs[] = {
        { "tx_packets", "81" }, { "priority", "0" },
        { "backlog-bytes", "1500" }, { "mode", "static" },
        { NULL, NULL },
    };
    uint8_t buf[256];
    char out[1024];
    size_t len = encode(buf, sizeof buf, 0, kvs);

    format(buf, len, out);
    assert_string_equal(out, " priority=0 tx_packets=81 backlog-bytes=1500");
}

static void
test_too_small_buffer_writes_nothing(void **state)
{
    (void) state;
    static const struct kv kvs[] = { { "queues", "2" }, { NULL, NULL } };
    uint8_t buf[32];

    memset(buf, 0xaa, sizeof buf);
    assert_int_equal(awafs_ofp_encode_entry(buf, 31, 1, AWAFS_OFP_PORT_ENTRY,
                                            lookup, kvs), 32);
    for (size_t i = 0; i < sizeof buf; i++) {
        assert_int_equal(buf[i], 0xaa);
    }
}

static void
test_values_a_kind_does_not_take_are_skipped(void **state)
{
    (void) state;
    static const uint8_t entry[] = {
        0, 80, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
        /* queues (U64) with two values: skipped. */
        0, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
        0, 0, 0, 0, 0, 0, 0, 3,
        /* mode (ENUM) index 2 of two names: skipped. */
        0, 2, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
        /* Type 999, unknown: skipped. */
        3, 0xe7, 0, 8, 0, 0, 0, 0,
        /* buffer (U64) 1024: printed. */
        0, 14, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0,
    };
    char out[1024];

    format(entry, sizeof entry, out);
    assert_string_equal(out, " buffer=1024");
}

static void
test_malformed_entries(void **state)
{
    (void) state;
    struct awafs_ofp_entry e;
    uint8_t buf[40];

    memset(buf, 0, sizeof buf);
    assert_int_equal(awafs_ofp_parse_entry(buf, 15, &e), 0); /* Short. */
    buf[1] = 16;
    assert_int_equal(awafs_ofp_parse_entry(buf, 16, &e), 16); /* Empty. */
    buf[1] = 20;                                        /* Not 8-aligned. */
    assert_int_equal(awafs_ofp_parse_entry(buf, 40, &e), 0);
    buf[1] = 48;                                        /* Past the end. */
    assert_int_equal(awafs_ofp_parse_entry(buf, 40, &e), 0);
    buf[1] = 24;                        /* A property of length 0. */
    assert_int_equal(awafs_ofp_parse_entry(buf, 40, &e), 0);
    buf[19] = 16;                       /* ... of 16, past its entry. */
    assert_int_equal(awafs_ofp_parse_entry(buf, 40, &e), 0);
    buf[19] = 8;
    assert_int_equal(awafs_ofp_parse_entry(buf, 40, &e), 24);
}

static void
test_random_bytes_never_overrun(void **state)
{
    (void) state;
    uint8_t buf[64];
    uint32_t x = 12345;

    for (int round = 0; round < 100000; round++) {
        struct awafs_ofp_entry e;
        char out[1024] = "";

        for (size_t i = 0; i < sizeof buf; i++) {
            x = x * 1103515245 + 12345;
            buf[i] = x >> 16;
        }
        buf[0] = 0;
        buf[1] &= 0x38;
        buf[19] &= 0x38;
        if (awafs_ofp_parse_entry(buf, sizeof buf, &e)) {
            awafs_ofp_format_entry(&e, put, out);
        }
    }
}

AWAFS_UNIT_MAIN(ofp)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_entry_round_trip),
        cmocka_unit_test(test_queue_entry),
        cmocka_unit_test(test_too_small_buffer_writes_nothing),
        cmocka_unit_test(test_values_a_kind_does_not_take_are_skipped),
        cmocka_unit_test(test_malformed_entries),
        cmocka_unit_test(test_random_bytes_never_overrun),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
