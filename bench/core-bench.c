/* Micro-benchmarks of the AWAFS core alone (no OVS, no DPDK):
 *
 *   per-packet    parse + classify + enqueue + peek + commit, ns/packet
 *   parse         the header parser alone, ns/packet: 64 and 1518-byte
 *                 frames, without tunnels and inside VXLAN and Geneve
 *   flow table    parse + flow key + awafs_flowtab_update() (trust=switch)
 *                 over 1024 flows in a 4096-flow table, ns/packet
 *   port lock     the datapath's work per batch (parse, classify, enqueue,
 *                 peek, commit) under one spinlock per port, done by 1 and
 *                 by 2 threads sending to the same port, ns/packet each
 *   ring          completion pushes per second, 1 and 2 producers, into a
 *                 ring that holds them all, and against a consumer
 *                 draining flat out
 *   recalc        one threshold recalculation (drain excluded), by window
 *                 size, exact and histogram windows, with percentiles and
 *                 with the FCT model's optimum (percentiles=auto)
 *   memory        bytes per port at the defaults
 *
 * Prints CSV: benchmark,variant,value,unit.  Timing is wall-clock
 * (CLOCK_MONOTONIC), best of several repetitions. */

#define _GNU_SOURCE
#include "awafs.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define N_FRAMES 256

/* A 'size'-byte (at least 64) IPv4/TCP frame with the AWAFS option for
 * 'sent' bytes. */
static size_t
make_sized_frame(uint8_t *f, uint32_t sent, size_t size)
{
    size_t ip_len = size - 14;

    memset(f, 0, size);
    f[12] = 0x08;                               /* IPv4 */
    f[14] = 0x45;
    f[16] = ip_len >> 8;                        /* Total length. */
    f[17] = ip_len;
    f[23] = 6;                                  /* TCP */
    f[34 + 12] = 7 << 4;                        /* 28-byte TCP header. */
    awafs_opt_encode(f + 54, sent, false, 0);
    return size;
}

/* A 64-byte frame of make_sized_frame(). */
static size_t
make_frame(uint8_t *f, uint32_t sent)
{
    return make_sized_frame(f, sent, 64);
}

/* 'inner', 'len' bytes, in VXLAN or in Geneve with 8 bytes of options,
 * over IPv4, into 'f'; returns the frame's length. */
static size_t
make_tunnelled(uint8_t *f, const uint8_t *inner, size_t len, bool geneve)
{
    enum { TH = 14 + 20 + 8 };                  /* The tunnel header. */
    size_t opts = geneve ? 8 : 0;
    size_t udp_len = 8 + 8 + opts + len;
    uint16_t port = geneve ? AWAFS_GENEVE_PORT : AWAFS_VXLAN_PORT;

    memset(f, 0, TH + 8 + opts);
    f[12] = 0x08;
    f[14] = 0x45;
    f[16] = (20 + udp_len) >> 8;
    f[17] = 20 + udp_len;
    f[23] = 17;                                 /* UDP */
    f[36] = port >> 8;
    f[37] = port;
    f[38] = udp_len >> 8;
    f[39] = udp_len;
    f[TH] = geneve ? opts / 4 : 0x08;           /* Options; VXLAN's I. */
    f[TH + 2] = geneve ? 0x65 : 0;              /* Ethernet in Geneve. */
    f[TH + 3] = geneve ? 0x58 : 0;
    f[TH + 6] = 1;                              /* VNI 1. */
    memcpy(f + TH + 8 + opts, inner, len);
    return TH + 8 + opts + len;
}

/* The frames every per-packet benchmark cycles through: flows that have
 * sent 0 to 100 kB. */
static void
make_frames(uint8_t frames[N_FRAMES][64])
{
    for (int i = 0; i < N_FRAMES; i++) {
        make_frame(frames[i], i * 997 % 100000);
    }
}

