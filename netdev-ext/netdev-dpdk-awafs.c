/*
 * Copyright (c) 2026 AWAFS developers.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_config.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include "awafs.h"
#include "bitmap.h"
#include "dp-packet.h"
#include "netdev-dpdk-qos.h"
#include "netdev-provider.h"
#include "odp-netlink.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/list.h"
#include "openvswitch/vlog.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "random.h"
#include "smap.h"
#include "timeval.h"
#include "unixctl.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_dpdk_awafs);

/* AWAFS: an MLFQ egress scheduler with adaptive demotion thresholds.
 *
 * The port has k strict-priority queues.  Each packet goes to the queue that
 * its flow's bytes-sent selects (the end host carries it in a TCP option, see
 * lib/awafs.h); headerless frames go to 'default-queue'.  The k-1 thresholds
 * are recomputed every 'interval-ms' by the "awafs" thread as percentiles of
 * the sizes of the flows that completed on the port in the last 'window-ms'
 * and published to the PMD threads by RCU.  Queued packets leave in priority
 * order, at most at 'max-rate', through the queueing QoS send path.
 *
 * With karuna=on (Karuna's mix-flow scheduling, seed 003), queue 0 is
 * reserved for flows with a deadline, and the others share the queues below
 * it: flows of known size split by their size at thresholds {beta}
 * ('size-thresholds', or 'size-percentiles' of the completed sizes of such
 * flows, a second window), flows of unknown size sieved by bytes sent at
 * the thresholds above ({alpha}, from their own completions only).  A flow's
 * type and size come from the Karuna word of its header (docs/header.md).
 * With aging=on, a message that suffers its kappa-th retransmission timeout
 * (seen by the switch's flow table) is split again by what it has left
 * (known size) or restarts at the top of the sieve (unknown size). */

#define AWAFS_MIN_BURST (2 * (1518 + AWAFS_WIRE_OVERHEAD)) /* Two frames. */
#define AWAFS_LINK_BURST_US 50          /* Shaped to the link: its least */
#define AWAFS_LINK_BURST_MAX_US 1000    /* and its most burst. */
#define AWAFS_HISTORY_LEN 64
#define AWAFS_SWEEP_ENTRIES 256         /* Flow-table entries per sweep. */
#define AWAFS_SWEEP_INTERVAL_US 1000
#define AWAFS_SRCLIMIT_SOURCES 1024     /* Buckets of completion-rate-limit. */
#define AWAFS_TUNNELS_REFRESH_US 1000000 /* Tunnel ports looked up. */
#define AWAFS_FCT_ASSUMED_LOAD 0.5      /* A port without a rate. */

static unixctl_cb_func awafs_unixctl_history;

/* Whose byte counts a port believes. */
enum awafs_trust {
    AWAFS_TRUST_HOST,           /* The end host's AWAFS option. */
    AWAFS_TRUST_SWITCH,         /* The switch's own count per 5-tuple. */
    AWAFS_TRUST_VERIFY,         /* The host's, never below the switch's. */
};

/* Flows that retransmitted ("tardy"), seen in the switch's flow table. */
enum awafs_tardy {
    AWAFS_TARDY_OFF,
    AWAFS_TARDY_TFS,            /* To queue 0. */
    AWAFS_TARDY_TFS_PLUS,       /* To queue 0 below 'tardy-limit' bytes. */
};

/* The keys of other_config, from their table (netdev-dpdk-awafs-keys.def). */
enum awafs_key_type {
    AWAFS_KEY_UINT,             /* An integer in [min, max]. */
    AWAFS_KEY_ENUM,             /* One of 'choices'. */
    AWAFS_KEY_BYTES,            /* Byte counts, one per threshold. */
    AWAFS_KEY_PCT,              /* Percentiles, one per threshold. */
};

enum awafs_key_id {
#define AWAFS_QOS_KEY(ID, NAME, TYPE, MIN, MAX, CHOICES, DEFAULT, DOC) \
    AWAFS_KEY_##ID,
#include "netdev-dpdk-awafs-keys.def"
#undef AWAFS_QOS_KEY
    AWAFS_N_KEYS
};

#define AWAFS_CHOICES(...) ((const char *const []) { __VA_ARGS__, NULL })

