/* awafs-sim: drives the AWAFS core (lib/) with a synthetic stream of flow
 * completions and prints the thresholds after every T_schedule round.
 *
 * Completions arrive at a fixed rate; sizes come from a flow-size CDF (the
 * ../shared/workloads format: "bytes cumulative_probability" per line,
 * linear interpolation between points, as ns-2's EmpiricalRV) or from the
 * thesis micro-benchmark mix (80 % 10 kB, 20 % 1000 kB).  The CDF is sampled
 * at a low-discrepancy sequence (u_i = frac(i * golden ratio)) rather than
 * random numbers, so every window holds a near-exact picture of the
 * distribution and runs are deterministic.
 *
 * With --predict it simulates nothing: it prints what the FCT model of
 * percentiles=auto predicts of given threshold sets for the CDF itself at
 * the --auto load, beside the model's own optima.
 *
 * Run with --help for the options. */

#include "awafs.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 256
#define GOLDEN 0.6180339887498949
#define MAX_PREDICT 16          /* Threshold sets --predict takes. */
#define PREDICT_FLOWS 100000    /* Flows --predict draws from the CDF. */

struct workload {
    const char *name;
    int n;
    double size[MAX_POINTS];
    double cdf[MAX_POINTS];
};

static void
die(const char *msg, const char *arg)
{
    fprintf(stderr, "awafs-sim: %s%s%s\n", msg, arg ? ": " : "",
            arg ? arg : "");
    exit(2);
}

static void
load_cdf(struct workload *w, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];

    if (!f) {
        die(strerror(errno), path);
    }
    w->name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    w->n = 0;
    while (fgets(line, sizeof line, f)) {
        double s, c;

        if (line[0] == '#' || sscanf(line, "%lf %lf", &s, &c) != 2) {
            continue;
        }
        if (w->n == MAX_POINTS) {
            die("too many points in", path);
        }
        if (w->n && (c < w->cdf[w->n - 1] || s < w->size[w->n - 1])) {
            die("CDF not monotonic in", path);
        }
        w->size[w->n] = s;
        w->cdf[w->n] = c;
        w->n++;
    }
    fclose(f);
    if (w->n < 1 || w->cdf[w->n - 1] != 1.0) {
        die("CDF must end at probability 1 in", path);
    }
}

static void
micro_workload(struct workload *w)
{
    /* A step CDF: P(10 kB) = 0.8, P(1000 kB) = 0.2. */
    *w = (struct workload) {
        .name = "micro-80%10kB-20%1000kB", .n = 4,
        .size = { 10000, 10000, 1000000, 1000000 },
        .cdf = { 0, 0.8, 0.8, 1.0 },
    };
}

/* Inverse CDF with linear interpolation. */
static uint64_t
sample(const struct workload *w, double u)
{
    for (int i = 0; i < w->n; i++) {
        if (u <= w->cdf[i]) {
            double x0, c0;

            if (i == 0 || w->cdf[i] == w->cdf[i - 1]) {
                return llround(w->size[i]);
            }
            x0 = w->size[i - 1];
            c0 = w->cdf[i - 1];
            return llround(x0 + (u - c0) / (w->cdf[i] - c0)
                           * (w->size[i] - x0));
        }
    }
    return llround(w->size[w->n - 1]);
}

/* Parses "a,b,c" into up to 'max' numbers scaled by 'scale'. */
static int
parse_list(const char *s, double scale, uint64_t *u64, uint32_t *u32,
           int max)
{
    char *copy = strdup(s), *save = NULL;
    int n = 0;

    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(tok, &end);

        if (*end || v < 0 || n == max) {
            die("bad list", s);
        }
        if (u64) {
            u64[n] = llround(v * scale);
        } else {
            u32[n] = lround(v * scale);
        }
        n++;
    }
    free(copy);
    return n;
}

