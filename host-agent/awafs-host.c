/* awafs-host: makes the TCP connections of a cgroup report AWAFS headers.
 *
 *   awafs-host attach --cgroup PATH [--coalesce-us N] [--records] [--cc NAME]
 *                     [--karuna]
 *   awafs-host detach --cgroup PATH
 *   awafs-host status [--cgroup PATH]
 *   awafs-host per-segment IFACE on|off
 *   awafs-host dctcp register [--system] [--mcp-capacity BPS] | unregister
 *                    | status
 *
 * 'attach' loads awafs_sockops.bpf.c, attaches it to the cgroup v2 directory
 * PATH and pins the link and its counters under /sys/fs/bpf/awafs/ID (ID:
 * the cgroup's inode number), so that the attachment outlives this process
 * and 'status' and 'detach' find it.  Unmodified applications in the cgroup
 * (and its descendants) then send the option on every data segment, and
 * report each message's size when it ends (host-agent/README.md: MSG_EOR
 * records, or the turnaround and --coalesce-us rules).  'status' prints the
 * counters and the sizes reported, as a log2 histogram.  With --karuna,
 * each socket's mark is its Karuna word (deadline and size, see
 * host-agent/README.md) and rides in the option too.
 *
 * 'per-segment' sets the GSO segment limit of IFACE to 1 (on) or back to
 * the kernel default (off), so that every segment gets its own option.
 *
 * 'dctcp register' loads awafs_dctcp.bpf.c, DCTCP as a BPF congestion
 * control named "awafs_dctcp" (this kernel has no tcp_dctcp), and pins it so
 * that it stays registered; --system also makes it the default of this
 * network namespace.  'attach --cc awafs_dctcp' selects it for a cgroup's
 * connections instead.  It registers "awafs_mcp" too: Karuna's MCP, DCTCP
 * whose messages with a deadline in their socket's mark take just the rate
 * that meets it ('attach --cc awafs_mcp --karuna'); --mcp-capacity gives it
 * the bottleneck's rate, so that it gives up a deadline it can no longer
 * make before the deadline passes. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "awafs_dctcp.skel.h"
#include "awafs_sockops.skel.h"

#define PIN_ROOT "/sys/fs/bpf/awafs"
#define DCTCP_PIN PIN_ROOT "-dctcp"         /* Outside PIN_ROOT's cgroups. */
#define CC_SYSCTL "/proc/sys/net/ipv4/tcp_congestion_control"
#define CGROUP2_MAGIC 0x63677270
#define BPF_FS_MAGIC 0xcafe4a11

static const char *const counter_names[] = {
    "connections", "messages", "options", "completions", "no-space",
    "retransmits", "errors", "end-record", "end-turnaround", "end-idle",
    "end-fin", "lost", "karuna", "mark-not-tcp",
};
#define N_SIZE_BUCKETS 33       /* As in awafs_sockops.bpf.c. */
/* Default coalescing time: see host-agent/README.md for the measurements. */
#define COALESCE_US_DEFAULT 10000
#define N_COUNTERS (sizeof counter_names / sizeof counter_names[0])

static void
usage(FILE *f)
{
    fprintf(f, "usage: awafs-host attach --cgroup PATH [--coalesce-us N] "
               "[--records] [--cc NAME] [--karuna]\n"
               "       awafs-host detach --cgroup PATH\n"
               "       awafs-host status [--cgroup PATH]\n"
               "       awafs-host per-segment IFACE on|off\n"
               "       awafs-host dctcp register [--system] "
               "[--mcp-capacity BPS] | unregister | status\n");
}

static int
fail(const char *fmt, const char *arg, int err)
{
    fprintf(stderr, "awafs-host: ");
    fprintf(stderr, fmt, arg);
    if (err) {
        fprintf(stderr, ": %s", strerror(err));
    }
    fputc('\n', stderr);
    return 1;
}

/* Fills 'dir' with the pin directory of cgroup 'path' after checking that
 * it is a cgroup v2 directory. */