static const struct awafs_key {
    const char *name;
    enum awafs_key_type type;
    unsigned long long int min, max;
    const char *const *choices;     /* AWAFS_KEY_ENUM: NULL-terminated. */
    const char *def;                /* As written; not a number: computed. */
} awafs_keys[AWAFS_N_KEYS] = {
#define AWAFS_QOS_KEY(ID, NAME, TYPE, MIN, MAX, CHOICES, DEFAULT, DOC) \
    [AWAFS_KEY_##ID] = { NAME, AWAFS_KEY_##TYPE, MIN, MAX, CHOICES, DEFAULT },
#include "netdev-dpdk-awafs-keys.def"
#undef AWAFS_QOS_KEY
};

struct awafs_qos_params {
    uint64_t key[AWAFS_N_KEYS]; /* Each key's value, an ENUM's index. */
    uint32_t n_queues;          /* The port's queues. */
    struct awafs_config core;   /* The sieve's: the queues below queue 0
                                 * with 'karuna', else all of them. */
    bool karuna;
    struct awafs_config beta;   /* With 'karuna': sizes known in advance. */
    uint32_t ring_capacity;     /* Of each instance's completion rings (the
                                 * windows have none of their own). */
    bool aging;                 /* With 'karuna' and the flow table. */
    uint32_t aging_min, aging_max;      /* Timeouts (kappa). */
    int64_t rto_min_us;         /* Silence before a timeout. */
    uint64_t max_rate;          /* bit/s; 0: as fast as the NIC takes. */
    uint32_t buffer;            /* Packets, all queues together. */
    uint32_t ecn_threshold;     /* Packets of backlog; 0: off. */
    bool ecn_per_queue;         /* Backlog of the packet's queue, else all. */
    uint32_t max_wait_us;       /* Starvation guard; 0: off. */
    uint32_t default_queue;     /* For frames without the header. */
    enum awafs_trust trust;
    int64_t idle_us;            /* Message boundary for the switch's count. */
    uint32_t flow_table_size;   /* Flows the switch counts, if not 'host'. */
    uint32_t completion_rate_limit; /* Per source, per second; 0: none. */
    enum awafs_tardy tardy;
    uint64_t tardy_limit;       /* Bytes, for AWAFS_TARDY_TFS_PLUS. */
    bool tunnel;                /* Reads inside 'awafs_tunnels'. */
};

struct awafs_update {
    long long int wall_ms;
    struct awafs_thresholds thr;
    double load;                /* percentiles=auto: the model's load */
    double mean_us;             /* and mean FCT; negative if unknown. */
};

/* Guards the list of awafs instances and their recalculation state. */
static struct ovs_mutex awafs_mutex = OVS_MUTEX_INITIALIZER;

/* The UDP ports that tunnel=auto reads inside: VXLAN's and Geneve's
 * standard ports and those of the switch's vxlan and geneve interfaces,
 * looked up again every AWAFS_TUNNELS_REFRESH_US and published by RCU
 * (awafs_tunnels_refresh()). */
static OVSRCU_TYPE(struct awafs_tunnel_ports *) awafs_tunnels;
static struct ovs_mutex awafs_tunnels_mutex = OVS_MUTEX_INITIALIZER;

/* The datapath's copy of a port's parameters, replaced as a whole (RCU) by
 * an in-place reconfiguration; 'seq' tells the instances to apply it. */
struct awafs_dp_params {
    struct awafs_qos_params p;
    uint64_t seq;
};

/* One scheduler instance per tx queue of the port, as Linux's 'mq' qdisc has
 * a child per tx queue (see struct dpdk_qos_ops): only the thread that may
 * use the tx queue uses it, so it takes no lock, and nothing in it is written
 * by another thread.  Other threads read its counters, for display.  Each is
 * allocated on cache lines of its own. */
struct awafs_txq {
    struct awafs_sched *sched;
    struct awafs_ring *ring;            /* Completions, to 'adapt'. */
    struct awafs_ring *beta_ring;       /* Known sizes', to 'beta_adapt'. */
    struct awafs_flowtab *flows;        /* Unless trust=host. */
    struct awafs_srclimit *srclimit;    /* If completion-rate-limit. */
    uint64_t params_seq;                /* Of the parameters it applies. */
    int64_t credit;                     /* Bytes leased from the bucket. */
    int64_t refill;                     /* Lease again below this. */
    unsigned int tb_gen;                /* Of the bucket it leased from. */
    int64_t next_sweep_us;
    struct awafs_parse_stats parse;
    uint64_t completions;
    uint64_t cut_through;               /* Packets sent without queueing. */
    uint64_t pinned[AWAFS_MAX_QUEUES];  /* Packets a set_queue action put. */
    struct awafs_karuna_stats karuna;   /* With 'karuna'. */
    struct awafs_tb byte_free;          /* Byte-free segments' budget. */
    uint64_t link_rate;                 /* Without max-rate (bytes/s). */
    int byte_free_share;                /* Instances that share the port's
                                         * budgets (byte-free, queue 0). */
    uint64_t byte_free_over;            /* Beyond it: the lowest queue. */
    uint64_t padded;                    /* Padded frames: the lowest queue. */
    bool weigh_sources;                 /* Completions need their source. */
    uint64_t held_tick;                 /* Of the last dequeue that left
                                         * packets held; 0 if none. */
    struct awafs_gaps gaps;             /* How long they waited for the
                                         * next (awafs_qos_dequeue()). */

    /* The classification of the batch being queued or, between
     * qos_enqueue() and qos_sent_direct(), sent directly. */
    struct awafs_batch {
        uint8_t queues[NETDEV_MAX_BURST];
        uint8_t ecn[NETDEV_MAX_BURST];  /* ECN-capable, if marking. */
        uint8_t ip_version[NETDEV_MAX_BURST];
        uint16_t l3_ofs[NETDEV_MAX_BURST];
        uint32_t lens[NETDEV_MAX_BURST];
        /* The sizes that frames report (awafs_qos_count_reports()). */
        uint32_t flow_sizes[NETDEV_MAX_BURST];
        uint32_t prev_sizes[NETDEV_MAX_BURST];
    } batch;
};

struct awafs_qos {
    struct qos_conf qos_conf;
    long long int created;              /* time_msec(). */

    /* The main thread's parameters, which it writes under 'awafs_mutex',
     * under which the recalculation thread reads them; the datapath reads
     * 'dp_params'. */
    struct awafs_qos_params params;
    OVSRCU_TYPE(struct awafs_dp_params *) dp_params;
    uint32_t link_mbps;                 /* The port's, 0 if unknown. */

    /* The instances, one per tx queue; replaced by the main thread while no
     * thread sends on the port, under 'awafs_mutex', which the
     * recalculation thread holds to read their counters
     * (qos_set_n_txq()). */
    struct awafs_txq **txqs;
    int n_txq;
    size_t mem_bytes;                   /* The core's memory, all of it. */

    /* The instances' completion rings, in the same order, for the
     * recalculation thread (awafs_adapt_collect()); 'beta_rings' with
     * 'karuna'.  Replaced with 'txqs'. */
    struct awafs_ring **rings;
    struct awafs_ring **beta_rings;

    /* Shared by the instances: the thresholds (RCU, from the recalculation
     * thread), which they only read. */
    uint32_t source_key[4];             /* Secret: awafs_source_id(). */
    OVSRCU_TYPE(struct awafs_thresholds *) thr;
    OVSRCU_TYPE(struct awafs_thresholds *) beta_thr;    /* If 'karuna'. */

    /* The port's rate: one token bucket that the instances lease credit
     * from, 'lease' bytes at a time, under 'tb_lock', which a lease tries
     * and never waits for (awafs_txq_budget()).  'tb_gen' changes whenever
     * the bucket is set anew; 'shaped' is false without a rate.  The only
     * memory that several PMD threads write: once a lease, not per
     * packet. */
    atomic_bool shaped;
    atomic_uint tb_gen;
    rte_spinlock_t tb_lock;
    struct awafs_tb tb;
    uint64_t lease;

    /* Recalculation state, under 'awafs_mutex'. */
    struct ovs_list list_node;          /* In 'awafs_list'. */
    struct awafs_adapt *adapt;
    struct awafs_adapt *beta_adapt;     /* If 'karuna'. */
    int64_t next_run_us OVS_GUARDED_BY(awafs_mutex);
    uint64_t runs OVS_GUARDED_BY(awafs_mutex);
    uint64_t late_runs OVS_GUARDED_BY(awafs_mutex); /* > 10 % late. */
    int64_t max_late_us OVS_GUARDED_BY(awafs_mutex);
    int64_t sum_late_us OVS_GUARDED_BY(awafs_mutex);
    int64_t max_calc_us OVS_GUARDED_BY(awafs_mutex);
    struct awafs_update history[AWAFS_HISTORY_LEN]
        OVS_GUARDED_BY(awafs_mutex);
    uint64_t n_history OVS_GUARDED_BY(awafs_mutex);
    /* The port's load for percentiles=auto (awafs_load_update()). */
    struct awafs_load load OVS_GUARDED_BY(awafs_mutex);
    /* Shaped to the link, the bucket's burst in microseconds, sized to how
     * long the instances leave packets held between visits
     * (awafs_qos_size_link_burst()). */
    uint32_t link_burst_us OVS_GUARDED_BY(awafs_mutex);
    struct awafs_gaps gaps_seen OVS_GUARDED_BY(awafs_mutex);
    uint64_t held_gap_us[2] OVS_GUARDED_BY(awafs_mutex); /* This round's
                                                          * and the last's. */
};

static struct ovs_list awafs_list OVS_GUARDED_BY(awafs_mutex)
    = OVS_LIST_INITIALIZER(&awafs_list);

/* TSC cycles per microsecond, set before the first port is made
 * (awafs_qos_construct()): rte_get_tsc_hz() is a call, and dividing by it
 * one more division, on every batch that ends a message. */
static uint64_t awafs_tsc_per_us;

/* The AWAFS clock, in microseconds: the TSC, which the PMD threads read
 * without a system call. */
static int64_t
awafs_tsc_to_us(uint64_t tsc)
{
    return tsc / awafs_tsc_per_us;
}

static int64_t
awafs_now_us(void)
{
    return awafs_tsc_to_us(rte_get_tsc_cycles());
}

/* A batch's time, read once, on first use: the TSC costs tens of cycles in
 * a VM, and a batch needs the time for completions and for byte-free
 * segments' budget, or not at all. */
struct awafs_clock {
    uint64_t tsc;               /* 0 until read. */
    int64_t us;                 /* -1 until computed. */
};

#define AWAFS_CLOCK_INIT { .tsc = 0, .us = -1 }

static uint64_t
awafs_clock_tsc(struct awafs_clock *c)
{
    if (!c->tsc) {
        c->tsc = rte_get_tsc_cycles();
    }
    return c->tsc;
}

static int64_t
awafs_clock_us(struct awafs_clock *c)
{
    if (c->us < 0) {
        c->us = awafs_tsc_to_us(awafs_clock_tsc(c));
    }
    return c->us;
}

/* The scheduler's clock for queued packets: the TSC in units of 1024 cycles
 * (a third of a microsecond at 3 GHz), read without a division. */
#define AWAFS_TICK_SHIFT 10

static uint32_t
awafs_us_to_ticks(uint64_t us)
{
    return MIN(us * awafs_tsc_per_us >> AWAFS_TICK_SHIFT,
               UINT32_MAX);
}

static uint64_t
awafs_ticks_to_us(uint64_t ticks)
{
    return (ticks << AWAFS_TICK_SHIFT) / awafs_tsc_per_us;
}

static struct awafs_qos *
awafs_qos_cast(const struct qos_conf *conf)
{
    return CONTAINER_OF(conf, struct awafs_qos, qos_conf);
}

/* ---- Configuration ---- */

static char *
awafs_range_error(const struct awafs_key *k, const char *s,
                  unsigned long long int max)
{
    return xasprintf("%s: \"%s\" is not an integer between %llu and %llu",
                     k->name, s, k->min, max);
}

/* "KEY: "S" is neither "a" nor "b"", or "is not "a", "b" or "c"". */
static char *
awafs_choice_error(const struct awafs_key *k, const char *s)
{
    struct ds msg = DS_EMPTY_INITIALIZER;
    size_t n = 0;

    while (k->choices[n]) {
        n++;
    }
    ds_put_format(&msg, "%s: \"%s\" is %s", k->name, s,
                  n == 2 ? "neither " : "not ");
    for (size_t i = 0; i < n; i++) {
        ds_put_format(&msg, "%s\"%s\"",
                      (!i ? "" : i < n - 1 ? ", " : n == 2 ? " nor " : " or "),
                      k->choices[i]);
    }
    return ds_steal_cstr(&msg);
}

/* Parses every UINT and ENUM key of 'details' into 'value' (an ENUM as the
 * index of its choice), in the table's order; an absent key takes its
 * default, except a UINT whose default is computed, which is left alone.
 * Returns an error message or NULL. */
static char *
awafs_parse_scalars(const struct smap *details,
                    uint64_t value[AWAFS_N_KEYS])
{
    for (size_t i = 0; i < AWAFS_N_KEYS; i++) {
        const struct awafs_key *k = &awafs_keys[i];
        const char *s = smap_get(details, k->name);
        unsigned long long int v;
        size_t c;

        switch (k->type) {
        case AWAFS_KEY_UINT:
            if (!s) {
                if (str_to_ullong(k->def, 10, &v)) {
                    value[i] = v;
                }
            } else if (!str_to_ullong(s, 10, &v) || v < k->min
                       || v > k->max) {
                return awafs_range_error(k, s, k->max);
            } else {
                value[i] = v;
            }
            break;
        case AWAFS_KEY_ENUM:
            s = s ? s : k->def;
            for (c = 0; k->choices[c] && strcmp(s, k->choices[c]); c++) {
                continue;
            }
            if (!k->choices[c]) {
                return awafs_choice_error(k, s);
            }
            value[i] = c;
            break;
        case AWAFS_KEY_BYTES:
        case AWAFS_KEY_PCT:
            break;              /* Their count depends on other keys. */
        }
    }
    return NULL;
}

/* The name of the choice that ENUM key 'id' has in 'p'. */
static const char *
awafs_key_choice(const struct awafs_qos_params *p, enum awafs_key_id id)
{
    return awafs_keys[id].choices[p->key[id]];
}

static bool
awafs_key_is(const struct awafs_qos_params *p, enum awafs_key_id id,
             const char *choice)
{
    return !strcmp(awafs_key_choice(p, id), choice);
}

/* Refuses UINT key 'id', if 'details' sets it, above 'max', a bound that
 * another key sets. */
static char *
awafs_key_at_most(const struct smap *details,
                  const struct awafs_qos_params *p, enum awafs_key_id id,
                  uint64_t max)
{
    const char *s = smap_get(details, awafs_keys[id].name);

    return (s && p->key[id] > max
            ? awafs_range_error(&awafs_keys[id], s, max) : NULL);
}

/* Whether list key 'id' configures the thresholds of flows of known size
 * (karuna=on), not the sieve's. */
static bool
awafs_key_is_size(enum awafs_key_id id)
{
    return id == AWAFS_KEY_SIZE_THRESHOLDS || id == AWAFS_KEY_SIZE_PERCENTILES;
}

/* The byte counts that BYTES key 'id' sets in 'cfg'. */
static uint64_t *
awafs_key_bytes(struct awafs_config *cfg, enum awafs_key_id id)
{
    return (id == AWAFS_KEY_MIN_THRESHOLDS ? cfg->min_thr
            : id == AWAFS_KEY_MAX_THRESHOLDS ? cfg->max_thr
            : cfg->init_thr);
}

/* Parses list key 'id' of 'details', if set, into its thresholds in 'p':
 * 'n' byte counts or percentiles in (0, 100), kept in 1/1000 %. */
static char *
awafs_parse_list(const struct smap *details, struct awafs_qos_params *p,
                 enum awafs_key_id id, uint32_t n)
{
    const struct awafs_key *k = &awafs_keys[id];
    struct awafs_config *cfg = awafs_key_is_size(id) ? &p->beta : &p->core;
    const char *s = smap_get(details, k->name);
    char *copy, *save_ptr = NULL, *msg = NULL;
    uint32_t i = 0;

    if (!s) {
        return NULL;
    }
    copy = xstrdup(s);
    for (char *tok = strtok_r(copy, ", ", &save_ptr); tok;
         tok = strtok_r(NULL, ", ", &save_ptr), i++) {
        unsigned long long int v;
        uint32_t milli;
        double d;

        if (msg || i >= n) {
            continue;           /* Only counting, for the message below. */
        } else if (k->type == AWAFS_KEY_BYTES) {
            if (!str_to_ullong(tok, 10, &v) || v < k->min || v > k->max) {
                msg = xasprintf("%s: \"%s\" is not a byte count (%llu to "
                                "%llu)", k->name, tok, k->min, k->max);
            } else {
                awafs_key_bytes(cfg, id)[i] = v;
            }
        } else if (!str_to_double(tok, &d) || !(d > k->min && d < k->max)
                   || !(milli = d * 1000 + 0.5) || milli >= k->max * 1000) {
            msg = xasprintf("%s: \"%s\" is not a percentile in (%llu, %llu)",
                            k->name, tok, k->min, k->max);
        } else {
            cfg->pct_milli[i] = milli;
        }
    }
    if (!msg && i != n) {
        msg = xasprintf("%s: %"PRIu32" queues need %"PRIu32" values, got "
                        "%"PRIu32, k->name, n + 1, n, i);
    }
    free(copy);
    return msg;
}

/* Parses 'details' into 'p': the keys' values, then what they mean.
 * Returns NULL if valid, otherwise a malloc()'d message. */
static char *
awafs_qos_parse(const struct smap *details, struct awafs_qos_params *p)
{
    const struct smap_node *node;
    const char *core_msg;
    uint32_t sieve;
    char *msg;

    SMAP_FOR_EACH (node, details) {
        size_t i;

        for (i = 0; i < AWAFS_N_KEYS; i++) {
            if (!strcmp(node->key, awafs_keys[i].name)) {
                break;
            }
        }
        if (i == AWAFS_N_KEYS) {
            return xasprintf("unknown key \"%s\"", node->key);
        }
    }

    memset(p, 0, sizeof *p);
    msg = awafs_parse_scalars(details, p->key);
    if (msg) {
        return msg;
    }
#define AWAFS_PARSE(CALL)   \
    do {                    \
        msg = (CALL);       \
        if (msg) {          \
            return msg;     \
        }                   \
    } while (0)
#define KEY(ID) (p->key[AWAFS_KEY_##ID])

    p->n_queues = KEY(QUEUES);
    p->karuna = awafs_key_is(p, AWAFS_KEY_KARUNA, "on");
    if (p->karuna && p->n_queues < 3) {
        return xasprintf("karuna: %"PRIu32" queues cannot hold the queue "
                         "reserved for deadline flows and two for the others "
                         "(queues must be at least 3)", p->n_queues);
    }
    /* With karuna, the sieve has the queues below the deadline queue. */
    sieve = p->n_queues - p->karuna;
    awafs_config_default(&p->core, sieve);
    awafs_config_default(&p->beta, sieve);
    AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_THRESHOLDS,
                                 sieve - 1));
    /* Bounds of the learned thresholds: shown only if set. */
    AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_MIN_THRESHOLDS,
                                 sieve - 1));
    AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_MAX_THRESHOLDS,
                                 sieve - 1));
    KEY(MIN_THRESHOLDS) = smap_get(details, "min-thresholds") != NULL;
    KEY(MAX_THRESHOLDS) = smap_get(details, "max-thresholds") != NULL;
    if (!strcmp(smap_get_def(details, "percentiles", ""), "auto")) {
        bool known;

        /* The thresholds that minimise the FCT model (lib/awafs.h). */
        if (p->karuna) {
            return xstrdup("percentiles: \"auto\" cannot go with "
                           "karuna=on");
        }
        p->key[AWAFS_KEY_PERCENTILES] = 1;
        p->core.minimise_fct = true;
        /* The key's choices are the core's names of its models. */
        known = awafs_fct_model_from_string(
            awafs_key_choice(p, AWAFS_KEY_OBJECTIVE), &p->core.fct_model);
        ovs_assert(known);
        p->core.short_size = KEY(SHORT_SIZE);
        if (p->core.fct_model != AWAFS_FCT_MLFQ_SHORT
            && smap_get(details, "short-size")) {
            return xstrdup("short-size: only with objective=short");
        }
    } else if (smap_get(details, "objective")) {
        return xstrdup("objective: only with percentiles=auto");
    } else if (smap_get(details, "short-size")) {
        return xstrdup("short-size: only with objective=short");
    } else {
        AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_PERCENTILES,
                                     sieve - 1));
    }
    if (p->karuna) {
        AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_SIZE_THRESHOLDS,
                                     sieve - 1));
        AWAFS_PARSE(awafs_parse_list(details, p, AWAFS_KEY_SIZE_PERCENTILES,
                                     sieve - 1));
    } else if (smap_get(details, "size-thresholds")
               || smap_get(details, "size-percentiles")) {
        return xstrdup("size-thresholds, size-percentiles: only with "
                       "karuna=on");
    }

    p->core.adaptive = awafs_key_is(p, AWAFS_KEY_MODE, "adaptive");
    /* The histogram window is the default: fixed memory at any completion
     * rate and a recalculation that does not grow with the window (see the
     * AWAFS benchmark report). */
    p->core.window_kind = (awafs_key_is(p, AWAFS_KEY_WINDOW_TYPE, "histogram")
                           ? AWAFS_WINDOW_HISTOGRAM : AWAFS_WINDOW_EXACT);
    p->core.weigh_sources = awafs_key_is(p, AWAFS_KEY_WINDOW_WEIGHT,
                                         "source");
    p->core.window_us = KEY(WINDOW_MS) * 1000;
    p->core.interval_us = KEY(INTERVAL_MS) * 1000;
    p->core.window_capacity = KEY(WINDOW_CAPACITY);
    p->ring_capacity = KEY(COMPLETION_RING_SIZE);
    p->core.ring_capacity = 0;
    AWAFS_PARSE(awafs_key_at_most(details, p, AWAFS_KEY_MIN_SAMPLES,
                                  p->core.window_capacity));
    p->core.min_samples = KEY(MIN_SAMPLES);

    p->max_rate = KEY(MAX_RATE);
    if (p->max_rate && p->max_rate < 8) {
        /* The shaper meters bytes: below one a second, it meters none. */
        return xasprintf("max-rate: %"PRIu64" bit/s is less than a byte a "
                         "second (0: shaped to the link)", p->max_rate);
    }
    p->buffer = KEY(BUFFER);
    AWAFS_PARSE(awafs_key_at_most(details, p, AWAFS_KEY_ECN_THRESHOLD,
                                  p->buffer));
    p->ecn_threshold = KEY(ECN_THRESHOLD);
    p->ecn_per_queue = awafs_key_is(p, AWAFS_KEY_ECN_MODE, "queue");
    p->max_wait_us = KEY(MAX_WAIT_US);
    /* The size of what a frame without the header belongs to is unknown:
     * at the top, one bulk sender without the agent (or any UDP flood)
     * would own the port. */
    if (!smap_get(details, "default-queue")) {
        KEY(DEFAULT_QUEUE) = p->n_queues - 1;
    }
    AWAFS_PARSE(awafs_key_at_most(details, p, AWAFS_KEY_DEFAULT_QUEUE,
                                  p->n_queues - 1));
    p->default_queue = KEY(DEFAULT_QUEUE);
    if (p->karuna && !p->default_queue) {
        return xstrdup("default-queue: queue 0 is reserved for deadline "
                       "flows with karuna=on");
    }

    p->trust = (awafs_key_is(p, AWAFS_KEY_TRUST, "host") ? AWAFS_TRUST_HOST
                : awafs_key_is(p, AWAFS_KEY_TRUST, "switch")
                ? AWAFS_TRUST_SWITCH : AWAFS_TRUST_VERIFY);
    /* 'idle-us' is longer than Linux's 40 ms delayed-ACK timer, which can
     * pause a sender after a PSH segment; request/response boundaries do
     * not wait for it (lib/awafs-flowtab.c). */
    p->idle_us = KEY(IDLE_US);
    p->flow_table_size = KEY(FLOW_TABLE_SIZE);
    p->completion_rate_limit = KEY(COMPLETION_RATE_LIMIT);

    p->tardy = (awafs_key_is(p, AWAFS_KEY_TARDY, "off") ? AWAFS_TARDY_OFF
                : awafs_key_is(p, AWAFS_KEY_TARDY, "tfs") ? AWAFS_TARDY_TFS
                : AWAFS_TARDY_TFS_PLUS);
    if (p->tardy != AWAFS_TARDY_OFF && p->trust == AWAFS_TRUST_HOST) {
        return xasprintf("tardy: \"%s\" needs trust=switch or trust=verify "
                         "(only the switch's flow table sees retransmissions)",
                         awafs_key_choice(p, AWAFS_KEY_TARDY));
    }
    if (p->tardy != AWAFS_TARDY_OFF && p->karuna) {
        return xasprintf("tardy: \"%s\" cannot go with karuna=on, which "
                         "reserves queue 0 for deadline flows",
                         awafs_key_choice(p, AWAFS_KEY_TARDY));
    }
    p->tardy_limit = KEY(TARDY_LIMIT);
    p->tunnel = awafs_key_is(p, AWAFS_KEY_TUNNEL, "auto");

    p->aging = awafs_key_is(p, AWAFS_KEY_AGING, "on");
    if (p->aging && !p->karuna) {
        return xstrdup("aging: needs karuna=on");
    }
    if (p->aging && p->trust == AWAFS_TRUST_HOST) {
        return xstrdup("aging: needs trust=switch or trust=verify (only the "
                       "switch's flow table sees timeouts)");
    }
    /* Karuna's kappa: uniform in [2, 10] per flow by default. */
    p->aging_min = KEY(AGING_MIN_TIMEOUTS);
    p->aging_max = KEY(AGING_MAX_TIMEOUTS);
    if (p->aging_min > p->aging_max) {
        return xasprintf("aging-min-timeouts: %"PRIu32" is above "
                         "aging-max-timeouts (%"PRIu32")", p->aging_min,
                         p->aging_max);
    }
    p->rto_min_us = KEY(RTO_MIN_US);