/* Thresholds of 10, 20, ... kB for 'n_queues' queues. */
static void
make_thresholds(struct awafs_thresholds *t, int n_queues)
{
    *t = (struct awafs_thresholds) { .n_queues = n_queues };
    for (int i = 0; i < AWAFS_MAX_THRESHOLDS; i++) {
        t->thr[i] = i < n_queues - 1 ? (uint64_t) (i + 1) * 10000
                                     : UINT64_MAX;
    }
}

/* A 1000-byte-payload IPv4/TCP frame (headers only: the rest is never
 * read) of flow 'flow' at sequence number 'seq', with an IP total length
 * that says so. */
static void
make_tcp_frame(uint8_t *f, uint32_t flow, uint32_t seq, uint8_t flags)
{
    memset(f, 0, 64);
    f[12] = 0x08;                               /* IPv4 */
    f[14] = 0x45;
    f[16] = (40 + 1000) >> 8;                   /* Total length. */
    f[17] = (40 + 1000) & 0xff;
    f[23] = 6;                                  /* TCP */
    f[26] = 10;                                 /* 10.0.x.y */
    f[28] = flow >> 8;
    f[29] = flow;
    f[30] = 10;
    f[33] = 2;
    f[34] = 0x9c;                               /* Source port 40000 + */
    f[35] = 0x40 + (flow & 0x3f);
    f[37] = 80;
    f[38] = seq >> 24;
    f[39] = seq >> 16;
    f[40] = seq >> 8;
    f[41] = seq;
    f[34 + 12] = 5 << 4;
    f[34 + 13] = flags;
}

static void
bench_flowtab(void)
{
    enum { N_FLOWS = 1024, ROUNDS = 4000 };
    static uint8_t frame[1054];
    struct awafs_flowtab *ft = awafs_flowtab_create(4096, 12345);
    struct awafs_thresholds t;
    double best = 1e9;
    uint32_t seq = 1;

    make_thresholds(&t, 4);
    for (uint32_t i = 0; i < N_FLOWS; i++) {
        struct awafs_flow_result r;
        struct awafs_flow_key key;
        struct awafs_hdr h;

        make_tcp_frame(frame, i, 0, 0x02);
        awafs_parse(frame, sizeof frame, &h, NULL);
        awafs_flow_key_from_frame(frame, sizeof frame, &h, &key);
        awafs_flowtab_update(ft, &key, &h, false, 0, 50000, &t, &r);
    }
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();

        for (int r = 0; r < ROUNDS; r++, seq += 1000) {
            for (uint32_t i = 0; i < N_FLOWS; i++) {
                struct awafs_flow_result res;
                struct awafs_flow_key key;
                struct awafs_hdr h;

                make_tcp_frame(frame, i, seq, 0x10);
                awafs_parse(frame, sizeof frame, &h, NULL);
                awafs_flow_key_from_frame(frame, sizeof frame, &h, &key);
                awafs_flowtab_update(ft, &key, &h, false, 1 + r, 50000, &t,
                                     &res);
            }
        }
        double ns = (now_s() - t0) * 1e9 / ((double) ROUNDS * N_FLOWS);
        best = ns < best ? ns : best;
    }
    printf("flow table,parse+key+update 1024 flows (4096 slots),%.2f,"
           "ns/packet\n", best);
    awafs_flowtab_destroy(ft);
}

static void
bench_per_packet(int n_queues)
{
    enum { BURST = 32, ROUNDS = 200000 };
    static uint8_t frames[N_FRAMES][64];
    struct awafs_parse_stats st = { .n = { 0 } };
    struct awafs_sched *s = awafs_sched_create(n_queues, 1024);
    struct awafs_thresholds t;
    void *out[BURST];
    double best = 1e9;

    make_thresholds(&t, n_queues);
    make_frames(frames);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();

        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < BURST; i++) {
                uint8_t *f = frames[(r * BURST + i) % N_FRAMES];
                struct awafs_hdr h;
                unsigned int q = 0;

                if (awafs_parse(f, 64, &h, &st) == AWAFS_PARSE_OK) {
                    q = awafs_classify(&t, h.bytes_sent);
                }
                awafs_sched_enqueue(s, q, f, 64);
            }
            awafs_sched_commit(s, awafs_sched_peek(s, out, BURST,
                                                   INT64_MAX, 0));
        }
        double ns = (now_s() - t0) * 1e9 / ((double) ROUNDS * BURST);
        best = ns < best ? ns : best;
    }
    printf("per-packet,%dq parse+classify+enqueue+dequeue,%.2f,ns/packet\n",
           n_queues, best);
    awafs_sched_destroy(s);
}

