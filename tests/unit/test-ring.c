/* Unit tests: the bounded MPSC completed-size ring. */

#ifdef HAVE_CONFIG_H
#include <config.h>             /* Built into Open vSwitch. */
#endif
#include "awafs-unit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static void
test_capacity_rounds_up(void **state)
{
    struct awafs_ring *r;

    (void) state;
    assert_null(awafs_ring_create(0));
    assert_null(awafs_ring_create(1));
    assert_null(awafs_ring_create((1u << 24) + 1));
    r = awafs_ring_create(100);
    assert_non_null(r);
    assert_int_equal(awafs_ring_capacity(r), 128);
    assert_true(awafs_ring_memsize(100) >= 128 * 24);
    awafs_ring_destroy(r);
}

static void
test_fifo_and_wraparound(void **state)
{
    struct awafs_ring *r = awafs_ring_create(8);
    struct awafs_ring_entry e[8];
    uint64_t next_push = 0, next_pop = 0;

    (void) state;
    /* Many laps with varying fill levels cross the wrap point often. */
    for (int round = 0; round < 1000; round++) {
        int n = 1 + round % 8;

        for (int i = 0; i < n; i++) {
            assert_true(awafs_ring_push(r, next_push, next_push * 10));
            next_push++;
        }
        size_t got = awafs_ring_pop_burst(r, e, 3);
        while (got) {
            for (size_t i = 0; i < got; i++) {
                assert_int_equal(e[i].ts_us, next_pop);
                assert_int_equal(e[i].size, next_pop * 10);
                next_pop++;
            }
            got = awafs_ring_pop_burst(r, e, 3);
        }
    }
    assert_int_equal(next_pop, next_push);
    assert_int_equal(awafs_ring_pushed(r), next_push);
    assert_int_equal(awafs_ring_dropped(r), 0);
    awafs_ring_destroy(r);
}

static void
test_peek_leaves_the_entry(void **state)
{
    struct awafs_ring *r = awafs_ring_create(4);
    struct awafs_ring_entry e;

    (void) state;
    assert_false(awafs_ring_peek(r, &e));
    assert_true(awafs_ring_push_from(r, 10, 100, 7));
    assert_true(awafs_ring_push(r, 20, 200));
    for (int i = 0; i < 2; i++) {
        assert_true(awafs_ring_peek(r, &e));
        assert_int_equal(e.ts_us, 10);
        assert_int_equal(e.size, 100);
        assert_int_equal(e.source, 7);
    }
    assert_int_equal(awafs_ring_pop_burst(r, &e, 1), 1);
    assert_int_equal(e.ts_us, 10);
    assert_true(awafs_ring_peek(r, &e));
    assert_int_equal(e.ts_us, 20);
    assert_int_equal(awafs_ring_pop_burst(r, &e, 4), 1);
    assert_false(awafs_ring_peek(r, &e));
    awafs_ring_destroy(r);
}

static void
test_overflow_drops_and_counts(void **state)
{
    struct awafs_ring *r = awafs_ring_create(4);
    struct awafs_ring_entry e[8];

    (void) state;
    for (int i = 0; i < 4; i++) {
        assert_true(awafs_ring_push(r, i, i));
    }
    assert_false(awafs_ring_push(r, 4, 4));
    assert_false(awafs_ring_push(r, 5, 5));
    assert_int_equal(awafs_ring_dropped(r), 2);
    /* The oldest entries survive; a freed slot takes a new push. */
    assert_int_equal(awafs_ring_pop_burst(r, e, 1), 1);
    assert_int_equal(e[0].size, 0);
    assert_true(awafs_ring_push(r, 6, 6));
    assert_int_equal(awafs_ring_pop_burst(r, e, 8), 4);
    assert_int_equal(e[0].size, 1);
    assert_int_equal(e[3].size, 6);
    assert_int_equal(awafs_ring_pop_burst(r, e, 8), 0);
    awafs_ring_destroy(r);
}

#define N_PRODUCERS 4
#define PUSHES 200000

struct producer {
    struct awafs_ring *ring;
    int id;
    bool single;                /* The only producer: awafs_ring_push_sp(). */
    uint64_t ok;
    atomic_int *start;
};

static void *
producer_main(void *arg)
{
    struct producer *p = arg;

    while (!atomic_load(p->start)) {
        continue;
    }
    for (uint64_t seq = 0; seq < PUSHES; seq++) {
        /* The size carries (producer, sequence) to check order later. */
        uint64_t size = (uint64_t) p->id << 32 | seq;

        p->ok += (p->single ? awafs_ring_push_sp(p->ring, p->id, size, 0)
                  : awafs_ring_push(p->ring, p->id, size));
    }
    return NULL;
}

/* 'n' producers (with 'single', one that uses awafs_ring_push_sp())
 * against one consumer on a small ring: nothing is lost or duplicated,
 * each producer's entries come out in its order, and every push either
 * lands or is counted as dropped. */
static void
run_producers(int n_producers, bool single)
{
    struct awafs_ring *r = awafs_ring_create(256);
    struct producer prod[N_PRODUCERS];
    pthread_t threads[N_PRODUCERS];
    int64_t last_seq[N_PRODUCERS];
    struct awafs_ring_entry e[64];
    atomic_int start = 0;
    uint64_t popped = 0, pushed_ok = 0;
    int running = n_producers;

    for (int i = 0; i < n_producers; i++) {
        prod[i] = (struct producer) { .ring = r, .id = i, .single = single,
                                      .start = &start };
        last_seq[i] = -1;
        assert_int_equal(pthread_create(&threads[i], NULL, producer_main,
                                        &prod[i]), 0);
    }
    atomic_store(&start, 1);
    for (;;) {
        size_t n = awafs_ring_pop_burst(r, e, 64);

        for (size_t i = 0; i < n; i++) {
            int id = e[i].size >> 32;
            int64_t seq = e[i].size & 0xffffffff;

            assert_true(id >= 0 && id < n_producers);
            assert_int_equal(e[i].ts_us, id);
            assert_true(seq > last_seq[id]);
            last_seq[id] = seq;
        }
        popped += n;
        if (!n && !running) {
            break;
        }
        if (!n && popped + awafs_ring_dropped(r)
                  == (uint64_t) n_producers * PUSHES) {
            running = 0;    /* All pushes done: one more pass empties it. */
        }
    }
    for (int i = 0; i < n_producers; i++) {
        pthread_join(threads[i], NULL);
        pushed_ok += prod[i].ok;
    }
    assert_int_equal(popped, pushed_ok);
    assert_int_equal(pushed_ok + awafs_ring_dropped(r),
                     (uint64_t) n_producers * PUSHES);
    assert_true(popped > 0);
    awafs_ring_destroy(r);
}

static void
test_concurrent_producers(void **state)
{
    (void) state;
    run_producers(N_PRODUCERS, false);
}

/* A ring with one producer, as each tx queue's in OVS. */
static void
test_single_producer(void **state)
{
    (void) state;
    run_producers(1, true);
}

AWAFS_UNIT_MAIN(ring)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_rounds_up),
        cmocka_unit_test(test_fifo_and_wraparound),
        cmocka_unit_test(test_peek_leaves_the_entry),
        cmocka_unit_test(test_overflow_drops_and_counts),
        cmocka_unit_test(test_concurrent_producers),
        cmocka_unit_test(test_single_producer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