static void
usage(void)
{
    printf("usage: awafs-sim [options] (--micro | --workload CDF)\n"
           "  --queues K            queues, 2..8 (default 2)\n"
           "  --percentiles P,...   RefPct in percent (default 10,20,..)\n"
           "  --thresholds T,...    InitThr in bytes (default 7000,14000,..)\n"
           "  --static              never adapt (PIAS baseline)\n"
           "  --window-ms W         W_update (default 250)\n"
           "  --interval-ms T       T_schedule (default 200)\n"
           "  --min-samples N       samples needed to update (default 20)\n"
           "  --rate R              completions per second (default 1000)\n"
           "  --duration-ms D       simulated time (default 2000)\n"
           "  --micro               thesis micro-benchmark mix\n"
           "  --workload CDF        flow-size CDF file\n"
           "  --shift-to CDF        switch to this CDF at --shift-at-ms\n"
           "  --shift-at-ms T       (default: half the duration)\n"
           "  --csv                 machine-readable output\n"
           "  --window-type T       exact (default) or histogram\n"
           "  --memory              print the per-port memory and exit\n"
           "  --auto LOAD           percentiles=auto: the FCT model's\n"
           "                        thresholds for the window, at port load\n"
           "                        LOAD in (0, 1)\n"
           "  --predict T1,T2,...   simulate nothing: print what the model\n"
           "                        predicts of these thresholds (repeat for\n"
           "                        more sets) for the --workload CDF at the\n"
           "                        --auto load, and the model's optima\n");
}

/* One line of --predict: the set 'name' and what the model predicts of it,
 * in byte times (the time the port takes to send a byte). */
static void
print_prediction(const char *name, const struct awafs_fct_plan *plan)
{
    printf("%-14s %14.0f %14.0f  ", name, plan->mean, plan->short_mean);
    for (uint32_t q = 0; q + 1 < plan->n_queues; q++) {
        printf("%s%"PRIu64, q ? "," : "", plan->thr[q]);
    }
    printf("\n");
}

/* --predict: the model's mean FCT of all flows and of the short ones for
 * 'n_sets' threshold sets 'sets' of 'queues' queues, for 'w' itself (drawn
 * at PREDICT_FLOWS evenly spaced probabilities) at 'load', and the sets
 * that minimise each of the two. */
static void
predict(const struct workload *w, uint32_t queues, double load,
        uint64_t sets[][AWAFS_MAX_THRESHOLDS], int n_sets)
{
    static struct awafs_fct_point points[PREDICT_FLOWS];
    const uint64_t short_size = AWAFS_FCT_SHORT_SIZE;
    uint64_t thr[AWAFS_MAX_THRESHOLDS];
    struct awafs_fct_plan plan;
    size_t n = 0;

    /* Ascending, as sample() is in its probability. */
    for (int i = 0; i < PREDICT_FLOWS; i++) {
        uint64_t size = sample(w, (i + 0.5) / PREDICT_FLOWS);

        if (n && points[n - 1].size == size) {
            points[n - 1].count++;
        } else {
            points[n++] = (struct awafs_fct_point) { size, 1 };
        }
    }
    printf("FCT model of %s at load %.2f, %"PRIu32" queues, short flows up "
           "to %"PRIu64" B; FCTs in byte times\n", w->name, load, queues,
           short_size);
    printf("%-14s %14s %14s  %s\n", "set", "mean", "short mean",
           "thresholds (bytes)");
    if (!awafs_fct_solve(AWAFS_FCT_MLFQ, short_size, points, n, queues,
                         load, &plan)) {
        die("the model has nothing to weigh", NULL);
    }
    /* The same set under the model that also says its short flows'. */
    memcpy(thr, plan.thr, sizeof thr);
    awafs_fct_evaluate(AWAFS_FCT_MLFQ_SHORT, short_size, points, n, queues,
                       load, thr, &plan);
    print_prediction("optimum fct", &plan);
    awafs_fct_solve(AWAFS_FCT_MLFQ_SHORT, short_size, points, n, queues,
                    load, &plan);
    print_prediction("optimum short", &plan);
    for (int i = 0; i < n_sets; i++) {
        char name[16];

        awafs_fct_evaluate(AWAFS_FCT_MLFQ_SHORT, short_size, points, n,
                           queues, load, sets[i], &plan);
        snprintf(name, sizeof name, "set %d", i + 1);
        print_prediction(name, &plan);
    }
}