/* The parser alone on frames of 'size' bytes (the inner frame's, of a
 * tunnelled one: 'tunnel'), reading inside tunnels if 'ports'. */
static void
bench_parse(const char *what, size_t size, enum awafs_tunnel tunnel,
            const struct awafs_tunnel_ports *ports)
{
    enum { N = 64, ROUNDS = 100000 };
    static uint8_t frames[N][1600], inner[1600];
    struct awafs_parse_stats st = { .n = { 0 } };
    size_t len = size;
    double best = 1e9;

    for (int i = 0; i < N; i++) {
        make_sized_frame(tunnel ? inner : frames[i], i * 997, size);
        if (tunnel) {
            len = make_tunnelled(frames[i], inner, size,
                                 tunnel == AWAFS_TUNNEL_GENEVE);
        }
    }
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();

        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < N; i++) {
                struct awafs_hdr h;

                awafs_parse_tunnel(frames[i], len, ports, &h, &st);
            }
        }
        double ns = (now_s() - t0) * 1e9 / ((double) ROUNDS * N);
        best = ns < best ? ns : best;
    }
    if (st.n[AWAFS_PARSE_OK] != (uint64_t) 5 * ROUNDS * N) {
        fprintf(stderr, "parse: %s frames did not parse\n", what);
        exit(1);
    }
    printf("parse,%s %zu B on the wire%s,%.2f,ns/packet\n", what, len,
           ports ? " tunnel=auto" : " tunnel=off", best);
}

struct producer {
    struct awafs_ring *ring;
    atomic_int *go;
    int cpu;
    uint64_t n, ok;
    double seconds;
};

static void
pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *
producer_main(void *arg)
{
    struct producer *p = arg;
    double t0;

    pin(p->cpu);
    while (!atomic_load(p->go)) {
        continue;
    }
    t0 = now_s();
    for (uint64_t i = 0; i < p->n; i++) {
        p->ok += awafs_ring_push(p->ring, i, i);
    }
    p->seconds = now_s() - t0;
    return NULL;
}

/* Threads sending to one port: each takes the port's lock for a whole
 * batch, as the datapath does (netdev_dpdk_eth_send()). */
struct sender {
    pthread_spinlock_t *lock;
    struct awafs_sched *sched;
    const struct awafs_thresholds *thr;
    atomic_int *go;
    int cpu;
    uint64_t batches;
    double seconds;
};

static void *
sender_main(void *arg)
{
    enum { BURST = 32 };
    uint8_t frames[N_FRAMES][64];
    struct sender *snd = arg;
    struct awafs_parse_stats st = { .n = { 0 } };
    double t0;

    make_frames(frames);
    pin(snd->cpu);
    while (!atomic_load(snd->go)) {
        continue;
    }
    t0 = now_s();
    for (uint64_t b = 0; b < snd->batches; b++) {
        uint8_t queues[BURST];
        uint32_t lens[BURST];
        void *pkts[BURST], *victims[BURST], *out[BURST];

        pthread_spin_lock(snd->lock);
        for (int i = 0; i < BURST; i++) {
            uint8_t *f = frames[(b * BURST + i) % N_FRAMES];
            struct awafs_hdr h;

            queues[i] = (awafs_parse(f, 64, &h, &st) == AWAFS_PARSE_OK
                         ? awafs_classify(snd->thr, h.bytes_sent) : 0);
            lens[i] = 64;
            pkts[i] = f;
        }
        awafs_sched_enqueue_burst(snd->sched, queues, pkts, lens, NULL,
                                  BURST, 0, victims);
        awafs_sched_commit(snd->sched, awafs_sched_peek(snd->sched, out,
                                                        BURST, INT64_MAX, 0));
        pthread_spin_unlock(snd->lock);
    }
    snd->seconds = now_s() - t0;
    return NULL;
}