#undef KEY
#undef AWAFS_PARSE

    /* The known sizes' window is the sieve's, with its own thresholds. */
    awafs_config_share_window(&p->beta, &p->core);
    p->beta.ring_capacity = 0;
    core_msg = awafs_config_check(&p->core);
    if (!core_msg && p->karuna) {
        core_msg = awafs_config_check(&p->beta);
        if (core_msg) {
            return xasprintf("size-%s", core_msg);
        }
    }
    return core_msg ? xstrdup(core_msg) : NULL;
}

/* Whether 'a' and 'b' (of the same queue count) have the same percentiles
 * and thresholds. */
static bool
awafs_thresholds_config_equal(const struct awafs_config *a,
                              const struct awafs_config *b)
{
    uint32_t n = a->n_queues - 1;

    return (!memcmp(a->pct_milli, b->pct_milli, n * sizeof a->pct_milli[0])
            && !memcmp(a->init_thr, b->init_thr, n * sizeof a->init_thr[0])
            && !memcmp(a->min_thr, b->min_thr, n * sizeof a->min_thr[0])
            && !memcmp(a->max_thr, b->max_thr, n * sizeof a->max_thr[0]));
}

/* Whether 'a' and 'b' configure the same: everything else in them follows
 * from their keys. */
static bool
awafs_params_equal(const struct awafs_qos_params *a,
                   const struct awafs_qos_params *b)
{
    return (!memcmp(a->key, b->key, sizeof a->key)
            && awafs_thresholds_config_equal(&a->core, &b->core)
            && (!a->karuna
                || awafs_thresholds_config_equal(&a->beta, &b->beta)));
}

/* The flow table's limit for tardy flows (awafs_flowtab_set_tardy()). */
static uint64_t
awafs_tardy_limit(const struct awafs_qos_params *p)
{
    return (p->tardy == AWAFS_TARDY_TFS ? UINT64_MAX
            : p->tardy == AWAFS_TARDY_TFS_PLUS ? p->tardy_limit
            : 0);
}

/* Timeouts and aging in the flow table 'flows' (lib/awafs-flowtab.c). */
static void
awafs_qos_set_aging(struct awafs_flowtab *flows,
                    const struct awafs_qos_params *p)
{
    bool ok = awafs_flowtab_set_aging(flows, p->rto_min_us,
                                      p->aging ? p->aging_min : 0,
                                      p->aging ? p->aging_max : 0);

    ovs_assert(ok);             /* awafs_qos_parse() checked them. */
}

/* The port's rate in bit/s: 'max-rate', else the link's; 0 if unknown. */
static uint64_t
awafs_qos_rate(const struct awafs_qos *aq)
{
    return (aq->params.max_rate ? aq->params.max_rate
            : (uint64_t) aq->link_mbps * 1000000);
}

/* The bucket's burst: 1 ms of 'max-rate' or, without it, 'link_burst_us' of
 * the link's speed, so that the NIC's ring holds no more than that and the
 * priorities act on the rest (an unshaped port would fill the NIC's ring
 * first: thousands of descriptors, all FIFO). */
static uint64_t
awafs_qos_burst(const struct awafs_qos *aq)
    OVS_REQUIRES(awafs_mutex)
{
    uint64_t rate = awafs_qos_rate(aq) / 8;

    return MAX(awafs_burst_for_gap(rate, (aq->params.max_rate ? 1000
                                          : aq->link_burst_us),
                                   0, AWAFS_LINK_BURST_MAX_US),
               AWAFS_MIN_BURST);
}

/* Sets the lease for the bucket's burst, under 'tb_lock': an eighth of the
 * burst, so that several instances share the burst, but at least
 * AWAFS_MIN_BURST, so that a lease is rare. */
static void
awafs_qos_set_lease(struct awafs_qos *aq)
{
    aq->lease = MAX(aq->tb.burst / 8, AWAFS_MIN_BURST);
}

/* Sets up the port's bucket anew (awafs_qos_burst()). */
static void
awafs_qos_init_tb(struct awafs_qos *aq)
    OVS_REQUIRES(awafs_mutex)
{
    uint64_t rate = awafs_qos_rate(aq) / 8;
    unsigned int gen;

    rte_spinlock_lock(&aq->tb_lock);
    awafs_tb_init(&aq->tb, rate, awafs_qos_burst(aq), rte_get_tsc_hz(),
                  rte_get_tsc_cycles());
    awafs_qos_set_lease(aq);
    atomic_read_relaxed(&aq->tb_gen, &gen);
    atomic_store_relaxed(&aq->tb_gen, gen + 1);
    atomic_store_relaxed(&aq->shaped, rate != 0);
    rte_spinlock_unlock(&aq->tb_lock);
}

static void
awafs_qos_set_link_speed(struct qos_conf *conf, uint32_t mbps)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);

    ovs_mutex_lock(&awafs_mutex);
    if (aq->link_mbps != mbps) {
        aq->link_mbps = mbps;
        if (!aq->params.max_rate) {
            awafs_qos_init_tb(aq);
        }
    }
    ovs_mutex_unlock(&awafs_mutex);
}

/* Shaped to the link, sizes the bucket's burst to the longest the instances
 * left packets held between two visits in this round or the last, within
 * [AWAFS_LINK_BURST_US, AWAFS_LINK_BURST_MAX_US]: a PMD iteration longer
 * than the burst's time would otherwise idle the link for the rest of it
 * (awafs_burst_for_gap()).  The price is a longer FIFO in the NIC's ring
 * after the port was idle.  The bucket keeps its tokens, and the
 * instances their leases. */
static void
awafs_qos_size_link_burst(struct awafs_qos *aq)
    OVS_REQUIRES(awafs_mutex)
{
    struct awafs_gaps sum;
    uint64_t gap_us;

    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < aq->n_txq; i++) {
        awafs_gaps_sum(&sum, &aq->txqs[i]->gaps);
    }
    aq->held_gap_us[1] = aq->held_gap_us[0];
    aq->held_gap_us[0] = awafs_ticks_to_us(awafs_gaps_longest(&sum,
                                                              &aq->gaps_seen));
    aq->gaps_seen = sum;
    if (aq->params.max_rate || !aq->link_mbps) {
        return;
    }
    gap_us = MAX(aq->held_gap_us[0], aq->held_gap_us[1]);
    gap_us = MIN(MAX(gap_us, AWAFS_LINK_BURST_US), AWAFS_LINK_BURST_MAX_US);
    if (gap_us != aq->link_burst_us) {
        aq->link_burst_us = gap_us;
        rte_spinlock_lock(&aq->tb_lock);
        awafs_tb_set_burst(&aq->tb, awafs_qos_burst(aq));
        awafs_qos_set_lease(aq);
        rte_spinlock_unlock(&aq->tb_lock);
    }
}

/* What instance 'tq' may send now, in bytes: its credit, which it tops up
 * from the port's bucket when it runs low, if no other instance is doing so
 * at that moment.  An instance's credit is at most a lease, so the
 * instances together never send more than the bucket allows plus one lease
 * each.  The clock is read only to top up (the TSC costs tens of cycles in
 * a VM, and an unshaped port needs none). */
static int64_t
awafs_txq_budget(struct awafs_qos *aq, struct awafs_txq *tq)
{
    unsigned int gen;
    bool shaped;

    atomic_read_relaxed(&aq->shaped, &shaped);
    if (!shaped) {
        return INT64_MAX;
    }
    atomic_read_relaxed(&aq->tb_gen, &gen);
    if (OVS_UNLIKELY(gen != tq->tb_gen)) {
        tq->tb_gen = gen;           /* A new bucket: old leases are void. */
        tq->credit = 0;
        tq->refill = 1;
    }
    if (tq->credit < tq->refill && rte_spinlock_trylock(&aq->tb_lock)) {
        int64_t avail = awafs_tb_budget(&aq->tb, rte_get_tsc_cycles());

        if (avail > 0) {
            int64_t take = MIN(avail, (int64_t) aq->lease - tq->credit);

            awafs_tb_consume(&aq->tb, take);
            tq->credit += take;
        }
        tq->refill = aq->lease / 2;
        rte_spinlock_unlock(&aq->tb_lock);
    }
    return tq->credit;
}

/* Sets the budgets of instance 'tq' for parameters 'p', each its share of
 * the port's: byte-free segments' (awafs_byte_free_queue()) and, with a
 * flow table, each source's in queue 0 and of byte-free segments. */
static void
awafs_txq_init_budgets(struct awafs_txq *tq,
                       const struct awafs_qos_params *p)
{
    uint64_t rate = p->max_rate ? p->max_rate / 8 : tq->link_rate;

    awafs_byte_free_init(&tq->byte_free, rate / tq->byte_free_share,
                         rte_get_tsc_hz(), rte_get_tsc_cycles());
    if (tq->flows) {
        rate = (rate ? rate : AWAFS_UNKNOWN_PORT_RATE) / tq->byte_free_share;
        awafs_flowtab_set_queue0_rate(tq->flows, rate / AWAFS_QUEUE0_SHARE);
        awafs_flowtab_set_byte_free_rate(
            tq->flows,
            rate / AWAFS_BYTE_FREE_SHARE / AWAFS_BYTE_FREE_SOURCE_SHARE);
    }
}

/* Applies the datapath parameters 'dp' to instance 'tq', if it has not. */
static void
awafs_txq_apply(struct awafs_txq *tq, const struct awafs_dp_params *dp)
{
    const struct awafs_qos_params *p = &dp->p;

    if (OVS_LIKELY(tq->params_seq == dp->seq)) {
        return;
    }
    tq->params_seq = dp->seq;
    tq->weigh_sources = p->core.weigh_sources;
    awafs_sched_set_ecn(tq->sched, p->ecn_threshold, p->ecn_per_queue);
    awafs_sched_set_max_wait(tq->sched, awafs_us_to_ticks(p->max_wait_us));
    awafs_txq_init_budgets(tq, p);
    if (tq->flows) {
        awafs_flowtab_set_tardy(tq->flows, awafs_tardy_limit(p));
        awafs_qos_set_aging(tq->flows, p);
    }
}

/* Publishes 'aq->params' to the datapath. */
static void
awafs_qos_publish_params(struct awafs_qos *aq)
{
    struct awafs_dp_params *old, *dp = xmalloc(sizeof *dp);

    old = ovsrcu_get_protected(struct awafs_dp_params *, &aq->dp_params);
    dp->p = aq->params;
    dp->seq = old ? old->seq + 1 : 1;
    ovsrcu_set(&aq->dp_params, dp);
    ovsrcu_postpone(free, old);
}

/* Publishes 't' to the PMD threads: the sieve's thresholds or, if
 * 'sizes', those of the known sizes (karuna). */
static void
awafs_qos_publish(struct awafs_qos *aq, bool sizes,
                  const struct awafs_thresholds *t)
    OVS_REQUIRES(awafs_mutex)
{
    struct awafs_thresholds *old;

    if (sizes) {
        old = ovsrcu_get_protected(struct awafs_thresholds *, &aq->beta_thr);
        ovsrcu_set(&aq->beta_thr, xmemdup(t, sizeof *t));
    } else {
        old = ovsrcu_get_protected(struct awafs_thresholds *, &aq->thr);
        ovsrcu_set(&aq->thr, xmemdup(t, sizeof *t));
    }
    ovsrcu_postpone(free, old);
}

/* ---- Tunnels ---- */

/* The kind of tunnel that the switch's interface 'vport' receives, if one
 * that awafs_parse_tunnel() reads, and its UDP port into '*port'. */
static enum awafs_tunnel
awafs_vport_tunnel(const struct netdev *vport, uint16_t *port)
{
    const struct netdev_tunnel_config *cfg = netdev_get_tunnel_config(vport);
    const char *type = netdev_get_type(vport);

    if (!cfg || !cfg->dst_port) {
        return AWAFS_TUNNEL_NONE;
    }
    *port = ntohs(cfg->dst_port);
    if (!strcmp(type, "vxlan")) {
        /* VXLAN-GPE has a header of its own. */
        return (cfg->exts & (1 << OVS_VXLAN_EXT_GPE) ? AWAFS_TUNNEL_NONE
                : AWAFS_TUNNEL_VXLAN);
    } else if (!strcmp(type, "geneve")) {
        return AWAFS_TUNNEL_GENEVE;
    }
    return AWAFS_TUNNEL_NONE;
}

/* Looks up the tunnel ports (see 'awafs_tunnels') and publishes them if
 * they changed. */
static void
awafs_tunnels_refresh(void)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 60);
    struct awafs_tunnel_ports ports, *old;
    struct netdev **vports;
    size_t n_vports;

    memset(&ports, 0, sizeof ports);
    awafs_tunnel_ports_add(&ports, AWAFS_VXLAN_PORT, AWAFS_TUNNEL_VXLAN);
    awafs_tunnel_ports_add(&ports, AWAFS_GENEVE_PORT, AWAFS_TUNNEL_GENEVE);
    vports = netdev_get_vports(&n_vports);
    for (size_t i = 0; i < n_vports; i++) {
        uint16_t port;
        enum awafs_tunnel type = awafs_vport_tunnel(vports[i], &port);

        if (type != AWAFS_TUNNEL_NONE
            && !awafs_tunnel_ports_add(&ports, port, type)) {
            VLOG_WARN_RL(&rl, "%s: more than %d tunnel ports, awafs does "
                         "not read inside this one's frames",
                         netdev_get_name(vports[i]), AWAFS_TUNNEL_MAX_PORTS);
        }
        netdev_close(vports[i]);
    }
    free(vports);

    ovs_mutex_lock(&awafs_tunnels_mutex);
    old = ovsrcu_get_protected(struct awafs_tunnel_ports *, &awafs_tunnels);
    if (!old || memcmp(old, &ports, sizeof ports)) {
        ovsrcu_set(&awafs_tunnels, xmemdup(&ports, sizeof ports));
        ovsrcu_postpone(free, old);
    }
    ovs_mutex_unlock(&awafs_tunnels_mutex);
}

