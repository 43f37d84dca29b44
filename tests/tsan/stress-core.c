/* ThreadSanitizer stress of the AWAFS core's concurrent parts, used as in
 * Open vSwitch:
 *
 *   - completion rings: producer threads (PMDs) each push completions into
 *     a ring of their own (one per tx queue, without compare-and-swap), and
 *     others into one shared ring (multi-producer), while one consumer (the
 *     "awafs" thread) takes them all into the window and recomputes the
 *     thresholds;
 *   - scheduler backlog: one thread at a time queues and sends under a lock
 *     (the port's QoS lock) while other threads read the backlog without it
 *     (every PMD's drain hook).
 *
 * Built with -fsanitize=thread (`make tsan`); exits non-zero if a count does
 * not add up: every push is in the window or counted as dropped, and every
 * packet queued was sent.
 *
 * usage: stress-core [PUSHES_PER_PRODUCER] */

#include "awafs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N_PRODUCERS 3           /* Into the shared ring. */
#define N_SINGLE 2              /* Each into its own ring. */
#define N_READERS 2

static atomic_int producers_left = N_PRODUCERS + N_SINGLE;
static struct awafs_ring *own_rings[N_SINGLE];
static atomic_bool sched_done;

static int64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

struct producer {
    struct awafs_ring *ring;
    bool single;                /* The ring's only producer. */
    uint64_t n;
};

static void *
producer_main(void *arg)
{
    struct producer *p = arg;

    for (uint64_t i = 0; i < p->n; i++) {
        if (p->single) {
            awafs_ring_push_sp(p->ring, now_us(), 1000 + i % 50000, 0);
        } else {
            awafs_ring_push(p->ring, now_us(), 1000 + i % 50000);
        }
    }
    atomic_fetch_sub(&producers_left, 1);
    return NULL;
}

static void *
consumer_main(void *arg)
{
    struct awafs_adapt *adapt = arg;
    struct awafs_thresholds t;

    while (atomic_load(&producers_left)) {
        awafs_adapt_collect(adapt, own_rings, N_SINGLE);
        awafs_adapt_update(adapt, now_us(), &t);
    }
    awafs_adapt_collect(adapt, own_rings, N_SINGLE);    /* What is left. */
    awafs_adapt_update(adapt, now_us(), &t);
    return NULL;
}

struct sender {
    struct awafs_sched *sched;
    pthread_mutex_t *lock;
    uint64_t batches;
    uint64_t queued, sent;
};

static void *
sender_main(void *arg)
{
    struct sender *s = arg;
    static int pkts[32];

    for (uint64_t b = 0; b < s->batches; b++) {
        void *out[32];
        size_t n;

        pthread_mutex_lock(s->lock);
        for (int i = 0; i < 32; i++) {
            if (!awafs_sched_enqueue(s->sched, (b + i) % 4, &pkts[i], 64)) {
                s->queued++;
            }
        }
        n = awafs_sched_peek(s->sched, out, 32, INT64_MAX, 0);
        awafs_sched_commit(s->sched, b % 3 ? n : n / 2);
        pthread_mutex_unlock(s->lock);
    }
    pthread_mutex_lock(s->lock);
    while (awafs_sched_backlog(s->sched)) {
        void *out[32];

        awafs_sched_commit(s->sched, awafs_sched_peek(s->sched, out, 32,
                                                      INT64_MAX, 0));
    }
    pthread_mutex_unlock(s->lock);
    for (unsigned int q = 0; q < 4; q++) {
        struct awafs_queue_stats st;

        awafs_sched_get_queue_stats(s->sched, q, &st);
        s->sent += st.tx_packets;
    }
    atomic_store(&sched_done, true);
    return NULL;
}

static void *
reader_main(void *arg)
{
    struct awafs_sched *sched = arg;
    uint64_t sum = 0;

    while (!atomic_load(&sched_done)) {
        sum += awafs_sched_backlog(sched);
    }
    return (void *) (uintptr_t) (sum & 1);
}

int
main(int argc, char *argv[])
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_t prod[N_PRODUCERS + N_SINGLE], cons, send, read[N_READERS];
    struct producer p[N_PRODUCERS + N_SINGLE];
    struct awafs_adapt_stats st;
    struct awafs_adapt *adapt;
    struct awafs_config cfg;
    struct awafs_ring *ring;
    struct sender s;
    uint64_t pushed, dropped;
    int bad = 0;

    awafs_config_default(&cfg, 4);
    cfg.ring_capacity = 1024;   /* Small: producers also overflow it. */
    adapt = awafs_adapt_create(&cfg);
    ring = awafs_adapt_ring(adapt);
    for (int i = 0; i < N_SINGLE; i++) {
        own_rings[i] = awafs_ring_create(1024);
    }
    s = (struct sender) { .sched = awafs_sched_create(4, 64), .lock = &lock,
                          .batches = n / 32 };

    pthread_create(&cons, NULL, consumer_main, adapt);
    for (int i = 0; i < N_PRODUCERS + N_SINGLE; i++) {
        bool single = i >= N_PRODUCERS;

        p[i] = (struct producer) {
            .ring = single ? own_rings[i - N_PRODUCERS] : ring,
            .single = single, .n = n };
        pthread_create(&prod[i], NULL, producer_main, &p[i]);
    }
    pthread_create(&send, NULL, sender_main, &s);
    for (int i = 0; i < N_READERS; i++) {
        pthread_create(&read[i], NULL, reader_main, s.sched);
    }
    for (int i = 0; i < N_PRODUCERS + N_SINGLE; i++) {
        pthread_join(prod[i], NULL);
    }
    pthread_join(cons, NULL);
    pthread_join(send, NULL);
    for (int i = 0; i < N_READERS; i++) {
        pthread_join(read[i], NULL);
    }

    awafs_adapt_get_stats(adapt, &st);
    pushed = awafs_ring_pushed(ring);
    dropped = awafs_ring_dropped(ring);
    for (int i = 0; i < N_SINGLE; i++) {
        pushed += awafs_ring_pushed(own_rings[i]);
        dropped += awafs_ring_dropped(own_rings[i]);
        awafs_ring_destroy(own_rings[i]);
    }
    printf("rings: %d producers x %llu pushes: %llu into the window, "
           "%llu dropped (ring full), %llu threshold updates\n",
           N_PRODUCERS + N_SINGLE, (unsigned long long) n,
           (unsigned long long) st.samples_in,
           (unsigned long long) dropped, (unsigned long long) st.updates);
    printf("scheduler: %llu packets queued, %llu sent, backlog read "
           "lock-free by %d threads\n", (unsigned long long) s.queued,
           (unsigned long long) s.sent, N_READERS);
    if (pushed + dropped != (N_PRODUCERS + N_SINGLE) * n
        || st.samples_in != pushed) {
        fprintf(stderr, "ring counts do not add up: pushed %llu dropped %llu "
                "window %llu\n", (unsigned long long) pushed,
                (unsigned long long) dropped,
                (unsigned long long) st.samples_in);
        bad = 1;
    }
    if (s.queued != s.sent) {
        fprintf(stderr, "scheduler: %llu queued but %llu sent\n",
                (unsigned long long) s.queued, (unsigned long long) s.sent);
        bad = 1;
    }
    awafs_sched_destroy(s.sched);
    awafs_adapt_destroy(adapt);
    return bad;
}
