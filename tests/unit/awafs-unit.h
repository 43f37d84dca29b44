/* Shared helpers for the AWAFS core unit tests (cmocka).
 *
 * Each test-NAME.c is a program of its own (make unit) and, inside Open
 * vSwitch's tree, a command of its ovstest: "ovstest test-awafs-NAME"
 * (tests/awafs.at). */

#ifndef AWAFS_UNIT_H
#define AWAFS_UNIT_H 1

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef HAVE_CONFIG_H
#include <cmocka.h>
#else
/* Inside Open vSwitch's tree the tests run in OVS's own testsuite through
 * ovstest, as OVS's tests/test-*.c do, without cmocka: this is the part of
 * cmocka's interface that they use.  A failed assertion prints where and
 * why and ends that test; the group returns the number of tests that
 * failed. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

struct CMUnitTest {
    const char *name;
    void (*test_func)(void **state);
};

#define cmocka_unit_test(F) { #F, F }

static jmp_buf awafs_unit_failed;

static inline void
awafs_unit_fail(const char *file, int line, const char *format, ...)
{
    va_list args;

    fprintf(stderr, "%s:%d: ", file, line);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    longjmp(awafs_unit_failed, 1);
}

/* Integer assertions compare as cmocka does, as uintmax_t. */
static inline void
awafs_unit_ints(bool want_equal, uintmax_t a, uintmax_t b, const char *what,
                const char *file, int line)
{
    if ((a == b) != want_equal) {
        awafs_unit_fail(file, line, "%s (%#"PRIxMAX", %#"PRIxMAX")", what,
                        a, b);
    }
}

static inline void
awafs_unit_range(uintmax_t v, uintmax_t min, uintmax_t max, const char *what,
                 const char *file, int line)
{
    if (v < min || v > max) {
        awafs_unit_fail(file, line, "%s (%#"PRIxMAX")", what, v);
    }
}

/* Runs 'test'; false if an assertion failed. */
static inline bool
awafs_unit_run_one(const struct CMUnitTest *test)
{
    void *state = NULL;

    if (setjmp(awafs_unit_failed)) {
        return false;
    }
    test->test_func(&state);
    return true;
}

static inline int
awafs_unit_run(const struct CMUnitTest *tests, size_t n)
{
    int failed = 0;

    for (size_t i = 0; i < n; i++) {
        bool ok = awafs_unit_run_one(&tests[i]);

        printf("[ %s ] %s\n", ok ? "     OK " : " FAILED ", tests[i].name);
        failed += !ok;
    }
    return failed;
}