/* ---- The recalculation thread ---- */

static void awafs_qos_queue_stats(const struct awafs_qos *, uint32_t q,
                                  struct awafs_queue_stats *);

/* A time in the FCT model's byte times in microseconds at the port's rate,
 * or -1 without a rate. */
static double
awafs_qos_byte_times_us(const struct awafs_qos *aq, double byte_times)
{
    uint64_t rate = awafs_qos_rate(aq);

    return rate ? byte_times * 8 * 1e6 / rate : -1;
}

/* The port's load for the FCT model (awafs_load_update()), from the wire
 * bytes its queues sent and dropped; without a rate,
 * AWAFS_FCT_ASSUMED_LOAD. */
static double
awafs_qos_measure_load(struct awafs_qos *aq, int64_t now)
    OVS_REQUIRES(awafs_mutex)
{
    uint64_t rate = awafs_qos_rate(aq), bytes = 0;

    if (!rate) {
        aq->load.load = AWAFS_FCT_ASSUMED_LOAD;
        return aq->load.load;
    }
    for (uint32_t q = 0; q < aq->params.n_queues; q++) {
        struct awafs_queue_stats qs;

        awafs_qos_queue_stats(aq, q, &qs);
        bytes += awafs_queue_wire_bytes(&qs);
    }
    return awafs_load_update(&aq->load, now, bytes, rate,
                             aq->params.core.window_us);
}

/* Moves the completions in the instances' rings into the windows. */
static void
awafs_qos_collect(struct awafs_qos *aq)
    OVS_REQUIRES(awafs_mutex)
{
    awafs_adapt_collect(aq->adapt, aq->rings, aq->n_txq);
    if (aq->beta_adapt) {
        awafs_adapt_collect(aq->beta_adapt, aq->beta_rings, aq->n_txq);
    }
}

static void
awafs_qos_recalc(struct awafs_qos *aq, int64_t now)
    OVS_REQUIRES(awafs_mutex)
{
    int64_t interval = aq->params.core.interval_us;
    int64_t late = now - aq->next_run_us;
    struct awafs_thresholds t;
    int64_t calc;

    aq->runs++;
    aq->sum_late_us += late;
    aq->max_late_us = MAX(aq->max_late_us, late);
    if (late * 10 > interval) {
        aq->late_runs++;
    }

    if (aq->params.core.minimise_fct) {
        awafs_adapt_set_load(aq->adapt, awafs_qos_measure_load(aq, now));
    }
    awafs_qos_collect(aq);
    awafs_qos_size_link_burst(aq);
    if (awafs_adapt_update(aq->adapt, now, &t)) {
        struct awafs_fct_plan plan;
        struct awafs_update *u;

        awafs_qos_publish(aq, false, &t);
        u = &aq->history[aq->n_history++ % AWAFS_HISTORY_LEN];
        u->wall_ms = time_wall_msec();
        u->thr = t;
        u->load = u->mean_us = -1;
        if (awafs_adapt_get_plan(aq->adapt, &plan)) {
            u->load = aq->load.load;
            u->mean_us = awafs_qos_byte_times_us(aq, plan.mean);
        }
    }
    if (aq->beta_adapt && awafs_adapt_update(aq->beta_adapt, now, &t)) {
        awafs_qos_publish(aq, true, &t);
    }
    calc = awafs_now_us() - now;
    aq->max_calc_us = MAX(aq->max_calc_us, calc);

    /* Keep the phase: the next round is one interval after this one was
     * due, unless this one was more than an interval late. */
    aq->next_run_us += interval;
    if (aq->next_run_us <= now) {
        aq->next_run_us = now + interval;
    }
}

static void *
awafs_main(void *arg OVS_UNUSED)
{
    int64_t next_tunnels_us = 0;

    pthread_detach(pthread_self());

    for (;;) {
        int64_t now = awafs_now_us();
        /* Look at the list at least every 10 ms, for new instances. */
        int64_t next = now + 10 * 1000;
        bool ran;

        if (now >= next_tunnels_us) {
            awafs_tunnels_refresh();
            next_tunnels_us = now + AWAFS_TUNNELS_REFRESH_US;
        }
        /* One instance's round per hold of the mutex, which qos/show and
         * reconfiguration take too: each waits for at most one round
         * (bounded by the window's size: awafs_config_check()), not for
         * every port due.  A round moves its instance's next run past
         * 'now', so each runs once. */
        do {
            struct awafs_qos *aq;

            ran = false;
            ovs_mutex_lock(&awafs_mutex);
            LIST_FOR_EACH (aq, list_node, &awafs_list) {
                if (now >= aq->next_run_us) {
                    awafs_qos_recalc(aq, now);
                    ran = true;
                    break;
                }
                next = MIN(next, aq->next_run_us);
            }
            ovs_mutex_unlock(&awafs_mutex);
        } while (ran);

        now = awafs_now_us();
        if (next > now) {
            /* Quiesces RCU while asleep. */
            xnanosleep((next - now) * 1000);
        }
    }
    return NULL;
}

/* ---- dpdk_qos_ops ---- */

/* Packets that the awafs configurations other than 'cur' may hold: their
 * buffer in each of their instances. */
static uint64_t
awafs_buffers_except(const struct qos_conf *cur)
{
    const struct awafs_qos *aq;
    uint64_t n = 0;

    ovs_mutex_lock(&awafs_mutex);
    LIST_FOR_EACH (aq, list_node, &awafs_list) {
        if (&aq->qos_conf != cur) {
            n += (uint64_t) aq->params.buffer * MAX(aq->n_txq, 1);
        }
    }
    ovs_mutex_unlock(&awafs_mutex);
    return n;
}

/* The core's memory for parameters 'p' with 'n_txq' instances: the
 * windows, shared, and per instance a scheduler, completion rings, a flow
 * table and a source limit.  SIZE_MAX if out of range. */
static size_t
awafs_params_memsize(const struct awafs_qos_params *p, int n_txq)
{
    const struct awafs_port_mem each = {
        .n_queues = p->n_queues,
        .buffer = p->buffer,
        .flow_table_size = (p->trust != AWAFS_TRUST_HOST
                            ? p->flow_table_size : 0),
        .srclimit_slots = (p->completion_rate_limit
                           ? AWAFS_SRCLIMIT_SOURCES : 0),
    };
    const struct awafs_port_mem shared = {
        .core = &p->core,
        .beta = p->karuna ? &p->beta : NULL,
        .n_queues = p->n_queues,
        .buffer = 1,
    };
    size_t one = awafs_port_memsize(&each);
    size_t all = awafs_port_memsize(&shared);

    n_txq = MAX(n_txq, 1);
    if (one == SIZE_MAX || all == SIZE_MAX) {
        return SIZE_MAX;
    }
    one += awafs_ring_memsize(p->ring_capacity) * (p->karuna ? 2 : 1);
    if (one > SIZE_MAX / 2 / n_txq) {
        return SIZE_MAX;
    }
    return all - awafs_sched_memsize(p->n_queues, 1) + one * n_txq;
}

/* Memory that the awafs configurations other than 'cur' hold. */
static size_t
awafs_memory_except(const struct qos_conf *cur)
{
    const struct awafs_qos *aq;
    size_t n = 0;

    ovs_mutex_lock(&awafs_mutex);
    LIST_FOR_EACH (aq, list_node, &awafs_list) {
        if (&aq->qos_conf != cur) {
            n += aq->mem_bytes;
        }
    }
    ovs_mutex_unlock(&awafs_mutex);
    return n;
}

/* NULL if parameters 'p' with 'n_txq' instances fit the memory a port may
 * use and what the other ports leave, checked before anything is
 * allocated; otherwise a message for the log. */
static char *
awafs_memory_check_params(const struct qos_conf *cur,
                          const struct awafs_qos_params *p, int n_txq)
{
    char why[256];

    if (awafs_memory_check(awafs_params_memsize(p, n_txq),
                           awafs_memory_except(cur),
                           AWAFS_MEM_PORT_MAX_DEFAULT,
                           AWAFS_MEM_TOTAL_MAX_DEFAULT, why, sizeof why)) {
        return NULL;
    }
    return xasprintf("memory: this configuration %s (completion-ring-size, "
                     "window-capacity, size-window-capacity, flow-table-size "
                     "and buffer set it)", why);
}

static char *
awafs_qos_check(const struct qos_conf *cur, const struct smap *details)
{
    struct awafs_qos_params params;
    char *msg = awafs_qos_parse(details, &params);

    if (!msg) {
        msg = awafs_memory_check_params(
            cur, &params, cur ? MAX(awafs_qos_cast(cur)->n_txq, 1) : 1);
    }
    if (!msg) {
        uint64_t others = awafs_buffers_except(cur);
        int n_txq = cur ? MAX(awafs_qos_cast(cur)->n_txq, 1) : 1;
        uint64_t mine = (uint64_t) params.buffer * n_txq;
        uint32_t spare = dpdk_mp_spare();

        if (others + mine > spare) {
            msg = xasprintf("buffer: %"PRIu32" packets in each of %d tx "
                            "queues do not fit in the %"PRIu32" mbufs that "
                            "the mempools can spare (half of the "
                            "smallest), of which other awafs ports may hold "
                            "%"PRIu64, params.buffer, n_txq, spare, others);
        }
    }
    return msg;
}

/* A new copy of the thresholds 'adapt' starts with, for publishing. */
static struct awafs_thresholds *
awafs_initial_thresholds(const struct awafs_adapt *adapt)
{
    struct awafs_thresholds t;

    awafs_adapt_current(adapt, &t);
    t.updated_us = awafs_now_us();
    return xmemdup(&t, sizeof t);
}

/* A secret 128-bit key for a flow table's SipHash or awafs_source_id(), from
 * the system's entropy (random_uint64() has 32 bits of state). */
static void
awafs_secret_key(uint64_t key[2])
{
    if (getrandom(key, 2 * sizeof key[0], 0) != 2 * sizeof key[0]) {
        VLOG_WARN_ONCE("getrandom() failed: hash keys from "
                       "random_uint64()");
        key[0] = random_uint64();
        key[1] = random_uint64() ^ time_usec();
    }
}

static int
awafs_qos_construct(const struct smap *details, struct qos_conf **conf)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;
    struct awafs_qos_params params;
    struct awafs_qos *aq;
    uint64_t key[2];
    char *msg;

    if (ovsthread_once_start(&once)) {
        awafs_tsc_per_us = rte_get_tsc_hz() / 1000000;
        unixctl_command_register("awafs/history", "port [n]", 1, 2,
                                 awafs_unixctl_history, NULL);
        awafs_tunnels_refresh();
        ovs_thread_create("awafs", awafs_main, NULL);
        ovsthread_once_done(&once);
    }

    msg = awafs_qos_parse(details, &params);
    if (!msg) {
        msg = awafs_memory_check_params(NULL, &params, 1);
    }
    if (msg) {
        VLOG_WARN("%s", msg);
        free(msg);
        return EINVAL;
    }

    aq = xzalloc(sizeof *aq);
    aq->mem_bytes = awafs_params_memsize(&params, 1);
    qos_conf_init(&aq->qos_conf, &awafs_ops);
    aq->created = time_msec();
    aq->params = params;
    ovsrcu_init(&aq->dp_params, NULL);
    awafs_qos_publish_params(aq);
    aq->adapt = awafs_adapt_create(&params.core);
    if (params.karuna) {
        aq->beta_adapt = awafs_adapt_create(&params.beta);
    }
    if (!aq->adapt || (params.karuna && !aq->beta_adapt)) {
        awafs_adapt_destroy(aq->adapt);
        awafs_adapt_destroy(aq->beta_adapt);
        free(ovsrcu_get_protected(struct awafs_dp_params *, &aq->dp_params));
        free(aq);
        return ENOMEM;
    }
    awafs_secret_key(key);
    memcpy(aq->source_key, key, sizeof aq->source_key);
    ovsrcu_init(&aq->thr, awafs_initial_thresholds(aq->adapt));
    if (aq->beta_adapt) {
        ovsrcu_init(&aq->beta_thr, awafs_initial_thresholds(aq->beta_adapt));
    } else {
        ovsrcu_init(&aq->beta_thr, NULL);
    }
    atomic_init(&aq->shaped, false);
    atomic_init(&aq->tb_gen, 0);
    rte_spinlock_init(&aq->tb_lock);

    ovs_mutex_lock(&awafs_mutex);
    aq->link_burst_us = AWAFS_LINK_BURST_US;
    awafs_qos_init_tb(aq);
    aq->next_run_us = awafs_now_us() + params.core.interval_us;
    ovs_list_push_back(&awafs_list, &aq->list_node);
    ovs_mutex_unlock(&awafs_mutex);

    *conf = &aq->qos_conf;
    return 0;
}

/* Frees the packets instance 'tq' holds; returns how many. */
static int
awafs_txq_flush(struct awafs_txq *tq)
{
    void *pkts[NETDEV_MAX_BURST];
    int total = 0;
    size_t n;

    while ((n = awafs_sched_flush(tq->sched, pkts, ARRAY_SIZE(pkts)))) {
        rte_pktmbuf_free_bulk((struct rte_mbuf **) pkts, n);
        total += n;
    }
    return total;
}

static void
awafs_txq_destroy(struct awafs_txq *tq)
{
    if (tq) {
        awafs_txq_flush(tq);
        awafs_sched_destroy(tq->sched);
        awafs_ring_destroy(tq->ring);
        awafs_ring_destroy(tq->beta_ring);
        awafs_flowtab_destroy(tq->flows);
        awafs_srclimit_destroy(tq->srclimit);
        free_cacheline(tq);
    }
}

/* A new instance of 'aq' (one of 'n_txq') for its parameters, NULL if
 * memory is short. */