static int
pin_dir(const char *path, char *dir, size_t size)
{
    struct statfs sfs;
    struct stat st;

    if (statfs(path, &sfs) || stat(path, &st)) {
        return fail("%s", path, errno);
    }
    if (sfs.f_type != CGROUP2_MAGIC || !S_ISDIR(st.st_mode)) {
        return fail("%s is not a cgroup v2 directory (cgroup2 is mounted "
                    "at /sys/fs/cgroup/unified here, or /sys/fs/cgroup)",
                    path, 0);
    }
    snprintf(dir, size, PIN_ROOT "/%llu", (unsigned long long) st.st_ino);
    return 0;
}

static int
ensure_bpffs(void)
{
    struct statfs sfs;

    if (!statfs("/sys/fs/bpf", &sfs) && sfs.f_type == BPF_FS_MAGIC) {
        return 0;
    }
    mkdir("/sys/fs/bpf", 0700);
    if (mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL)) {
        return fail("cannot mount bpffs on %s", "/sys/fs/bpf", errno);
    }
    return 0;
}

/* Removes what 'attach' pinned in 'dir' (not 'dir' itself). */
static void
unlink_pins(const char *dir)
{
    static const char *const pins[] = { "link", "link-setsockopt",
                                        "counters", "sizes" };
    char pin[PATH_MAX + 16];

    for (size_t i = 0; i < sizeof pins / sizeof pins[0]; i++) {
        snprintf(pin, sizeof pin, "%s/%s", dir, pins[i]);
        unlink(pin);
    }
}

static int
cmd_attach(const char *cgroup, unsigned long coalesce_us, int records,
           const char *cc, int karuna)
{
    char dir[PATH_MAX], pin[PATH_MAX + 16];
    struct bpf_link *link, *mark_link = NULL;
    struct awafs_sockops *skel;
    int cgfd, err;

    if (pin_dir(cgroup, dir, sizeof dir) || ensure_bpffs()) {
        return 1;
    }
    if (!access(dir, F_OK)) {
        return fail("already attached to %s (detach first)", cgroup, 0);
    }
    cgfd = open(cgroup, O_RDONLY | O_DIRECTORY);
    if (cgfd < 0) {
        return fail("%s", cgroup, errno);
    }
    skel = awafs_sockops__open();
    if (!skel) {
        close(cgfd);
        return fail("cannot open the BPF object%s", "", errno);
    }
    skel->rodata->coalesce_ns = (unsigned long long) coalesce_us * 1000;
    skel->rodata->records_only = records;
    skel->rodata->karuna_mark = karuna;
    if (cc) {
        if (strlen(cc) >= sizeof skel->rodata->cc_name) {
            awafs_sockops__destroy(skel);
            close(cgfd);
            return fail("--cc: \"%s\" is too long", cc, 0);
        }
        strcpy((char *) skel->rodata->cc_name, cc);
    }
    err = awafs_sockops__load(skel);
    if (err) {
        awafs_sockops__destroy(skel);
        close(cgfd);
        return fail("cannot load the BPF program (kernel without BTF, "
                    "sock_ops header options or sk_storage?)%s", "", -err);
    }
    link = bpf_program__attach_cgroup(skel->progs.awafs_sockops, cgfd);
    if (link && karuna) {
        mark_link = bpf_program__attach_cgroup(skel->progs.awafs_setsockopt,
                                               cgfd);
    }
    close(cgfd);
    if (!link || (karuna && !mark_link)) {
        err = errno;
        bpf_link__destroy(link);
        awafs_sockops__destroy(skel);
        return fail("cannot attach to %s", cgroup, err);
    }
    mkdir(PIN_ROOT, 0700);
    if (mkdir(dir, 0700)) {
        err = errno;
        bpf_link__destroy(link);
        bpf_link__destroy(mark_link);
        awafs_sockops__destroy(skel);
        return fail("%s", dir, err);
    }
    snprintf(pin, sizeof pin, "%s/link", dir);
    err = bpf_link__pin(link, pin);
    if (!err && mark_link) {
        snprintf(pin, sizeof pin, "%s/link-setsockopt", dir);
        err = bpf_link__pin(mark_link, pin);
    }
    if (!err) {
        snprintf(pin, sizeof pin, "%s/counters", dir);
        err = bpf_map__pin(skel->maps.counters, pin);
    }
    if (!err) {
        snprintf(pin, sizeof pin, "%s/sizes", dir);
        err = bpf_map__pin(skel->maps.sizes, pin);
    }
    if (err) {
        unlink_pins(dir);
        rmdir(dir);
        bpf_link__destroy(link);
        bpf_link__destroy(mark_link);
        awafs_sockops__destroy(skel);
        return fail("cannot pin under %s", dir, -err);
    }
    printf("awafs-host: attached to %s (messages: %s, coalesce %lu us%s%s%s"
           "), pinned in %s\n", cgroup,
           records ? "MSG_EOR records" : "MSG_EOR, turnaround, coalescing",
           coalesce_us, cc ? ", congestion control " : "", cc ? cc : "",
           karuna ? ", Karuna marks" : "", dir);
    bpf_link__destroy(link);    /* The pins keep them attached. */
    bpf_link__destroy(mark_link);
    awafs_sockops__destroy(skel);
    return 0;
}