/* 'n' threads, pinned to CPUs 0 and 1, send batches to one port.  Best of
 * 3, the slower thread's ns/packet. */
static void
bench_port_lock(int n)
{
    enum { BATCHES = 2000000 };
    struct awafs_thresholds t;
    double best = 1e9;

    make_thresholds(&t, 4);
    for (int rep = 0; rep < 3; rep++) {
        struct awafs_sched *s = awafs_sched_create(4, 1024);
        pthread_spinlock_t lock;
        struct sender snd[2];
        pthread_t th[2];
        atomic_int go = 0;
        double worst = 0;

        pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
        for (int i = 0; i < n; i++) {
            snd[i] = (struct sender) { .lock = &lock, .sched = s, .thr = &t,
                                       .go = &go, .cpu = i,
                                       .batches = BATCHES };
            pthread_create(&th[i], NULL, sender_main, &snd[i]);
        }
        atomic_store(&go, 1);
        for (int i = 0; i < n; i++) {
            double ns;

            pthread_join(th[i], NULL);
            ns = snd[i].seconds * 1e9 / (BATCHES * 32.0);
            worst = ns > worst ? ns : worst;
        }
        best = worst < best ? worst : best;
        pthread_spin_destroy(&lock);
        awafs_sched_destroy(s);
    }
    printf("port lock,%d thread(s) sending to one port,%.2f,ns/packet\n",
           n, best);
}

/* 'n_producers' threads, pinned to CPUs 0 and 1, push 'pushes' each.
 * With 'drain', the main thread, pinned to the last CPU, pops flat out
 * (the worst case: every push contends with the consumer); otherwise the
 * ring holds every push (the producers' own cost).  Best of 3. */
static void
bench_ring(int n_producers, bool drain)
{
    enum { PUSHES = 4000000 };
    int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double best = 0, accepted = 0;

    for (int rep = 0; rep < 3; rep++) {
        uint32_t cap = drain ? 4096 : (uint32_t) PUSHES * n_producers;
        struct awafs_ring *r = awafs_ring_create(cap);
        struct producer prod[2];
        pthread_t th[2];
        struct awafs_ring_entry e[256];
        atomic_int go = 0;
        double rate = 0;
        uint64_t ok = 0;
        int done;

        for (int i = 0; i < n_producers; i++) {
            prod[i] = (struct producer) { .ring = r, .go = &go,
                                          .cpu = i % ncpu, .n = PUSHES };
            pthread_create(&th[i], NULL, producer_main, &prod[i]);
        }
        pin(ncpu - 1);
        atomic_store(&go, 1);
        do {
            done = 1;
            if (drain) {
                awafs_ring_pop_burst(r, e, 256);
            }
            for (int i = 0; i < n_producers; i++) {
                done &= prod[i].seconds > 0;
            }
        } while (!done);
        for (int i = 0; i < n_producers; i++) {
            pthread_join(th[i], NULL);
            rate += PUSHES / prod[i].seconds;
            ok += prod[i].ok;
        }
        rate /= n_producers;
        if (rate > best) {
            best = rate;
            accepted = 100.0 * ok / ((double) PUSHES * n_producers);
        }
        awafs_ring_destroy(r);
    }
    printf("ring,%d producer(s)%s push attempts per producer,%.1f,M/s\n",
           n_producers, drain ? " vs flat-out consumer" : "", best / 1e6);
    if (drain) {
        printf("ring,%d producer(s) vs flat-out consumer accepted (rest "
               "counted as dropped),%.1f,%%\n", n_producers, accepted);
    }
}