static struct awafs_txq *
awafs_txq_create(const struct awafs_qos *aq, int n_txq)
{
    const struct awafs_qos_params *p = &aq->params;
    struct awafs_txq *tq = xzalloc_cacheline(sizeof *tq);

    tq->sched = awafs_sched_create(p->n_queues, p->buffer);
    tq->ring = awafs_ring_create(p->ring_capacity);
    if (p->karuna) {
        tq->beta_ring = awafs_ring_create(p->ring_capacity);
    }
    if (p->trust != AWAFS_TRUST_HOST) {
        uint64_t key[2];

        /* A secret hash key: see awafs_flowtab_create_keyed(). */
        awafs_secret_key(key);
        tq->flows = awafs_flowtab_create_keyed(p->flow_table_size, key);
    }
    if (p->completion_rate_limit) {
        /* A tenth of a second's worth at once; a secret hash key, as for
         * the flow table. */
        tq->srclimit = awafs_srclimit_create(
            AWAFS_SRCLIMIT_SOURCES, p->completion_rate_limit,
            MAX(p->completion_rate_limit / 10, 1), random_uint64());
    }
    if (!tq->sched || !tq->ring || (p->karuna && !tq->beta_ring)
        || (p->trust != AWAFS_TRUST_HOST && !tq->flows)
        || (p->completion_rate_limit && !tq->srclimit)) {
        awafs_txq_destroy(tq);
        return NULL;
    }
    if (tq->flows) {
        /* Completions the switch counts are limited per source too. */
        awafs_flowtab_set_srclimit(tq->flows, tq->srclimit);
    }
    tq->link_rate = (uint64_t) aq->link_mbps * 1000000 / 8;
    tq->byte_free_share = MAX(n_txq, 1);
    tq->refill = 1;
    awafs_txq_apply(tq, ovsrcu_get_protected(struct awafs_dp_params *,
                                             &aq->dp_params));
    return tq;
}

/* Replaces the instances by 'n_txq' new ones, while no thread sends on the
 * port.  The recalculation thread reads the instances' counters to measure
 * the load (awafs_qos_measure_load()) and takes the completions in their
 * rings, under 'awafs_mutex': they are swapped under it, after the old
 * ones' completions are taken, and the old ones freed once it no longer
 * sees them. */
static int
awafs_qos_set_n_txq(struct qos_conf *conf, int n_txq, int *n_freed)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    char *msg = awafs_memory_check_params(conf, &aq->params, n_txq);
    struct awafs_ring **rings, **beta_rings, **old_rings, **old_beta_rings;
    struct awafs_txq **txqs, **old_txqs;
    int old_n_txq;

    if (msg) {
        VLOG_WARN("%s", msg);
        free(msg);
        return ENOMEM;
    }
    txqs = xcalloc(n_txq, sizeof *txqs);
    rings = xcalloc(n_txq, sizeof *rings);
    beta_rings = xcalloc(n_txq, sizeof *beta_rings);

    for (int i = 0; i < n_txq; i++) {
        txqs[i] = awafs_txq_create(aq, n_txq);
        if (!txqs[i]) {
            while (i--) {
                awafs_txq_destroy(txqs[i]);
            }
            free(txqs);
            free(rings);
            free(beta_rings);
            return ENOMEM;
        }
        rings[i] = txqs[i]->ring;
        beta_rings[i] = txqs[i]->beta_ring;
    }
    ovs_mutex_lock(&awafs_mutex);
    awafs_qos_collect(aq);
    old_txqs = aq->txqs;
    old_rings = aq->rings;
    old_beta_rings = aq->beta_rings;
    old_n_txq = aq->n_txq;
    aq->txqs = txqs;
    aq->rings = rings;
    aq->beta_rings = beta_rings;
    aq->n_txq = n_txq;
    aq->mem_bytes = awafs_params_memsize(&aq->params, n_txq);
    memset(&aq->gaps_seen, 0, sizeof aq->gaps_seen);
    ovs_mutex_unlock(&awafs_mutex);

    for (int i = 0; i < old_n_txq; i++) {
        *n_freed += awafs_txq_flush(old_txqs[i]);
        awafs_txq_destroy(old_txqs[i]);
    }
    free(old_txqs);
    free(old_rings);
    free(old_beta_rings);
    return 0;
}

static int
awafs_qos_flush(struct qos_conf *conf, int qid)
{
    return awafs_txq_flush(awafs_qos_cast(conf)->txqs[qid]);
}

static void
awafs_qos_destruct(struct qos_conf *conf)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);

    ovs_mutex_lock(&awafs_mutex);
    ovs_list_remove(&aq->list_node);
    ovs_mutex_unlock(&awafs_mutex);

    for (int i = 0; i < aq->n_txq; i++) {
        awafs_txq_destroy(aq->txqs[i]);
    }
    free(aq->txqs);
    free(aq->rings);
    free(aq->beta_rings);
    awafs_adapt_destroy(aq->adapt);
    awafs_adapt_destroy(aq->beta_adapt);
    free(ovsrcu_get_protected(struct awafs_thresholds *, &aq->thr));
    free(ovsrcu_get_protected(struct awafs_thresholds *, &aq->beta_thr));
    free(ovsrcu_get_protected(struct awafs_dp_params *, &aq->dp_params));
    free(aq);
}

static void
awafs_format_u64_list(struct ds *s, const uint64_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        ds_put_format(s, "%s%"PRIu64, i ? "," : "", v[i]);
    }
}

/* Percentiles in 1/1000 % as percent, e.g. "10,20,30.5". */
static void
awafs_format_pct_list(struct ds *s, const uint32_t *pct_milli, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        ds_put_format(s, "%s%g", i ? "," : "", pct_milli[i] / 1000.0);
    }
}

/* The flow table's counters (struct awafs_flowtab_stats), by their names
 * in qos/show, in its order. */
static const struct {
    const char *name;
    size_t ofs;
} awafs_flowtab_counters[] = {
#define AWAFS_FT(NAME, FIELD) \
    { NAME, offsetof(struct awafs_flowtab_stats, FIELD) }
    AWAFS_FT("flows", flows),
    AWAFS_FT("flow-evictions", evictions),
    AWAFS_FT("switch-completions", completions),
    AWAFS_FT("switch-partial", partial),
    AWAFS_FT("switch-held-down", held_down),
    AWAFS_FT("tardy-flows", tardy_flows),
    AWAFS_FT("tardy-packets", tardy_packets),
    AWAFS_FT("timeouts", timeouts),
    AWAFS_FT("aged-flows", aged_flows),
    AWAFS_FT("fin-ignored", fin_ignored),
    AWAFS_FT("rst-ignored", rst_ignored),
    AWAFS_FT("syn-ignored", syn_ignored),
    AWAFS_FT("out-of-window", out_of_window),
    AWAFS_FT("late-refused", late_refused),
    AWAFS_FT("midstream-packets", midstream_packets),
    AWAFS_FT("gaps-trimmed", gaps_trimmed),
    AWAFS_FT("host-boundaries", host_boundaries),
    AWAFS_FT("deadlines-refused", deadlines_refused),
    AWAFS_FT("queue0-limited", queue0_limited),
    AWAFS_FT("byte-free-limited", byte_free_limited),
#undef AWAFS_FT
};

/* Counter 'c' of awafs_flowtab_counters[] in 'stats', whose members are
 * all uint64_t. */
static uint64_t *
awafs_flowtab_counter(struct awafs_flowtab_stats *stats, size_t c)
{
    BUILD_ASSERT(sizeof *stats % sizeof(uint64_t) == 0);
    return (uint64_t *) stats
           + awafs_flowtab_counters[c].ofs / sizeof(uint64_t);
}

/* The counters of all instances of a port, added up. */
struct awafs_qos_sums {
    struct awafs_parse_stats parse;
    struct awafs_flowtab_stats flows;
    uint64_t completions;
    uint64_t completions_dropped;       /* The rings were full. */
    uint64_t completions_limited;
    uint64_t cut_through;
    uint64_t pinned;
    struct awafs_karuna_stats karuna;
    uint64_t backlog;
    uint64_t byte_free_over;
    uint64_t padded;
};

static void
awafs_qos_sum(const struct awafs_qos *aq, struct awafs_qos_sums *sum)
{
    memset(sum, 0, sizeof *sum);
    for (int i = 0; i < aq->n_txq; i++) {
        const struct awafs_txq *tq = aq->txqs[i];

        for (size_t r = 0; r < ARRAY_SIZE(sum->parse.n); r++) {
            sum->parse.n[r] += tq->parse.n[r];
        }
        for (size_t e = 0; e < ARRAY_SIZE(sum->parse.tunnel); e++) {
            sum->parse.tunnel[e] += tq->parse.tunnel[e];
        }
        if (tq->flows) {
            struct awafs_flowtab_stats fs;

            awafs_flowtab_get_stats(tq->flows, &fs);
            for (size_t c = 0; c < ARRAY_SIZE(awafs_flowtab_counters); c++) {
                *awafs_flowtab_counter(&sum->flows, c)
                    += *awafs_flowtab_counter(&fs, c);
            }
        }
        sum->byte_free_over += tq->byte_free_over;
        sum->padded += tq->padded;
        sum->completions += tq->completions;
        sum->completions_dropped += awafs_ring_dropped(tq->ring);
        if (tq->beta_ring) {
            sum->completions_dropped += awafs_ring_dropped(tq->beta_ring);
        }
        if (tq->srclimit) {
            sum->completions_limited += awafs_srclimit_limited(tq->srclimit);
        }
        sum->cut_through += tq->cut_through;
        for (int q = 0; q < AWAFS_MAX_QUEUES; q++) {
            sum->pinned += tq->pinned[q];
        }
        awafs_karuna_stats_add(&sum->karuna, &tq->karuna);
        sum->backlog += awafs_sched_backlog(tq->sched);
    }
}

/* Packets that set_queue actions put in queue 'q', over all instances. */
static uint64_t
awafs_qos_pinned(const struct awafs_qos *aq, uint32_t q)
{
    uint64_t n = 0;

    for (int i = 0; i < aq->n_txq; i++) {
        n += aq->txqs[i]->pinned[q];
    }
    return n;
}

/* Queue 'q''s counters over all instances of a port. */
static void
awafs_qos_queue_stats(const struct awafs_qos *aq, uint32_t q,
                      struct awafs_queue_stats *qs)
{
    memset(qs, 0, sizeof *qs);
    for (int i = 0; i < aq->n_txq; i++) {
        const struct awafs_txq *tq = aq->txqs[i];
        struct awafs_queue_stats one;

        awafs_sched_get_queue_stats(tq->sched, q, &one);
        qs->enq_packets += one.enq_packets;
        qs->enq_bytes += one.enq_bytes;
        qs->tx_packets += one.tx_packets;
        qs->tx_bytes += one.tx_bytes;
        qs->drop_packets += one.drop_packets;
        qs->drop_bytes += one.drop_bytes;
        qs->flush_packets += one.flush_packets;
        qs->flush_bytes += one.flush_bytes;
        qs->ecn_marks += one.ecn_marks;
        qs->aged_packets += one.aged_packets;
        qs->backlog_packets += one.backlog_packets;
        qs->backlog_bytes += one.backlog_bytes;
        qs->sojourn_max = MAX(qs->sojourn_max, one.sojourn_max);
    }
}

/* Whether key 'id' means anything with 'p': Karuna's keys only with
 * karuna=on, the flow table's timeouts only when the switch counts, the
 * learned thresholds' bounds only if set in adaptive mode. */
static bool
awafs_key_applies(const struct awafs_qos_params *p, enum awafs_key_id id)
{
    if (id == AWAFS_KEY_MIN_THRESHOLDS || id == AWAFS_KEY_MAX_THRESHOLDS) {
        return p->core.adaptive && p->key[id];
    }
    if (awafs_key_is_size(id) || id == AWAFS_KEY_AGING
        || id == AWAFS_KEY_AGING_MIN_TIMEOUTS
        || id == AWAFS_KEY_AGING_MAX_TIMEOUTS) {
        return p->karuna;
    }
    if (id == AWAFS_KEY_OBJECTIVE) {
        return p->core.minimise_fct;
    }
    if (id == AWAFS_KEY_SHORT_SIZE) {
        return (p->core.minimise_fct
                && p->core.fct_model == AWAFS_FCT_MLFQ_SHORT);
    }
    return id != AWAFS_KEY_RTO_MIN_US || p->trust != AWAFS_TRUST_HOST;
}

/* Key 'id' of 'p' as other_config writes it. */
static void
awafs_format_key(struct ds *s, const struct awafs_qos_params *p,
                 enum awafs_key_id id)
{
    const struct awafs_config *cfg = awafs_key_is_size(id) ? &p->beta
                                                           : &p->core;

    switch (awafs_keys[id].type) {
    case AWAFS_KEY_UINT:
        ds_put_format(s, "%"PRIu64, p->key[id]);
        break;
    case AWAFS_KEY_ENUM:
        ds_put_cstr(s, awafs_key_choice(p, id));
        break;
    case AWAFS_KEY_BYTES:
        awafs_format_u64_list(s,
                              awafs_key_bytes(CONST_CAST(struct awafs_config *,
                                                         cfg), id),
                              cfg->n_queues - 1);
        break;
    case AWAFS_KEY_PCT:
        if (p->key[id]) {
            ds_put_cstr(s, "auto");
            break;
        }
        awafs_format_pct_list(s, cfg->pct_milli, cfg->n_queues - 1);
        break;
    }
}

/* What the FCT model saw and predicts of the thresholds in force
 * (percentiles=auto): the load, the mean FCT and slowdown and, for each
 * queue, the share of flows that end there and their mean FCT. */
static void
awafs_qos_show_model(const struct awafs_qos *aq,
                     const struct awafs_adapt_stats *st, struct smap *details)
    OVS_REQUIRES(awafs_mutex)
{
    struct ds s = DS_EMPTY_INITIALIZER;
    struct awafs_fct_plan plan;

    smap_add_format(details, "model-load", "%.1f", aq->load.load * 100);
    smap_add_format(details, "model-kept", "%"PRIu64, st->model_kept);
    if (!awafs_adapt_get_plan(aq->adapt, &plan)) {
        return;
    }
    for (uint32_t q = 0; q < plan.n_queues; q++) {
        ds_put_format(&s, "%s%.1f", q ? "," : "", plan.queue_flows[q] * 100);
    }
    smap_add(details, "model-queue-flows", ds_cstr(&s));
    smap_add_format(details, "model-mean-slowdown", "%.2f", plan.slowdown);
    if (awafs_qos_rate(aq)) {
        smap_add_format(details, "model-mean-fct-us", "%.0f",
                        awafs_qos_byte_times_us(aq, plan.mean));
        if (aq->params.core.fct_model == AWAFS_FCT_MLFQ_SHORT) {
            smap_add_format(details, "model-mean-short-fct-us", "%.0f",
                            awafs_qos_byte_times_us(aq, plan.short_mean));
        }
        ds_clear(&s);
        for (uint32_t q = 0; q < plan.n_queues; q++) {
            ds_put_format(&s, "%s%.0f", q ? "," : "",
                          awafs_qos_byte_times_us(aq, plan.queue_fct[q]));
        }
        smap_add(details, "model-queue-fct-us", ds_cstr(&s));
    }
    ds_destroy(&s);
}