static int
cmd_detach(const char *cgroup)
{
    char dir[PATH_MAX];

    if (pin_dir(cgroup, dir, sizeof dir)) {
        return 1;
    }
    if (access(dir, F_OK)) {
        return fail("not attached to %s", cgroup, 0);
    }
    /* The pinned link is the last reference: removing it detaches. */
    unlink_pins(dir);
    if (rmdir(dir)) {
        return fail("%s", dir, errno);
    }
    printf("awafs-host: detached from %s\n", cgroup);
    return 0;
}

/* Sums the per-CPU values of 'n' keys of the pinned array 'pin' into
 * 'sums'. */
static int
read_percpu_array(const char *pin, unsigned long long *sums, unsigned int n)
{
    int ncpus = libbpf_num_possible_cpus();
    unsigned long long *vals;
    int fd;

    fd = bpf_obj_get(pin);
    if (fd < 0 || ncpus <= 0) {
        return fail("cannot read %s", pin, errno);
    }
    vals = calloc(ncpus, sizeof *vals);
    for (unsigned int k = 0; k < n; k++) {
        sums[k] = 0;
        if (vals && !bpf_map_lookup_elem(fd, &k, vals)) {
            for (int c = 0; c < ncpus; c++) {
                sums[k] += vals[c];
            }
        }
    }
    free(vals);
    close(fd);
    return 0;
}

/* One line of counters, then the sizes of the completions reported (what
 * the switch learns from) as "size-hist [LOW,HIGH): N" lines. */
static int
print_status(const char *dir, const char *id)
{
    unsigned long long c[N_COUNTERS], h[N_SIZE_BUCKETS];
    char pin[PATH_MAX + 16];

    snprintf(pin, sizeof pin, "%s/counters", dir);
    if (read_percpu_array(pin, c, N_COUNTERS)) {
        return 1;
    }
    snprintf(pin, sizeof pin, "%s/sizes", dir);
    if (read_percpu_array(pin, h, N_SIZE_BUCKETS)) {
        return 1;
    }
    printf("cgroup %s:", id);
    for (unsigned int k = 0; k < N_COUNTERS; k++) {
        printf(" %s=%llu", counter_names[k], c[k]);
    }
    printf("\n");
    for (unsigned int b = 0; b < N_SIZE_BUCKETS; b++) {
        if (h[b]) {
            printf("  size-hist [%llu,%llu): %llu\n",
                   b ? 1ULL << (b - 1) : 0ULL, 1ULL << b, h[b]);
        }
    }
    return 0;
}