#define assert_true(C) \
    ((C) ? (void) 0 : awafs_unit_fail(__FILE__, __LINE__, "%s", #C))
#define assert_false(C) \
    ((C) ? awafs_unit_fail(__FILE__, __LINE__, "!(%s)", #C) : (void) 0)
#define assert_int_equal(A, B) \
    awafs_unit_ints(true, A, B, #A " == " #B, __FILE__, __LINE__)
#define assert_int_not_equal(A, B) \
    awafs_unit_ints(false, A, B, #A " != " #B, __FILE__, __LINE__)
#define assert_in_range(V, MIN, MAX) \
    awafs_unit_range(V, MIN, MAX, #MIN " <= " #V " <= " #MAX, __FILE__, \
                     __LINE__)
#define assert_ptr_equal(A, B) \
    assert_true((const void *) (A) == (const void *) (B))
#define assert_ptr_not_equal(A, B) \
    assert_true((const void *) (A) != (const void *) (B))
#define assert_null(P) assert_true((P) == NULL)
#define assert_non_null(P) assert_true((P) != NULL)
#define assert_string_equal(A, B) assert_true(!strcmp(A, B))
#define assert_memory_equal(A, B, N) assert_true(!memcmp(A, B, N))
#define fail_msg(...) awafs_unit_fail(__FILE__, __LINE__, __VA_ARGS__)
#define cmocka_run_group_tests(TESTS, SETUP, TEARDOWN) \
    awafs_unit_run(TESTS, sizeof (TESTS) / sizeof (TESTS)[0])
#endif

#include "awafs.h"

/* A test's own pseudo-random numbers (xorshift32), repeatable from the seed
 * that awafs_test_srand() sets: rand() is not thread-safe, which OVS's tree
 * checks forbid. */
static uint32_t awafs_test_rand_state = 1;

static inline void
awafs_test_srand(uint32_t seed)
{
    awafs_test_rand_state = seed ? seed : 1;
}

static inline uint32_t
awafs_test_rand(void)
{
    uint32_t x = awafs_test_rand_state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    awafs_test_rand_state = x;
    return x >> 1;              /* 31 bits, as the C library's. */
}

#ifdef HAVE_CONFIG_H
#include <stdlib.h>
#include "ovstest.h"

/* The test program's entry point, declared as "AWAFS_UNIT_MAIN(NAME) { ...
 * return cmocka_run_group_tests(...); }". */
#define AWAFS_UNIT_MAIN(NAME)                                           \
    static int awafs_unit_##NAME(void);                                 \
    static void                                                         \
    awafs_unit_##NAME##_main(int argc OVS_UNUSED,                       \
                             char *argv[] OVS_UNUSED)                   \
    {                                                                   \
        exit(awafs_unit_##NAME() ? EXIT_FAILURE : EXIT_SUCCESS);        \
    }                                                                   \
    OVSTEST_REGISTER("test-awafs-" #NAME, awafs_unit_##NAME##_main)     \
    static int                                                          \
    awafs_unit_##NAME(void)
#else
#define AWAFS_UNIT_MAIN(NAME) int main(void)
#endif

/* What build_frame() puts in a frame.  Zero means "the usual". */
struct frame_spec {
    int n_vlans;                /* 0, 1, 2 or more tags. */
    bool ipv6;
    uint8_t ip_proto;           /* Default TCP. */
    const uint8_t *tcp_opts;    /* Raw TCP options, padded by the caller. */
    size_t tcp_opts_len;        /* Multiple of 4. */
    size_t payload_len;
    size_t eth_padding;         /* Bytes after the IP packet. */
};

static inline void
put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

/* Builds an Ethernet frame into 'buf' (>= 1600 bytes) and returns its length.
 * Offsets of the IP and TCP headers go to '*l3' and '*l4' if nonnull. */
static inline size_t
build_frame(uint8_t *buf, const struct frame_spec *s, size_t *l3, size_t *l4)
{
    size_t p = 12, ip, tcp, l4_len;
    uint8_t proto = s->ip_proto ? s->ip_proto : 6;

    memset(buf, 0, 1600);
    memcpy(buf, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
    for (int i = 0; i < s->n_vlans; i++) {
        put16(buf + p, i == 0 && s->n_vlans > 1 ? 0x88a8 : 0x8100);
        put16(buf + p + 2, 100 + i);
        p += 4;
    }
    put16(buf + p, s->ipv6 ? 0x86dd : 0x0800);
    ip = p + 2;
    tcp = ip + (s->ipv6 ? 40 : 20);
    l4_len = 20 + s->tcp_opts_len + s->payload_len;
    if (s->ipv6) {
        buf[ip] = 0x60;
        put16(buf + ip + 4, l4_len);
        buf[ip + 6] = proto;
        buf[ip + 7] = 64;
    } else {
        buf[ip] = 0x45;
        put16(buf + ip + 2, 20 + l4_len);
        buf[ip + 8] = 64;
        buf[ip + 9] = proto;
    }
    put16(buf + tcp, 40000);
    put16(buf + tcp + 2, 5001);
    buf[tcp + 12] = (uint8_t) (((20 + s->tcp_opts_len) / 4) << 4);
    buf[tcp + 13] = 0x18;       /* PSH|ACK */
    if (s->tcp_opts_len) {
        memcpy(buf + tcp + 20, s->tcp_opts, s->tcp_opts_len);
    }
    if (l3) {
        *l3 = ip;
    }
    if (l4) {
        *l4 = tcp;
    }
    return tcp + l4_len + s->eth_padding;
}

/* What encap() wraps a frame in.  Zero means "the usual". */
struct tunnel_spec {
    enum awafs_tunnel type;     /* VXLAN (default) or GENEVE. */
    bool outer_ipv6;
    int outer_vlans;            /* 0 or 1. */
    uint32_t vni;
    size_t geneve_opts_len;     /* Multiple of 4, at most 252. */
    uint16_t dport;             /* 0: the type's IANA port. */
    uint8_t outer_ecn;          /* The outer IP header's ECN field. */
};

/* Writes into 'buf' the 'inner_len' bytes at 'inner' encapsulated as 't'
 * says, as OVS's userspace tunnels do (UDP checksum 0 over IPv4), and
 * returns the frame's length; the offset of the outer IP header goes to
 * '*outer_l3' if nonnull.  'buf' may not overlap 'inner'. */
static inline size_t
encap(uint8_t *buf, const uint8_t *inner, size_t inner_len,
      const struct tunnel_spec *t, size_t *outer_l3)
{
    bool geneve = t->type == AWAFS_TUNNEL_GENEVE;
    size_t opts_len = geneve ? t->geneve_opts_len : 0;
    size_t p = 12, ip, udp, th, udp_len;

    memcpy(buf, "\x02\x00\x00\x00\x00\x03\x02\x00\x00\x00\x00\x04", 12);
    if (t->outer_vlans) {
        put16(buf + p, 0x8100);
        put16(buf + p + 2, 7);
        p += 4;
    }
    put16(buf + p, t->outer_ipv6 ? 0x86dd : 0x0800);
    ip = p + 2;
    udp = ip + (t->outer_ipv6 ? 40 : 20);
    th = udp + 8;
    udp_len = 8 + 8 + opts_len + inner_len;
    memset(buf + ip, 0, th + 8 - ip);
    if (t->outer_ipv6) {
        buf[ip] = 0x60 | (t->outer_ecn >> 4);
        buf[ip + 1] = (uint8_t) (t->outer_ecn << 4);
        put16(buf + ip + 4, udp_len);
        buf[ip + 6] = 17;
        buf[ip + 7] = 64;
    } else {
        buf[ip] = 0x45;
        buf[ip + 1] = t->outer_ecn;
        put16(buf + ip + 2, 20 + udp_len);
        buf[ip + 8] = 64;
        buf[ip + 9] = 17;
    }
    put16(buf + udp, 50000);
    put16(buf + udp + 2, t->dport ? t->dport
                         : geneve ? AWAFS_GENEVE_PORT : AWAFS_VXLAN_PORT);
    put16(buf + udp + 4, udp_len);
    buf[th] = geneve ? (uint8_t) (opts_len / 4) : 0x08;
    if (geneve) {
        put16(buf + th + 2, 0x6558);
    }
    buf[th + 4] = (uint8_t) (t->vni >> 16);
    buf[th + 5] = (uint8_t) (t->vni >> 8);
    buf[th + 6] = (uint8_t) t->vni;
    memset(buf + th + 8, 0xab, opts_len);
    memcpy(buf + th + 8 + opts_len, inner, inner_len);
    if (outer_l3) {
        *outer_l3 = ip;
    }
    return th + 8 + opts_len + inner_len;
}

/* The standard ports: VXLAN at 4789, Geneve at 6081. */
static inline struct awafs_tunnel_ports
standard_tunnel_ports(void)
{
    struct awafs_tunnel_ports ports = { .n = 0 };

    awafs_tunnel_ports_add(&ports, AWAFS_VXLAN_PORT, AWAFS_TUNNEL_VXLAN);
    awafs_tunnel_ports_add(&ports, AWAFS_GENEVE_PORT, AWAFS_TUNNEL_GENEVE);
    return ports;
}

#endif /* unit.h */