/* The window's completed sizes by power of 2: value i counts those in
 * [2^i, 2^(i+1)) bytes, up to the last power that holds any. */
static void
awafs_qos_show_window_histogram(const struct awafs_qos *aq,
                                struct smap *details)
    OVS_REQUIRES(awafs_mutex)
{
    uint64_t counts[AWAFS_WINDOW_LOG2_BUCKETS];
    size_t n = awafs_adapt_window_log2_counts(aq->adapt, counts);
    struct ds s = DS_EMPTY_INITIALIZER;

    awafs_format_u64_list(&s, counts, MAX(n, 1));
    smap_add(details, "window-histogram", ds_cstr(&s));
    ds_destroy(&s);
}

static int
awafs_qos_get(const struct qos_conf *conf, struct smap *details)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    const struct awafs_qos_params *p = &aq->params;
    const struct awafs_thresholds *t;
    uint32_t n = p->core.n_queues - 1;
    struct awafs_adapt_stats st;
    uint64_t headerless, ecn_marks = 0, flushed = 0, aged = 0;
    struct ds s = DS_EMPTY_INITIALIZER;
    struct awafs_qos_sums sum;

    awafs_qos_sum(aq, &sum);

    /* Configuration: every key that applies, and what it comes to. */
    for (size_t i = 0; i < AWAFS_N_KEYS; i++) {
        if (awafs_key_applies(p, i)) {
            ds_clear(&s);
            awafs_format_key(&s, p, i);
            smap_add(details, awafs_keys[i].name, ds_cstr(&s));
        }
    }
    if (aq->n_txq) {
        /* Rounded up to a power of 2. */
        smap_replace_nocopy(details, "completion-ring-size",
                            xasprintf("%"PRIu32,
                                      awafs_ring_capacity(aq->rings[0])));
    }
    smap_add_format(details, "rate", "%"PRIu64, awafs_qos_rate(aq));
    smap_add(details, "rate-source", (p->max_rate ? "max-rate"
                                      : aq->link_mbps ? "link" : "none"));
    if (p->tunnel) {
        const struct awafs_tunnel_ports *tp;

        ds_clear(&s);
        tp = ovsrcu_get(struct awafs_tunnel_ports *, &awafs_tunnels);
        for (int i = 0; tp && i < tp->n; i++) {
            ds_put_format(&s, "%s%"PRIu16"/%s", i ? "," : "", tp->port[i],
                          (tp->type[i] == AWAFS_TUNNEL_VXLAN ? "vxlan"
                           : "geneve"));
        }
        smap_add(details, "tunnel-ports", ds_cstr(&s));
    }
    if (p->trust != AWAFS_TRUST_HOST) {
        for (size_t c = 0; c < ARRAY_SIZE(awafs_flowtab_counters); c++) {
            smap_add_format(details, awafs_flowtab_counters[c].name,
                            "%"PRIu64, *awafs_flowtab_counter(&sum.flows, c));
        }
    }
    smap_add_format(details, "byte-free-over-budget", "%"PRIu64,
                    sum.byte_free_over);
    smap_add_format(details, "padded-frames", "%"PRIu64, sum.padded);
    smap_add_format(details, "memory-bytes", "%"PRIuSIZE, aq->mem_bytes);

    /* State. */
    t = ovsrcu_get(struct awafs_thresholds *, &aq->thr);
    ds_clear(&s);
    awafs_format_u64_list(&s, t->thr, n);
    smap_add(details, "current-thresholds", ds_cstr(&s));
    smap_add_format(details, "thresholds-version", "%"PRIu64, t->version);
    smap_add_format(details, "thresholds-age-ms", "%"PRId64,
                    (awafs_now_us() - t->updated_us) / 1000);
    smap_add_format(details, "thresholds-samples", "%"PRIu32, t->n_samples);
    t = ovsrcu_get(struct awafs_thresholds *, &aq->beta_thr);
    if (t) {
        ds_clear(&s);
        awafs_format_u64_list(&s, t->thr, n);
        smap_add(details, "current-size-thresholds", ds_cstr(&s));
        smap_add_format(details, "size-thresholds-version", "%"PRIu64,
                        t->version);
        smap_add_format(details, "deadline-packets", "%"PRIu64,
                        sum.karuna.type_packets[AWAFS_FLOW_DEADLINE]);
        smap_add_format(details, "sized-packets", "%"PRIu64,
                        sum.karuna.type_packets[AWAFS_FLOW_SIZED]);
        smap_add_format(details, "unknown-size-packets", "%"PRIu64,
                        sum.karuna.type_packets[AWAFS_FLOW_UNKNOWN]);
        smap_add_format(details, "karuna-oversize", "%"PRIu64,
                        sum.karuna.oversize);
    }

    ovs_mutex_lock(&awafs_mutex);
    smap_add_format(details, "window-samples", "%"PRIu32,
                    awafs_adapt_window_count(aq->adapt));
    awafs_qos_show_window_histogram(aq, details);
    if (aq->beta_adapt) {
        smap_add_format(details, "size-window-samples", "%"PRIu32,
                        awafs_adapt_window_count(aq->beta_adapt));
    }
    awafs_adapt_get_stats(aq->adapt, &st);
    smap_add_format(details, "recalc-runs", "%"PRIu64, aq->runs);
    smap_add_format(details, "recalc-late-runs", "%"PRIu64, aq->late_runs);
    smap_add_format(details, "recalc-max-late-us", "%"PRId64,
                    aq->max_late_us);
    smap_add_format(details, "recalc-mean-late-us", "%"PRId64,
                    aq->runs ? aq->sum_late_us / (int64_t) aq->runs : 0);
    smap_add_format(details, "recalc-max-us", "%"PRId64, aq->max_calc_us);
    if (!p->max_rate && aq->link_mbps) {
        smap_add_format(details, "link-burst-us", "%"PRIu32,
                        aq->link_burst_us);
    }
    smap_add_format(details, "held-gap-max-us", "%"PRIu64,
                    MAX(aq->held_gap_us[0], aq->held_gap_us[1]));
    if (p->core.minimise_fct) {
        awafs_qos_show_model(aq, &st, details);
    }
    ovs_mutex_unlock(&awafs_mutex);

    smap_add_format(details, "completions", "%"PRIu64, sum.completions);
    smap_add_format(details, "completions-dropped", "%"PRIu64,
                    sum.completions_dropped);
    smap_add_format(details, "completions-limited", "%"PRIu64,
                    sum.completions_limited);
    smap_add_format(details, "window-evicted", "%"PRIu64,
                    st.samples_evicted);
    headerless = (sum.parse.n[AWAFS_PARSE_NOT_TCP]
                  + sum.parse.n[AWAFS_PARSE_NO_OPTION]
                  + sum.parse.n[AWAFS_PARSE_UNSUPPORTED]);
    smap_add_format(details, "headerless", "%"PRIu64, headerless);
    smap_add_format(details, "malformed", "%"PRIu64,
                    sum.parse.n[AWAFS_PARSE_MALFORMED]);
    if (p->tunnel) {
        for (int e = 0; e < AWAFS_TUN_N_EVENTS; e++) {
            smap_add_nocopy(details,
                            xasprintf("tunnel-%s",
                                      awafs_tunnel_event_to_string(e)),
                            xasprintf("%"PRIu64, sum.parse.tunnel[e]));
        }
    }
    smap_add_format(details, "cut-through", "%"PRIu64, sum.cut_through);
    smap_add_format(details, "pinned-packets", "%"PRIu64, sum.pinned);
    smap_add_format(details, "backlog-packets", "%"PRIu64, sum.backlog);
    smap_add_format(details, "tx-queues", "%d", aq->n_txq);
    ds_clear(&s);
    for (int i = 0; i < aq->n_txq; i++) {
        uint64_t sent = 0;

        for (uint32_t q = 0; q < p->n_queues; q++) {
            struct awafs_queue_stats qs;

            awafs_sched_get_queue_stats(aq->txqs[i]->sched, q, &qs);
            sent += qs.tx_packets;
        }
        ds_put_format(&s, "%s%"PRIu64, i ? "," : "", sent);
    }
    smap_add(details, "tx-queue-packets", ds_cstr(&s));
    for (uint32_t q = 0; q < p->n_queues; q++) {
        struct awafs_queue_stats qs;

        awafs_qos_queue_stats(aq, q, &qs);
        ecn_marks += qs.ecn_marks;
        flushed += qs.flush_packets;
        aged += qs.aged_packets;
    }
    smap_add_format(details, "ecn-marks", "%"PRIu64, ecn_marks);
    smap_add_format(details, "flushed-packets", "%"PRIu64, flushed);
    smap_add_format(details, "aged-packets", "%"PRIu64, aged);
    ds_destroy(&s);
    return 0;
}

static bool
awafs_qos_is_equal(const struct qos_conf *conf, const struct smap *details)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    struct awafs_qos_params params;
    char *msg = awafs_qos_parse(details, &params);

    if (msg) {
        free(msg);
        return false;
    }
    return awafs_params_equal(&params, &aq->params);
}

/* Keeps the queues, their packets and the learned window unless the queue
 * count, a buffer size or the window type changes (or a histogram window
 * grows beyond twice its first length). */
static bool
awafs_qos_reconfigure(struct qos_conf *conf, const struct smap *details)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    struct awafs_qos_params params;
    int64_t now = awafs_now_us();
    struct awafs_thresholds before, after;
    char *msg = awafs_qos_parse(details, &params);
    bool ok;

    if (msg) {
        free(msg);
        return false;
    }
    if (params.buffer != aq->params.buffer
        || params.ring_capacity != aq->params.ring_capacity
        || params.karuna != aq->params.karuna
        || params.trust != aq->params.trust
        || params.flow_table_size != aq->params.flow_table_size
        || params.completion_rate_limit
           != aq->params.completion_rate_limit) {
        return false;
    }

    ovs_mutex_lock(&awafs_mutex);
    awafs_adapt_current(aq->adapt, &before);
    /* Both windows have the same capacities: the second succeeds if the
     * first does. */
    ok = (awafs_adapt_reconfigure(aq->adapt, &params.core, now)
          && (!aq->beta_adapt
              || awafs_adapt_reconfigure(aq->beta_adapt, &params.beta,
                                         now)));
    if (ok) {
        bool rate_changed = params.max_rate != aq->params.max_rate;

        awafs_adapt_current(aq->adapt, &after);
        if (after.version != before.version) {
            awafs_qos_publish(aq, false, &after);
        }
        if (aq->beta_adapt) {
            awafs_adapt_current(aq->beta_adapt, &after);
            awafs_qos_publish(aq, true, &after);
        }
        if (params.core.interval_us != aq->params.core.interval_us) {
            aq->next_run_us = now + params.core.interval_us;
        }
        /* The instances apply the new parameters on their next use. */
        aq->params = params;
        awafs_qos_publish_params(aq);
        if (rate_changed) {
            awafs_qos_init_tb(aq);      /* Reads aq->params.max_rate. */
        }
    }
    ovs_mutex_unlock(&awafs_mutex);

    return ok;
}

/* A completed message of 'size' bytes and 'type' from source address 'src':
 * with karuna, the known sizes teach {beta}, the unknown ones {alpha}, and a
 * deadline flow's size neither. */
static void
awafs_qos_complete(struct awafs_qos *aq, struct awafs_txq *tq,
                   int64_t now_us, uint64_t size, enum awafs_flow_type type,
                   const uint8_t src[16])
{
    /* A SipHash: only for the window's weights.  A window that starts
     * weighing takes the samples from before as one source until they
     * leave it. */
    uint32_t source = (tq->weigh_sources
                       ? awafs_source_id(aq->source_key, src) : 0);
    struct awafs_ring *ring = awafs_karuna_ring(tq->ring, tq->beta_ring,
                                                type);

    /* One thread at a time uses an instance (struct awafs_txq): its rings
     * have one producer. */
    tq->completions++;
    if (ring) {
        awafs_ring_push_sp(ring, now_us, size, source);
    }
}

/* A completion of 'size' bytes that the host with source address 'src'
 * reports, unless that address is over 'completion-rate-limit'. */
static void
awafs_qos_host_complete(struct awafs_qos *aq, struct awafs_txq *tq,
                        const uint8_t src[16], int64_t now_us, uint64_t size,
                        enum awafs_flow_type type)
{
    if (tq->srclimit && !awafs_srclimit_allow(tq->srclimit, src, now_us)) {
        return;
    }
    awafs_qos_complete(aq, tq, now_us, size, type, src);
}

/* The source address, IPv4 in its first 4 bytes, of the IP header at
 * 'l3', of 'ip_version', which awafs_parse() checked whole. */
static inline void
awafs_qos_src(const uint8_t *l3, uint8_t ip_version, uint8_t src[16])
{
    memset(src, 0, 16);
    if (ip_version == 4) {
        memcpy(src, l3 + 12, 4);
    } else {
        memcpy(src, l3 + 8, 16);
    }
}

/* True if the header parsed into 'h' reports a completion that a switch
 * counts: each counted once despite GSO copies of the option (awafs.h). */
static inline bool
awafs_qos_reports(const struct awafs_hdr *h)
{
    return awafs_hdr_counts_completion(h) || awafs_hdr_counts_prev(h);
}

/* With trust=host, counts the completions that the header parsed into 'h'
 * from the frame at 'data' reports.  'clock' is the batch's. */
static void
awafs_qos_host_completions(struct awafs_qos *aq, struct awafs_txq *tq,
                           const uint8_t *data, const struct awafs_hdr *h,
                           struct awafs_clock *clock)
{
    enum awafs_flow_type type = awafs_karuna_type(h->karuna);
    bool completion = awafs_hdr_counts_completion(h);
    bool prev = awafs_hdr_counts_prev(h);
    uint8_t src[16];

    if (!completion && !prev) {
        return;
    }
    awafs_qos_src(data + h->l3_ofs, h->ip_version, src);
    if (completion) {
        awafs_qos_host_complete(aq, tq, src, awafs_clock_us(clock),
                                h->flow_size, type);
    }
    if (prev) {
        awafs_qos_host_complete(aq, tq, src, awafs_clock_us(clock),
                                h->prev_size, type);
    }
}