static int
cmd_status(const char *cgroup)
{
    char dir[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int n = 0;

    if (cgroup) {
        if (pin_dir(cgroup, dir, sizeof dir)) {
            return 1;
        }
        if (access(dir, F_OK)) {
            return fail("not attached to %s", cgroup, 0);
        }
        return print_status(dir, strrchr(dir, '/') + 1);
    }
    d = opendir(PIN_ROOT);
    while (d && (de = readdir(d))) {
        if (de->d_name[0] != '.') {
            snprintf(dir, sizeof dir, PIN_ROOT "/%s", de->d_name);
            print_status(dir, de->d_name);
            n++;
        }
    }
    if (d) {
        closedir(d);
    }
    if (!n) {
        printf("awafs-host: not attached anywhere\n");
    }
    return 0;
}

/* GSO limited to one segment, so that the option is written per segment
 * (the option is written once per GSO super-packet otherwise). */
static int
cmd_per_segment(const char *iface, const char *mode)
{
    char cmd[256];

    if (strcmp(mode, "on") && strcmp(mode, "off")) {
        usage(stderr);
        return 2;
    }
    if (strlen(iface) > 15 || strspn(iface, "abcdefghijklmnopqrstuvwxyz"
                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789.-_@") != strlen(iface)) {
        return fail("\"%s\" is not an interface name", iface, 0);
    }
    snprintf(cmd, sizeof cmd, "ip link set dev %s gso_max_segs %s", iface,
             !strcmp(mode, "on") ? "1" : "65535");
    if (system(cmd)) {
        return fail("could not set the GSO limit of %s", iface, 0);
    }
    printf("awafs-host: per-segment options %s on %s\n", mode, iface);
    return 0;
}

static int
write_sysctl(const char *path, const char *value)
{
    FILE *f = fopen(path, "w");

    if (!f || fputs(value, f) < 0 || fclose(f)) {
        return fail("cannot write %s", path, errno);
    }
    return 0;
}

/* Whether the kernel offers congestion control 'name' (a global list, also
 * seen from other network and mount namespaces). */
static int
cc_available(const char *name)
{
    char list[1024], *save = NULL;
    FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control",
                    "r");
    int found = 0;

    if (f && fgets(list, sizeof list, f)) {
        for (char *tok = strtok_r(list, " \n", &save); tok && !found;
             tok = strtok_r(NULL, " \n", &save)) {
            found = !strcmp(tok, name);
        }
    }
    if (f) {
        fclose(f);
    }
    return found;
}

/* What 'dctcp register' pins under DCTCP_PIN: the two struct_ops maps
 * first, then their counters. */
static const char *const dctcp_pins[] = { "ops", "mcp-ops", "reductions",
                                          "mcp-stats", "mcp-capacity" };
#define N_DCTCP_OPS 2

/* Pins 'map' as 'name' under DCTCP_PIN. */
static int
pin_dctcp_map(struct bpf_map *map, const char *name)
{
    char pin[PATH_MAX];
    int err;

    snprintf(pin, sizeof pin, "%s/%s", DCTCP_PIN, name);
    err = bpf_map__pin(map, pin);
    return err ? fail("cannot pin %s", pin, -err) : 0;
}

/* Registers 'ops' and pins it as 'name' under DCTCP_PIN: the pinned map
 * keeps it registered after we exit. */
static int
register_ops(struct bpf_map *ops, const char *name)
{
    struct bpf_link *link;
    int err;

    link = bpf_map__attach_struct_ops(ops);
    if (!link) {
        return fail("cannot register %s", bpf_map__name(ops), errno);
    }
    err = pin_dctcp_map(ops, name);
    bpf_link__disconnect(link);
    bpf_link__destroy(link);
    return err;
}

/* Sets awafs_mcp's capacity (bits/s, 0: unknown) in its pinned map. */
static int
set_mcp_capacity(unsigned long long bps)
{
    char pin[PATH_MAX];
    int fd, key = 0, err;

    snprintf(pin, sizeof pin, "%s/mcp-capacity", DCTCP_PIN);
    fd = bpf_obj_get(pin);
    if (fd < 0) {
        return fail("cannot open %s", pin, errno);
    }
    err = bpf_map_update_elem(fd, &key, &bps, BPF_ANY) ? errno : 0;
    close(fd);
    return err ? fail("cannot set the capacity in %s", pin, err) : 0;
}

/* 'mcp_capacity' < 0: keep awafs_mcp's capacity as it is. */
static int
dctcp_register(int system_wide, long long mcp_capacity)
{
    struct awafs_dctcp *skel;
    int err;

    if (ensure_bpffs()) {
        return 1;
    }
    if (cc_available("awafs_mcp")) {
        printf("awafs-host: awafs_dctcp and awafs_mcp already registered\n");
    } else {
        skel = awafs_dctcp__open_and_load();
        if (!skel) {
            return fail("cannot load awafs_dctcp (kernel without BPF "
                        "struct_ops for TCP congestion control?)%s", "",
                        errno);
        }
        struct bpf_map *maps[] = { skel->maps.awafs_dctcp,
                                   skel->maps.awafs_mcp,
                                   skel->maps.reductions,
                                   skel->maps.mcp_stats,
                                   skel->maps.mcp_capacity_bps };

        mkdir(DCTCP_PIN, 0700);
        err = 0;
        for (size_t i = 0; !err && i < sizeof maps / sizeof maps[0]; i++) {
            err = (i < N_DCTCP_OPS
                   ? register_ops(maps[i], dctcp_pins[i])
                   : pin_dctcp_map(maps[i], dctcp_pins[i]));
        }
        awafs_dctcp__destroy(skel);
        if (err) {
            return err;
        }
        printf("awafs-host: awafs_dctcp and awafs_mcp registered\n");
    }
    if (mcp_capacity >= 0 && set_mcp_capacity(mcp_capacity)) {
        return 1;
    }
    return system_wide ? write_sysctl(CC_SYSCTL, "awafs_dctcp") : 0;
}

static int
dctcp_unregister(void)
{
    char pin[PATH_MAX], cur[32] = "";
    int zero = 0;
    FILE *f;

    snprintf(pin, sizeof pin, "%s/ops", DCTCP_PIN);
    if (access(pin, F_OK)) {
        return fail("awafs_dctcp is not registered%s", "", 0);
    }
    f = fopen(CC_SYSCTL, "r");
    if (f && fgets(cur, sizeof cur, f) && !strncmp(cur, "awafs_", 6)) {
        write_sysctl(CC_SYSCTL, "cubic");
    }
    if (f) {
        fclose(f);
    }
    for (size_t i = 0; i < sizeof dctcp_pins / sizeof dctcp_pins[0]; i++) {
        snprintf(pin, sizeof pin, "%s/%s", DCTCP_PIN, dctcp_pins[i]);
        if (i < N_DCTCP_OPS) {
            int fd = bpf_obj_get(pin);

            if (fd >= 0) {
                bpf_map_delete_elem(fd, &zero);     /* Unregisters it. */
                close(fd);
            }
        }
        unlink(pin);
    }
    rmdir(DCTCP_PIN);
    printf("awafs-host: awafs_dctcp and awafs_mcp unregistered\n");
    return 0;
}

/* Reads the one value of the array map pinned as 'name' under DCTCP_PIN
 * into 'value', of 'size' bytes; nonzero if there is none.  Returns
 * -EPROTO, with a message, if its values are of another size (registered
 * by another version of awafs-host: the lookup would write past
 * 'value'). */
static int
read_dctcp_pin(const char *name, void *value, size_t size)
{
    struct bpf_map_info info = { 0 };
    unsigned int info_len = sizeof info;
    char pin[PATH_MAX];
    int fd, key = 0, err;

    snprintf(pin, sizeof pin, "%s/%s", DCTCP_PIN, name);
    fd = bpf_obj_get(pin);
    if (fd < 0) {
        return -1;
    }
    err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
    if (!err && info.value_size != size) {
        fprintf(stderr, "awafs-host: %s/%s holds values of %u bytes, this "
                "awafs-host reads %zu: registered by another version "
                "(dctcp unregister, then register)\n", DCTCP_PIN, name,
                (unsigned int) info.value_size, size);
        err = -EPROTO;
    }
    if (!err) {
        err = bpf_map_lookup_elem(fd, &key, value);
    }
    close(fd);
    return err;
}

static int
dctcp_status(void)
{
    struct {
        unsigned int cwnd, alpha, ssthresh, count;
        unsigned int acks, ece_acks, ce_changes, no_ce_changes;
        unsigned int alpha_updates, last_alpha, inits;
        unsigned int ssthresh_repairs, ssthresh_stored;
    } r;
    struct {
        unsigned int messages, rate_updates, terminated_late;
        unsigned int terminated_capacity, last_rate, setsockopt_errors;
    } m;
    unsigned long long capacity;
    int err;

    err = read_dctcp_pin("reductions", &r, sizeof r);
    if (err) {
        return (err == -EPROTO
                ? 1 : fail("awafs_dctcp is not registered%s", "", 0));
    }
    printf("awafs_dctcp: reductions=%u last: cwnd=%u alpha=%u/1024 "
           "ssthresh=%u acks=%u ece-acks=%u ce-changes=%u "
           "no-ce-changes=%u alpha-updates=%u alpha-now=%u/1024 "
           "inits=%u ssthresh-repairs=%u ssthresh-stored=%#x\n",
           r.count, r.cwnd, r.alpha, r.ssthresh, r.acks, r.ece_acks,
           r.ce_changes, r.no_ce_changes, r.alpha_updates, r.last_alpha,
           r.inits, r.ssthresh_repairs, r.ssthresh_stored);
    err = read_dctcp_pin("mcp-stats", &m, sizeof m);
    if (!err) {
        err = read_dctcp_pin("mcp-capacity", &capacity, sizeof capacity);
    }
    if (err) {
        return (err == -EPROTO
                ? 1 : fail("awafs_mcp is not registered%s", "", 0));
    }
    printf("awafs_mcp: capacity=%llu deadline-messages=%u rate-updates=%u "
           "terminated-late=%u terminated-capacity=%u last-rate=%u "
           "setsockopt-errors=%u\n",
           capacity, m.messages, m.rate_updates, m.terminated_late,
           m.terminated_capacity, m.last_rate, m.setsockopt_errors);
    return 0;
}

static int
cmd_dctcp(const char *what, int system_wide, long long mcp_capacity)
{
    if (!strcmp(what, "register")) {
        return dctcp_register(system_wide, mcp_capacity);
    } else if (!strcmp(what, "unregister")) {
        return dctcp_unregister();
    } else if (!strcmp(what, "status")) {
        return dctcp_status();
    }
    usage(stderr);
    return 2;
}

int
main(int argc, char *argv[])
{
    static const struct option opts[] = {
        { "cgroup", required_argument, NULL, 'c' },
        { "coalesce-us", required_argument, NULL, 'i' },
        { "records", no_argument, NULL, 'r' },
        { "karuna", no_argument, NULL, 'k' },
        { "cc", required_argument, NULL, 'C' },
        { "system", no_argument, NULL, 's' },
        { "mcp-capacity", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *cmd, *cgroup = NULL, *cc = NULL;
    unsigned long coalesce_us = COALESCE_US_DEFAULT;
    long long mcp_capacity = -1;
    int system_wide = 0, records = 0, karuna = 0;
    char *end;
    int opt;

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    cmd = argv[1];
    optind = 2;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cgroup = optarg;
            break;
        case 'i':
            errno = 0;
            coalesce_us = strtoul(optarg, &end, 10);
            if (errno || *end || !coalesce_us || coalesce_us > 60000000) {
                return fail("--coalesce-us: \"%s\" is not an integer "
                            "between 1 and 60000000", optarg, 0);
            }
            break;
        case 'C':
            cc = optarg;
            break;
        case 'r':
            records = 1;
            break;
        case 'k':
            karuna = 1;
            break;
        case 's':
            system_wide = 1;
            break;
        case 'm':
            errno = 0;
            mcp_capacity = strtoll(optarg, &end, 10);
            if (errno || *end || end == optarg || mcp_capacity < 0) {
                return fail("--mcp-capacity: \"%s\" is not a number of "
                            "bits per second (0: unknown)", optarg, 0);
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (geteuid()) {
        return fail("%s needs root (it loads and attaches BPF programs)",
                    cmd, 0);
    }
    if (!getenv("AWAFS_HOST_DEBUG")) {
        libbpf_set_print(NULL);     /* Our messages say what failed. */
    }
    if (!strcmp(cmd, "attach") && cgroup) {
        return cmd_attach(cgroup, coalesce_us, records, cc, karuna);
    } else if (!strcmp(cmd, "detach") && cgroup) {
        return cmd_detach(cgroup);
    } else if (!strcmp(cmd, "status")) {
        return cmd_status(cgroup);
    } else if (!strcmp(cmd, "per-segment") && argc == 4) {
        return cmd_per_segment(argv[2], argv[3]);
    } else if (!strcmp(cmd, "dctcp") && optind < argc) {
        return cmd_dctcp(argv[optind], system_wide, mcp_capacity);
    }
    usage(stderr);
    return 2;
}