/* One recalculation (prune + 7 percentiles, or with 'model' the FCT
 * model's 7 thresholds at 80 % load) over a full window of 'window' samples,
 * with nothing new to drain; the drain itself is the ring's cost. */
static void
bench_recalc(uint32_t window, enum awafs_window_kind kind, bool model)
{
    struct awafs_config cfg;
    struct awafs_thresholds t;
    struct awafs_ring *ring;
    struct awafs_adapt *a;
    double best = 1e9;
    uint64_t x = 88172645463325252ull;

    awafs_config_default(&cfg, 8);
    cfg.window_kind = kind;
    cfg.window_capacity = window;
    cfg.ring_capacity = window;
    cfg.window_us = 1000 * 1000000;
    cfg.minimise_fct = model;
    if (awafs_config_check(&cfg)) {
        return;                 /* A window the core refuses: no round. */
    }
    a = awafs_adapt_create(&cfg);
    awafs_adapt_set_load(a, 0.8);
    ring = awafs_adapt_ring(a);
    for (uint32_t i = 0; i < window; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        awafs_ring_push(ring, 0, 1000 + x % 10000000);
    }
    awafs_adapt_update(a, 1, &t);
    for (int rep = 0; rep < 20; rep++) {
        double t0 = now_s();

        awafs_adapt_update(a, 2 + rep, &t);
        t0 = now_s() - t0;
        best = t0 < best ? t0 : best;
    }
    printf("recalc,%s window %u samples 8 queues%s,%.1f,us\n",
           kind == AWAFS_WINDOW_HISTOGRAM ? "histogram" : "exact",
           awafs_adapt_window_count(a), model ? " percentiles=auto" : "",
           best * 1e6);
    awafs_adapt_destroy(a);
}

int
main(void)
{
    /* Up to the exact window's largest, with the FCT model (65536) and
     * without; bench_recalc() skips what the core refuses. */
    static const uint32_t windows[] = { 1000, 16000, 65536, 1048576 };
    struct awafs_tunnel_ports ports;
    struct awafs_config cfg;

    printf("benchmark,variant,value,unit\n");
    for (int q = 2; q <= 8; q *= 2) {
        bench_per_packet(q);
    }
    ports.n = 0;
    awafs_tunnel_ports_add(&ports, AWAFS_VXLAN_PORT, AWAFS_TUNNEL_VXLAN);
    awafs_tunnel_ports_add(&ports, AWAFS_GENEVE_PORT, AWAFS_TUNNEL_GENEVE);
    for (int i = 0; i < 2; i++) {
        size_t size = i ? 1518 : 64;

        bench_parse("untunnelled", size, AWAFS_TUNNEL_NONE, NULL);
        bench_parse("untunnelled", size, AWAFS_TUNNEL_NONE, &ports);
        /* A 64-byte frame in a tunnel; 1518 bytes on the wire. */
        bench_parse("vxlan", i ? size - 50 : size, AWAFS_TUNNEL_VXLAN,
                    &ports);
        bench_parse("geneve", i ? size - 58 : size, AWAFS_TUNNEL_GENEVE,
                    &ports);
    }
    bench_flowtab();
    bench_port_lock(1);
    bench_port_lock(2);
    bench_ring(1, false);
    bench_ring(2, false);
    bench_ring(1, true);
    bench_ring(2, true);
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
        for (int model = 0; model < 2; model++) {
            bench_recalc(windows[i], AWAFS_WINDOW_EXACT, model);
            bench_recalc(windows[i], AWAFS_WINDOW_HISTOGRAM, model);
        }
    }
    awafs_config_default(&cfg, 4);
    printf("memory,exact window (defaults),%zu,bytes/port\n",
           awafs_adapt_memsize(&cfg) + awafs_sched_memsize(4, 1024));
    cfg.window_kind = AWAFS_WINDOW_HISTOGRAM;
    printf("memory,histogram window (defaults),%zu,bytes/port\n",
           awafs_adapt_memsize(&cfg) + awafs_sched_memsize(4, 1024));
    return 0;
}