/* What awafs_qos_classify() makes of a frame the parser read into 'h' ('r'
 * its result), in every trust mode (docs/design.md, "Byte-free segments"):
 * a TCP frame padded past the Ethernet minimum goes to the lowest queue, a
 * TCP segment without payload (an ACK, SYN or FIN: it delays no one and
 * paces its flow) to queue 0 within the budget for them, and every other
 * frame to its trust mode's queue.  Shared by both passes of
 * awafs_qos_classify_batch(). */
enum awafs_frame_kind {
    AWAFS_FRAME_DATA,           /* The trust mode's queue. */
    AWAFS_FRAME_PADDED,         /* The lowest queue. */
    AWAFS_FRAME_BYTE_FREE,      /* Queue 0 within the budget. */
};

static inline enum awafs_frame_kind
awafs_qos_frame_kind(enum awafs_parse_result r, const struct awafs_hdr *h)
{
    /* Only a TCP header read whole gives OK or NO_OPTION. */
    if (r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION) {
        return AWAFS_FRAME_DATA;
    }
    return (OVS_UNLIKELY(h->padded) ? AWAFS_FRAME_PADDED
            : !h->payload_len ? AWAFS_FRAME_BYTE_FREE
            : AWAFS_FRAME_DATA);
}

/* With trust=host and no karuna, the queue of a frame of kind
 * AWAFS_FRAME_DATA parsed into 'h' ('r' the result): by the bytes its
 * header says its flow sent, else 'default_queue' (the port's, which the
 * first pass keeps in a register).  Shared by both passes of
 * awafs_qos_classify_batch(). */
static inline unsigned int
awafs_qos_host_queue(const struct awafs_thresholds *thr,
                     uint8_t default_queue,
                     enum awafs_parse_result r, const struct awafs_hdr *h)
{
    return (r == AWAFS_PARSE_OK ? awafs_classify(thr, h->bytes_sent)
            : default_queue);
}

/* The queue for a packet parsed into 'h' ('r' the parse result) from the
 * 'head_len' bytes at 'data', and the completions it reports, under the
 * port's trust mode; 'beta' is nonnull with karuna.  'clock' is the
 * batch's: host mode reads it only for completions. */
static unsigned int
awafs_qos_classify__(struct awafs_qos *aq, struct awafs_txq *tq,
                   const struct awafs_qos_params *p,
                   const struct awafs_thresholds *thr,
                   const struct awafs_thresholds *beta,
                   const uint8_t *data, uint32_t head_len,
                   enum awafs_parse_result r, const struct awafs_hdr *h,
                   struct awafs_clock *clock, bool *byte_free_refused)
{
    struct awafs_flow_result fr;
    struct awafs_flow_key key;
    int64_t now_us;

    if (p->trust == AWAFS_TRUST_HOST) {
        if (r == AWAFS_PARSE_OK) {
            awafs_qos_host_completions(aq, tq, data, h, clock);
            if (beta) {
                return awafs_karuna_queue(thr, beta, h,
                                          awafs_karuna_type(h->karuna),
                                          h->bytes_sent, -1, false,
                                          &tq->karuna);
            }
        }
        return awafs_qos_host_queue(thr, p->default_queue, r, h);
    }
    if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION)
        || !awafs_flow_key_from_frame(data, head_len, h, &key)) {
        return p->default_queue;
    }
    now_us = awafs_clock_us(clock);
    awafs_flowtab_update(tq->flows, &key, h, p->trust == AWAFS_TRUST_VERIFY,
                         now_us, p->idle_us, thr, &fr);
    *byte_free_refused = fr.byte_free_refused;
    for (int i = 0; i < fr.n_completed; i++) {
        awafs_qos_complete(aq, tq, now_us, fr.completed[i],
                           fr.completed_type[i], key.src);
    }
    if (beta) {
        return awafs_karuna_queue(thr, beta, h, fr.type, fr.bytes_sent,
                                  fr.queue, fr.aged, &tq->karuna);
    }
    return fr.queue;
}

/* awafs_qos_classify__(), then awafs_qos_frame_kind()'s rule for the frame
 * of 'len' bytes: the budget for segments without payload is the
 * instance's (and, with a flow table, their source's).  'clock' is the
 * batch's. */
static unsigned int
awafs_qos_classify(struct awafs_qos *aq, struct awafs_txq *tq,
                   const struct awafs_qos_params *p,
                   const struct awafs_thresholds *thr,
                   const struct awafs_thresholds *beta,
                   const uint8_t *data, uint32_t head_len, uint32_t len,
                   enum awafs_parse_result r, const struct awafs_hdr *h,
                   struct awafs_clock *clock)
{
    bool byte_free_refused = false;
    unsigned int q = awafs_qos_classify__(aq, tq, p, thr, beta, data,
                                          head_len, r, h, clock,
                                          &byte_free_refused);

    switch (awafs_qos_frame_kind(r, h)) {
    case AWAFS_FRAME_DATA:
        return q;
    case AWAFS_FRAME_PADDED:
        tq->padded++;
        return p->n_queues - 1;
    case AWAFS_FRAME_BYTE_FREE:
        if (byte_free_refused) {
            return p->n_queues - 1;
        }
        return awafs_byte_free_queue(&tq->byte_free, awafs_clock_tsc(clock),
                                     len, p->n_queues,
                                     &tq->byte_free_over);
    }
    OVS_NOT_REACHED();
}

/* The queue a 'set_queue' action named, given the packet's 'skb_priority'
 * (the queue + 1: dpif_netdev_queue_to_priority()); past the last queue,
 * the last. */
static inline uint8_t
awafs_qos_pin(struct awafs_txq *tq, const struct awafs_qos_params *p,
              uint32_t skb_priority)
{
    uint32_t q = MIN(skb_priority - 1, p->n_queues - 1);

    tq->pinned[q]++;
    return q;
}

/* Classifies packet 'i' of 'pkts', 'm', into 'tq->batch' under parameters
 * 'p' and thresholds 'thr', reading inside 'tunnels' (NULL: none), by the
 * rules of awafs_qos_classify(); 'clock' is the batch's. */
static void
awafs_qos_classify_one(struct awafs_qos *aq, struct awafs_txq *tq,
                       const struct awafs_qos_params *p,
                       const struct awafs_thresholds *thr,
                       const struct awafs_thresholds *beta,
                       const struct awafs_tunnel_ports *tunnels,
                       struct rte_mbuf *m, int i, struct awafs_clock *clock)
{
    struct dp_packet *packet = CONTAINER_OF(m, struct dp_packet, mbuf);
    const uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
    uint32_t head_len = rte_pktmbuf_data_len(m);
    uint32_t len = rte_pktmbuf_pkt_len(m);
    struct awafs_batch *b = &tq->batch;
    uint8_t head[AWAFS_HEAD_MAX];

    if (OVS_UNLIKELY(head_len < len && head_len < AWAFS_HEAD_MAX)) {
        /* Headers that may straddle segments: read them together. */
        head_len = MIN(len, AWAFS_HEAD_MAX);
        data = rte_pktmbuf_read(m, 0, head_len, head);
    }
    if (!awafs_frame_may_be_ip(data, head_len)) {
        tq->parse.n[AWAFS_PARSE_NOT_TCP]++;
        b->queues[i] = p->default_queue;
        if (p->ecn_threshold) {
            b->ecn[i] = false;
        }
    } else {
        enum awafs_parse_result r;
        struct awafs_hdr h;

        /* Parsed and learned from even if pinned: its completions are the
         * workload's too. */
        r = awafs_parse_head(data, head_len, len, tunnels, &h, &tq->parse);
        b->queues[i] = awafs_qos_classify(aq, tq, p, thr, beta, data,
                                          head_len, len, r, &h, clock);
        if (p->ecn_threshold) {
            b->ecn[i] = awafs_ecn_capable(data, head_len, &h);
            b->l3_ofs[i] = awafs_ecn_l3_ofs(&h);
            b->ip_version[i] = awafs_ecn_ip_version(&h);
        }
    }
    if (OVS_UNLIKELY(packet->md.skb_priority)) {
        b->queues[i] = awafs_qos_pin(tq, p, packet->md.skb_priority);
    }
}

/* The passes below mark packets of a batch in bit masks of 32 bits. */
BUILD_ASSERT_DECL(NETDEV_MAX_BURST <= 32);

/* With host trust and no karuna, the first pass of
 * awafs_qos_classify_batch() over the 'n' packets in 'pkts': classifies into
 * 'tq->batch', with no call and by the functions awafs_qos_classify() uses,
 * each frame whose queue it gives without one (an unpadded TCP segment read
 * by awafs_parse_fast(), or a frame that is not IP), and returns the others
 * as a bit mask, for awafs_qos_classify_one().  Of the frames it
 * classified, adds to '*completions' and '*prevs' those that report a
 * completion of their message or of the previous one, noting the sizes in
 * 'tq->batch' (awafs_qos_count_reports()), and to '*byte_free' the
 * segments without data (awafs_qos_byte_free()), whose queue it leaves to
 * them.  Records every packet's length in 'tq->batch' (and, with 'ecn',
 * what marking its frames needs), and in '*bytesp' the bytes the shaper
 * charges for them all.  A loop without calls keeps what it uses in
 * registers; inlined, with 'ecn' a constant, it is two loops, and a port
 * that does not mark has no test of it per packet. */
static inline uint32_t ALWAYS_INLINE
awafs_qos_classify_fast(struct awafs_txq *tq,
                        const struct awafs_qos_params *p,
                        const struct awafs_thresholds *thr, const bool ecn,
                        struct rte_mbuf **pkts, int n, uint64_t *bytesp,
                        uint32_t *completions, uint32_t *prevs,
                        uint32_t *byte_free)
{
    const uint8_t default_queue = p->default_queue;
    struct awafs_batch *b = &tq->batch;
    uint32_t n_ok = 0, n_no_option = 0, n_not_ip = 0;
    uint64_t bytes = 0;
    uint32_t slow = 0;

    for (int i = 0; i < n; i++) {
        const struct rte_mbuf *m = pkts[i];
        const struct dp_packet *packet
            = CONTAINER_OF(m, struct dp_packet, mbuf);
        const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
        uint32_t head_len = rte_pktmbuf_data_len(m);
        uint32_t len = rte_pktmbuf_pkt_len(m);
        enum awafs_parse_result r;
        enum awafs_frame_kind kind;
        struct awafs_hdr h;

        b->lens[i] = len;
        bytes += len + AWAFS_WIRE_OVERHEAD;
        if (OVS_UNLIKELY((head_len < len && head_len < AWAFS_HEAD_MAX)
                         || packet->md.skb_priority)) {
            slow |= 1u << i;
            continue;
        }
        if (!awafs_frame_may_be_ip(data, head_len)) {
            b->queues[i] = default_queue;
            n_not_ip++;
            if (ecn) {
                b->ecn[i] = false;
            }
            continue;
        }
        /* Frames the fast parse does not read, malformed and padded frames
         * (with counters of their own) are the second pass's. */
        r = awafs_parse_fast(data, head_len, len, &h);
        kind = awafs_qos_frame_kind(r, &h);
        if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION)
            || kind == AWAFS_FRAME_PADDED) {
            slow |= 1u << i;
            continue;
        }
        b->queues[i] = awafs_qos_host_queue(thr, default_queue, r, &h);
        if (r == AWAFS_PARSE_OK) {
            n_ok++;
            if (OVS_UNLIKELY(awafs_qos_reports(&h))) {
                if (awafs_hdr_counts_completion(&h)) {
                    *completions |= 1u << i;
                }
                if (awafs_hdr_counts_prev(&h)) {
                    *prevs |= 1u << i;
                }
                b->flow_sizes[i] = h.flow_size;
                b->prev_sizes[i] = h.prev_size;
            }
        } else {
            n_no_option++;
        }
        if (kind == AWAFS_FRAME_BYTE_FREE) {
            *byte_free |= 1u << i;
        }
        if (ecn) {
            b->ecn[i] = awafs_ecn_capable(data, head_len, &h);
            b->l3_ofs[i] = awafs_ecn_l3_ofs(&h);
            b->ip_version[i] = awafs_ecn_ip_version(&h);
        }
    }
    tq->parse.n[AWAFS_PARSE_OK] += n_ok;
    tq->parse.n[AWAFS_PARSE_NO_OPTION] += n_no_option;
    tq->parse.n[AWAFS_PARSE_NOT_TCP] += n_not_ip;
    *bytesp = bytes;
    return slow;
}

/* With trust=host and no karuna, counts the completions that the packets
 * of 'pkts' report, by the bit masks and sizes awafs_qos_classify_fast()
 * left: 'completions' (of the frame's message) and 'prevs' (of the one
 * before).  Its frames are IPv4 without options.  'clock' is the
 * batch's. */
static void
awafs_qos_count_reports(struct awafs_qos *aq, struct awafs_txq *tq,
                        struct rte_mbuf **pkts, uint32_t completions,
                        uint32_t prevs, struct awafs_clock *clock)
{
    const struct awafs_batch *b = &tq->batch;
    int i;

    ULLONG_FOR_EACH_1 (i, completions | prevs) {
        const uint8_t *data = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
        uint8_t src[16];

        awafs_qos_src(data + AWAFS_ETH_HLEN, 4, src);
        if (completions & (1u << i)) {
            awafs_qos_host_complete(aq, tq, src, awafs_clock_us(clock),
                                    b->flow_sizes[i], AWAFS_FLOW_UNKNOWN);
        }
        if (prevs & (1u << i)) {
            awafs_qos_host_complete(aq, tq, src, awafs_clock_us(clock),
                                    b->prev_sizes[i], AWAFS_FLOW_UNKNOWN);
        }
    }
}

/* With trust=host, the queue in 'tq->batch' of each TCP segment without
 * data in 'byte_free', a bit mask of frames that awafs_qos_classify_fast()
 * classified: awafs_qos_classify()'s.  'clock' is the batch's. */
static void
awafs_qos_byte_free(struct awafs_txq *tq, const struct awafs_qos_params *p,
                    uint32_t byte_free, struct awafs_clock *clock)
{
    struct awafs_batch *b = &tq->batch;
    int i;

    ULLONG_FOR_EACH_1 (i, byte_free) {
        b->queues[i] = awafs_byte_free_queue(&tq->byte_free,
                                             awafs_clock_tsc(clock),
                                             b->lens[i], p->n_queues,
                                             &tq->byte_free_over);
    }
}

/* Classifies the 'n' (at most NETDEV_MAX_BURST) packets in 'pkts' into
 * 'tq->batch', under parameters 'p' and thresholds 'thr'.  Returns the bytes
 * the shaper charges for them (with each frame's wire overhead). */