int
main(int argc, char *argv[])
{
    enum { OPT_QUEUES = 256, OPT_PCT, OPT_THR, OPT_STATIC, OPT_WINDOW,
           OPT_INTERVAL, OPT_MIN, OPT_RATE, OPT_DURATION, OPT_MICRO,
           OPT_WORKLOAD, OPT_SHIFT_TO, OPT_SHIFT_AT, OPT_CSV, OPT_MEMORY,
           OPT_WINDOW_TYPE, OPT_AUTO, OPT_PREDICT, OPT_HELP };
    static const struct option long_opts[] = {
        { "queues", required_argument, NULL, OPT_QUEUES },
        { "percentiles", required_argument, NULL, OPT_PCT },
        { "thresholds", required_argument, NULL, OPT_THR },
        { "static", no_argument, NULL, OPT_STATIC },
        { "window-ms", required_argument, NULL, OPT_WINDOW },
        { "interval-ms", required_argument, NULL, OPT_INTERVAL },
        { "min-samples", required_argument, NULL, OPT_MIN },
        { "rate", required_argument, NULL, OPT_RATE },
        { "duration-ms", required_argument, NULL, OPT_DURATION },
        { "micro", no_argument, NULL, OPT_MICRO },
        { "workload", required_argument, NULL, OPT_WORKLOAD },
        { "shift-to", required_argument, NULL, OPT_SHIFT_TO },
        { "shift-at-ms", required_argument, NULL, OPT_SHIFT_AT },
        { "csv", no_argument, NULL, OPT_CSV },
        { "memory", no_argument, NULL, OPT_MEMORY },
        { "window-type", required_argument, NULL, OPT_WINDOW_TYPE },
        { "auto", required_argument, NULL, OPT_AUTO },
        { "predict", required_argument, NULL, OPT_PREDICT },
        { "help", no_argument, NULL, OPT_HELP },
        { NULL, 0, NULL, 0 },
    };
    struct workload first = { .n = 0 }, second = { .n = 0 };
    const char *pct_arg = NULL, *thr_arg = NULL;
    double rate = 1000;
    int64_t duration_us = 2000 * 1000, shift_us = -1;
    struct awafs_config cfg;
    uint32_t queues = 2;
    struct awafs_adapt *a;
    bool csv = false, is_static = false, memory = false, hist = false;
    int64_t window_ms = 250, interval_ms = 200, min_samples = 20;
    double load = 0;            /* With --auto: in (0, 1). */
    const char *predict_args[MAX_PREDICT];
    int n_predict = 0;
    int opt;

    while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
        switch (opt) {
        case OPT_QUEUES: queues = atoi(optarg); break;
        case OPT_PCT: pct_arg = optarg; break;
        case OPT_THR: thr_arg = optarg; break;
        case OPT_STATIC: is_static = true; break;
        case OPT_WINDOW: window_ms = atoll(optarg); break;
        case OPT_INTERVAL: interval_ms = atoll(optarg); break;
        case OPT_MIN: min_samples = atoll(optarg); break;
        case OPT_RATE: rate = atof(optarg); break;
        case OPT_DURATION: duration_us = atoll(optarg) * 1000; break;
        case OPT_MICRO: micro_workload(&first); break;
        case OPT_WORKLOAD: load_cdf(&first, optarg); break;
        case OPT_SHIFT_TO: load_cdf(&second, optarg); break;
        case OPT_SHIFT_AT: shift_us = atoll(optarg) * 1000; break;
        case OPT_CSV: csv = true; break;
        case OPT_MEMORY: memory = true; break;
        case OPT_WINDOW_TYPE:
            if (strcmp(optarg, "exact") && strcmp(optarg, "histogram")) {
                die("--window-type is exact or histogram", optarg);
            }
            hist = !strcmp(optarg, "histogram");
            break;
        case OPT_AUTO:
            load = atof(optarg);
            if (!(load > 0 && load < 1)) {
                die("--auto needs a load in (0, 1)", optarg);
            }
            break;
        case OPT_PREDICT:
            if (n_predict == MAX_PREDICT) {
                die("too many --predict sets", optarg);
            }
            predict_args[n_predict++] = optarg;
            break;
        case OPT_HELP: usage(); return 0;
        default: usage(); return 2;
        }
    }
    if (memory) {
        struct awafs_config more;

        awafs_config_default(&cfg, queues);
        more = cfg;
        more.window_capacity++;
        printf("per-port memory at the defaults, exact window: %zu bytes "
               "(%"PRIu32" samples x %zu B, ring %"PRIu32" slots: %zu B)\n",
               awafs_adapt_memsize(&cfg), cfg.window_capacity,
               awafs_adapt_memsize(&more) - awafs_adapt_memsize(&cfg),
               cfg.ring_capacity, awafs_ring_memsize(cfg.ring_capacity));
        cfg.window_kind = AWAFS_WINDOW_HISTOGRAM;
        printf("per-port memory at the defaults, histogram window: %zu "
               "bytes (histograms %zu B, any completion rate)\n",
               awafs_adapt_memsize(&cfg), awafs_histwin_memsize());
        return 0;
    }
    if (!first.n) {
        usage();
        return 2;
    }
    if (rate <= 0) {
        die("--rate must be positive", NULL);
    }
    if (n_predict) {
        uint64_t sets[MAX_PREDICT][AWAFS_MAX_THRESHOLDS];

        if (!(load > 0) || queues < AWAFS_MIN_QUEUES
            || queues > AWAFS_MAX_QUEUES) {
            die("--predict needs --auto LOAD and 2 to 8 --queues", NULL);
        }
        for (int i = 0; i < n_predict; i++) {
            if (parse_list(predict_args[i], 1, sets[i], NULL,
                           AWAFS_MAX_THRESHOLDS) != (int) queues - 1) {
                die("--predict needs queues - 1 values", predict_args[i]);
            }
            for (uint32_t q = 1; q + 1 < queues; q++) {
                if (sets[i][q] < sets[i][q - 1]) {
                    die("--predict's thresholds must not decrease",
                        predict_args[i]);
                }
            }
        }
        predict(&first, queues, load, sets, n_predict);
        return 0;
    }

    awafs_config_default(&cfg, queues);
    if (pct_arg && parse_list(pct_arg, 1000, NULL, cfg.pct_milli,
                              AWAFS_MAX_THRESHOLDS) != (int) queues - 1) {
        die("--percentiles needs queues - 1 values", pct_arg);
    }
    if (thr_arg && parse_list(thr_arg, 1, cfg.init_thr, NULL,
                              AWAFS_MAX_THRESHOLDS) != (int) queues - 1) {
        die("--thresholds needs queues - 1 values", thr_arg);
    }
    cfg.adaptive = !is_static;
    cfg.window_kind = hist ? AWAFS_WINDOW_HISTOGRAM : AWAFS_WINDOW_EXACT;
    cfg.window_us = window_ms * 1000;
    cfg.interval_us = interval_ms * 1000;
    cfg.min_samples = min_samples;
    cfg.minimise_fct = load > 0;
    /* Room for two rounds of completions between drains. */
    while (cfg.ring_capacity < 2 * rate * interval_ms / 1000
           && cfg.ring_capacity < (1u << 24)) {
        cfg.ring_capacity *= 2;
    }
    if (awafs_config_check(&cfg)) {
        die(awafs_config_check(&cfg), NULL);
    }
    a = awafs_adapt_create(&cfg);
    if (!a) {
        die("out of memory", NULL);
    }
    if (cfg.minimise_fct) {
        awafs_adapt_set_load(a, load);
    }
    if (second.n && shift_us < 0) {
        shift_us = duration_us / 2;
    }

    if (csv) {
        printf("t_ms,workload,version,samples");
        for (uint32_t i = 0; i + 1 < queues; i++) {
            printf(",thr%"PRIu32, i);
        }
        printf("\n");
    } else {
        printf("AWAFS core simulation: %"PRIu32" queues, %s, W=%"PRId64
               " ms, T=%"PRId64" ms, %.0f completions/s\n", queues,
               is_static ? "static" : "adaptive", window_ms, interval_ms,
               rate);
        printf("%8s  %-28s %7s %8s  %s\n", "t(ms)", "workload", "version",
               "samples", "thresholds (bytes)");
    }

    uint64_t i = 0;
    for (int64_t now = 0; now <= duration_us; now += cfg.interval_us) {
        struct awafs_thresholds t;
        const struct workload *w = &first;

        /* Completions of this round: ts_i = i / rate. */
        for (;;) {
            int64_t ts = (int64_t) (i * 1e6 / rate);
            double u = fmod(i * GOLDEN, 1.0);

            if (ts >= now) {
                break;
            }
            w = second.n && ts >= shift_us ? &second : &first;
            if (!awafs_ring_push(awafs_adapt_ring(a), ts, sample(w, u))) {
                die("completion ring overflow: lower --rate", NULL);
            }
            i++;
        }
        w = second.n && now > shift_us ? &second : &first;
        if (now) {
            awafs_adapt_update(a, now, &t);
        } else {
            awafs_adapt_current(a, &t);     /* InitThr. */
        }
        printf(csv ? "%"PRId64",%s,%"PRIu64",%"PRIu32
                   : "%8"PRId64"  %-28s %7"PRIu64" %8"PRIu32" ",
               now / 1000, w->name, t.version, t.n_samples);
        for (uint32_t q = 0; q + 1 < queues; q++) {
            printf(csv ? ",%"PRIu64 : " %"PRIu64, t.thr[q]);
        }
        printf("\n");
    }
    awafs_adapt_destroy(a);
    return 0;
}