static uint64_t
awafs_qos_classify_batch(struct awafs_qos *aq, struct awafs_txq *tq,
                         const struct awafs_qos_params *p,
                         const struct awafs_thresholds *thr,
                         const struct awafs_thresholds *beta,
                         struct rte_mbuf **pkts, int n)
{
    const struct awafs_tunnel_ports *tunnels
        = p->tunnel ? ovsrcu_get(struct awafs_tunnel_ports *, &awafs_tunnels)
                    : NULL;
    struct awafs_batch *b = &tq->batch;
    struct awafs_clock clock = AWAFS_CLOCK_INIT;
    uint32_t slow, completions = 0, prevs = 0, byte_free = 0;
    uint64_t bytes = 0;
    int i;

    if (p->trust == AWAFS_TRUST_HOST && !beta) {
        slow = (p->ecn_threshold
                ? awafs_qos_classify_fast(tq, p, thr, true, pkts, n, &bytes,
                                          &completions, &prevs, &byte_free)
                : awafs_qos_classify_fast(tq, p, thr, false, pkts, n, &bytes,
                                          &completions, &prevs, &byte_free));
        awafs_qos_count_reports(aq, tq, pkts, completions, prevs, &clock);
        awafs_qos_byte_free(tq, p, byte_free, &clock);
    } else {
        for (i = 0; i < n; i++) {
            b->lens[i] = rte_pktmbuf_pkt_len(pkts[i]);
            bytes += b->lens[i] + AWAFS_WIRE_OVERHEAD;
        }
        slow = n ? UINT32_MAX >> (32 - n) : 0;
    }
    ULLONG_FOR_EACH_1 (i, slow) {
        awafs_qos_classify_one(aq, tq, p, thr, beta, tunnels, pkts[i], i,
                               &clock);
    }
    return bytes;
}

/* Of the 'n' packets in 'pkts' classified in 'tq->batch', the first
 * 'n_sent' were sent directly: counts them, and queues the others, under
 * parameters 'p'.  Returns the number of packets dropped. */
static int
awafs_qos_queue_batch(struct awafs_txq *tq, const struct awafs_qos_params *p,
                      struct rte_mbuf **pkts, int n, int n_sent)
{
    bool ecn = p->ecn_threshold != 0;
    struct awafs_batch *b = &tq->batch;
    void *victims[NETDEV_MAX_BURST];
    uint64_t sent_bytes;
    size_t n_victims;

    n_victims = awafs_sched_send_direct(
        tq->sched, b->queues, (void **) pkts, b->lens, ecn ? b->ecn : NULL,
        n, n_sent, n_sent < n ? rte_get_tsc_cycles() >> AWAFS_TICK_SHIFT : 0,
        victims, &sent_bytes);
    if (n_sent) {
        tq->credit -= sent_bytes;
        tq->cut_through += n_sent;
    }
    /* Marked after the drop decision, on the backlog each found. */
    for (int i = n_sent; ecn && i < n; i++) {
        if (b->ecn[i]) {
            struct rte_mbuf *m = pkts[i];
            struct awafs_hdr h = { .l3_ofs = b->l3_ofs[i],
                                   .ip_version = b->ip_version[i] };

            awafs_ecn_set_ce(rte_pktmbuf_mtod(m, uint8_t *),
                             rte_pktmbuf_data_len(m), &h);
        }
    }
    if (OVS_UNLIKELY(n_victims)) {
        rte_pktmbuf_free_bulk((struct rte_mbuf **) victims, n_victims);
    }
    return n_victims;
}

/* Instance 'qid' of 'aq', with the datapath's parameters applied; '*dp'
 * the parameters. */
static struct awafs_txq *
awafs_qos_txq(struct awafs_qos *aq, int qid,
              const struct awafs_dp_params **dp)
{
    struct awafs_txq *tq = aq->txqs[qid];

    *dp = ovsrcu_get(struct awafs_dp_params *, &aq->dp_params);
    awafs_txq_apply(tq, *dp);
    return tq;
}

static int
awafs_qos_enqueue(struct qos_conf *conf, int qid, struct rte_mbuf **pkts,
                  int cnt, bool *direct)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    const struct awafs_thresholds *thr, *beta;
    const struct awafs_dp_params *dp;
    struct awafs_txq *tq = awafs_qos_txq(aq, qid, &dp);
    int drops = 0;

    thr = ovsrcu_get(struct awafs_thresholds *, &aq->thr);
    beta = ovsrcu_get(struct awafs_thresholds *, &aq->beta_thr);
    for (int base = 0; base < cnt; base += NETDEV_MAX_BURST) {
        int n = MIN(cnt - base, NETDEV_MAX_BURST);
        uint64_t bytes = awafs_qos_classify_batch(aq, tq, &dp->p, thr, beta,
                                                  pkts + base, n);

        if (direct && n == cnt && !awafs_sched_backlog(tq->sched)
            && awafs_txq_budget(aq, tq)
               >= (int64_t) bytes) {
            *direct = true;
            return 0;
        }
        drops += awafs_qos_queue_batch(tq, &dp->p, pkts + base, n, 0);
    }
    return drops;
}

static int
awafs_qos_sent_direct(struct qos_conf *conf, int qid, struct rte_mbuf **pkts,
                      int cnt, int n_sent)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    const struct awafs_dp_params *dp;
    struct awafs_txq *tq = awafs_qos_txq(aq, qid, &dp);

    return awafs_qos_queue_batch(tq, &dp->p, pkts, cnt, n_sent);
}

/* Ends the messages of flows that went idle and sent nothing since: every
 * AWAFS_SWEEP_INTERVAL_US an instance checks the next AWAFS_SWEEP_ENTRIES
 * flows of its table (4096 flows in 16 ms). */
static void
awafs_qos_tick(struct qos_conf *conf, int qid)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    uint64_t sizes[AWAFS_SWEEP_ENTRIES];
    uint8_t types[AWAFS_SWEEP_ENTRIES];
    uint8_t srcs[AWAFS_SWEEP_ENTRIES][16];
    const struct awafs_dp_params *dp;
    struct awafs_txq *tq = aq->txqs[qid];
    int64_t now;
    size_t n;

    if (!tq->flows) {
        return;
    }
    now = awafs_now_us();
    if (now < tq->next_sweep_us) {
        return;
    }
    tq = awafs_qos_txq(aq, qid, &dp);
    tq->next_sweep_us = now + AWAFS_SWEEP_INTERVAL_US;
    n = awafs_flowtab_sweep(tq->flows, AWAFS_SWEEP_ENTRIES, now,
                            dp->p.idle_us, sizes, types, srcs);
    for (size_t i = 0; i < n; i++) {
        awafs_qos_complete(aq, tq, now, sizes[i], types[i], srcs[i]);
    }
}

static int
awafs_qos_dequeue(struct qos_conf *conf, int qid, struct rte_mbuf **pkts,
                  int max)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    const struct awafs_dp_params *dp;
    struct awafs_txq *tq = awafs_qos_txq(aq, qid, &dp);
    uint64_t tick = rte_get_tsc_cycles() >> AWAFS_TICK_SHIFT;
    size_t n;

    if (tq->held_tick) {
        /* How long what it left held waited for this visit. */
        awafs_gaps_add(&tq->gaps, tick - tq->held_tick);
    }
    n = awafs_sched_peek(tq->sched, (void **) pkts, max,
                         awafs_txq_budget(aq, tq), tick);
    tq->held_tick = awafs_sched_backlog(tq->sched) ? tick : 0;
    return n;
}

static void
awafs_qos_commit(struct qos_conf *conf, int qid, int n_sent)
{
    struct awafs_txq *tq = awafs_qos_cast(conf)->txqs[qid];

    tq->credit -= awafs_sched_commit(tq->sched, n_sent);
}

static uint32_t
awafs_qos_backlog(const struct qos_conf *conf, int qid)
{
    return awafs_sched_backlog(awafs_qos_cast(conf)->txqs[qid]->sched);
}

static int
awafs_qos_queue_get(struct smap *details, uint32_t queue_id,
                    const struct qos_conf *conf)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    uint32_t n_queues = aq->params.n_queues;
    const struct awafs_thresholds *t;
    struct awafs_queue_stats qs;

    if (queue_id >= n_queues) {
        return EINVAL;
    }
    t = ovsrcu_get(struct awafs_thresholds *, &aq->thr);
    awafs_qos_queue_stats(aq, queue_id, &qs);
    smap_add_format(details, "priority", "%"PRIu32, queue_id);
    smap_add_format(details, "bytes-sent-min", "%"PRIu64,
                    queue_id ? t->thr[queue_id - 1] : 0);
    if (queue_id + 1 < n_queues) {
        smap_add_format(details, "bytes-sent-max", "%"PRIu64,
                        t->thr[queue_id]);
    }
    smap_add_format(details, "enqueued-packets", "%"PRIu64, qs.enq_packets);
    smap_add_format(details, "enqueued-bytes", "%"PRIu64, qs.enq_bytes);
    smap_add_format(details, "backlog-packets", "%"PRIu64,
                    qs.backlog_packets);
    smap_add_format(details, "backlog-bytes", "%"PRIu64, qs.backlog_bytes);
    smap_add_format(details, "dropped-packets", "%"PRIu64, qs.drop_packets);
    smap_add_format(details, "dropped-bytes", "%"PRIu64, qs.drop_bytes);
    smap_add_format(details, "flushed-packets", "%"PRIu64, qs.flush_packets);
    smap_add_format(details, "flushed-bytes", "%"PRIu64, qs.flush_bytes);
    smap_add_format(details, "ecn-marks", "%"PRIu64, qs.ecn_marks);
    smap_add_format(details, "aged-packets", "%"PRIu64, qs.aged_packets);
    smap_add_format(details, "pinned-packets", "%"PRIu64,
                    awafs_qos_pinned(aq, queue_id));
    smap_add_format(details, "sojourn-max-us", "%"PRIu64,
                    awafs_ticks_to_us(qs.sojourn_max));
    return 0;
}

static int
awafs_qos_queue_get_stats(const struct qos_conf *conf, uint32_t queue_id,
                          struct netdev_queue_stats *stats)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);
    struct awafs_queue_stats qs;

    if (queue_id >= aq->params.n_queues) {
        return EINVAL;
    }
    awafs_qos_queue_stats(aq, queue_id, &qs);
    stats->tx_packets = qs.tx_packets;
    stats->tx_bytes = qs.tx_bytes;
    stats->tx_errors = qs.drop_packets + qs.flush_packets;
    stats->created = aq->created;
    return 0;
}

static int
awafs_qos_queue_dump_state_init(const struct qos_conf *conf,
                                struct netdev_dpdk_queue_state *state)
{
    struct awafs_qos *aq = awafs_qos_cast(conf);

    state->n_queues = aq->params.n_queues;
    state->cur_queue = 0;
    state->queues = xmalloc(state->n_queues * sizeof *state->queues);
    for (size_t i = 0; i < state->n_queues; i++) {
        state->queues[i] = i;
    }
    return 0;
}

const struct dpdk_qos_ops awafs_ops = {
    .qos_name = "awafs",
    .qos_construct = awafs_qos_construct,
    .qos_destruct = awafs_qos_destruct,
    .qos_get = awafs_qos_get,
    .qos_is_equal = awafs_qos_is_equal,
    .qos_queue_get = awafs_qos_queue_get,
    .qos_queue_get_stats = awafs_qos_queue_get_stats,
    .qos_queue_dump_state_init = awafs_qos_queue_dump_state_init,
    .qos_check = awafs_qos_check,
    .qos_reconfigure = awafs_qos_reconfigure,
    .qos_set_n_txq = awafs_qos_set_n_txq,
    .qos_enqueue = awafs_qos_enqueue,
    .qos_sent_direct = awafs_qos_sent_direct,
    .qos_dequeue = awafs_qos_dequeue,
    .qos_commit = awafs_qos_commit,
    .qos_flush = awafs_qos_flush,
    .qos_set_link_speed = awafs_qos_set_link_speed,
    .qos_backlog = awafs_qos_backlog,
    .qos_tick = awafs_qos_tick,
};

/* "awafs/history PORT [N]": the last N threshold updates of PORT. */
static void
awafs_unixctl_history(struct unixctl_conn *conn, int argc,
                      const char *argv[], void *aux OVS_UNUSED)
{
    struct netdev *netdev = netdev_from_name(argv[1]);
    struct ds reply = DS_EMPTY_INITIALIZER;
    unsigned int n = AWAFS_HISTORY_LEN;
    struct qos_conf *qos_conf;

    if (argc > 2 && (!str_to_uint(argv[2], 10, &n) || !n)) {
        unixctl_command_reply_error(conn, "N must be a positive integer");
        goto out;
    }
    if (!netdev || !netdev_dpdk_get_qos_conf(netdev, &qos_conf)) {
        unixctl_command_reply_error(conn, "not a DPDK port");
        goto out;
    }
    if (!qos_conf || qos_conf->ops != &awafs_ops) {
        unixctl_command_reply_error(conn, "no awafs QoS on this port");
        goto out;
    } else {
        struct awafs_qos *aq = awafs_qos_cast(qos_conf);
        uint32_t n_thr = aq->params.core.n_queues - 1;
        uint64_t first;

        ovs_mutex_lock(&awafs_mutex);
        n = MIN(n, MIN(aq->n_history, AWAFS_HISTORY_LEN));
        first = aq->n_history - n;
        ds_put_format(&reply, "%s: last %u of %"PRIu64" threshold updates\n",
                      argv[1], n, aq->n_history);
        ds_put_cstr(&reply, "time                     version  samples  "
                    "thresholds\n");
        for (uint64_t i = first; i < aq->n_history; i++) {
            const struct awafs_update *u =
                &aq->history[i % AWAFS_HISTORY_LEN];
            char *when = xastrftime_msec("%Y-%m-%d %H:%M:%S.###",
                                         u->wall_ms, true);

            ds_put_format(&reply, "%-24s %7"PRIu64" %8"PRIu32"  ", when,
                          u->thr.version, u->thr.n_samples);
            awafs_format_u64_list(&reply, u->thr.thr, n_thr);
            if (u->load >= 0) {
                ds_put_format(&reply, "  model: load %.1f %%", u->load * 100);
            }
            if (u->mean_us >= 0) {
                ds_put_format(&reply, ", mean FCT %.0f us", u->mean_us);
            }
            ds_put_char(&reply, '\n');
            free(when);
        }
        ovs_mutex_unlock(&awafs_mutex);
    }
    unixctl_command_reply(conn, ds_cstr(&reply));
out:
    ds_destroy(&reply);
    netdev_close(netdev);
}
