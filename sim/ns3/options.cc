/*
 * awafs-ns3: the command line, and the flow-size CDFs of --workload.
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

/* The options of options.h: --help's text, the parsing of each option and
 * of the ranges of the awafs QoS type's keys (netdev-dpdk-awafs-keys.def),
 * the checks of the options together, and the CDF files read, inverted
 * and averaged. */

#include "options.h"

extern "C" {
#include "awafs.h"
}

#include "awafs-queue-disc.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

/* ---- Command line ------------------------------------------------------ */

namespace {

const char USAGE[] =
    "usage: awafs-ns3 [--OPTION=VALUE ...]\n"
    "The thesis's micro benchmark (80 % 10 kB, 20 % 1000 kB flows, Poisson\n"
    "arrivals) from H senders to one receiver through one switch whose port\n"
    "towards the receiver runs the AWAFS core (--trust); or its large-\n"
    "scale scenario, all-to-all on a leaf-spine whose every switch port runs\n"
    "its own instance of the core; or TFS's, a fat-tree with partition-\n"
    "aggregate queries (--queries).\n"
    "\n"
    "  --topology T       star | leaf-spine | fat-tree (star)\n"
    "  --scheme S         fifo | static | pias | awafs | auto, or srpt\n"
    "                     (leaf-spine, fat-tree: the ideal lower bound)\n"
    "                     (awafs)\n"
    "  --trust T          switch: each AWAFS port counts every flow's bytes\n"
    "                     and messages in its flow table; host: the senders'\n"
    "                     header (docs/header.md), written from a byte tag\n"
    "                     on each message's bytes; verify: the flow table,\n"
    "                     taking the header's count where it is the larger\n"
    "                     and its completion where it matches (switch)\n"
    "  --transport T      ns3::TcpNewReno | ns3::TcpCubic | ns3::TcpDctcp,\n"
    "                     or newreno | cubic | dctcp (ns3::TcpNewReno)\n"
    "  --hosts H          star: sender hosts, 1..250 (8)\n"
    "  --leaves L         leaf-spine: leaves, 1..250 (9)\n"
    "  --spines S         leaf-spine: spines, 1..32 (4)\n"
    "  --hosts-per-leaf H leaf-spine: hosts on each leaf, 1..250 (16)\n"
    "  --spine-rate R     leaf-spine: each leaf-spine link (40G)\n"
    "  --k K              fat-tree: pods, an even number 2..10: K^3/4\n"
    "                     hosts (6: 54, TFS's)\n"
    "  --ecmp E           leaf-spine, fat-tree: flow (a hash of the five-\n"
    "                     tuple picks a flow's path up) | packet (at random\n"
    "                     per packet) (flow)\n"
    "  --rate R           star: the receiver's link; leaf-spine: every "
    "host's\n"
    "                     link; fat-tree: every link; bit/s: 100M, 10G, 1e9\n"
    "                     (star 100M, else 10G)\n"
    "  --access-rate R    the senders' links (10 x --rate): the switch's "
    "port\n"
    "                     toward the receiver is the one bottleneck\n"
    "  --max-rate R       shape that port as the switch's max-rate does\n"
    "                     (a 1 ms token bucket), below --rate; the load is\n"
    "                     of this rate (0: none)\n"
    "  --delay-us D       every link's propagation delay (star 10,\n"
    "                     leaf-spine 10.65: the thesis's 85.2 us base RTT\n"
    "                     over 8 links; fat-tree 20: TFS's 240 us over the\n"
    "                     12 links between pods)\n"
    "  --load L           offered load, in (0, 1), of the star's bottleneck "
    "or\n"
    "                     of the fabric's host links (0.5)\n"
    "  --flows N          flows to run (1000)\n"
    "  --workload FILE    flow sizes from a CDF (lines 'size probability',\n"
    "                     # comments; ../shared/workloads/*.cdf), linear\n"
    "                     between its points (default: the micro benchmark's\n"
    "                     80 % 10 kB, 20 % 1000 kB)\n"
    "  --then-workload FILE  with --workload: the second half of the flows\n"
    "                     from this CDF instead, at the same load (the\n"
    "                     thesis's 5.4: data mining, then web search)\n"
    "  --pair-workload FILE  leaf-spine, fat-tree, with --workload: the\n"
    "                     flows from a higher- to a lower-numbered host from\n"
    "                     this CDF instead (5.6: web search between hosts\n"
    "                     i < j, data mining otherwise)\n"
    "  --queries N        fat-tree: N partition-aggregate queries (TFS's),\n"
    "                     Poisson at --query-load of the host links: an\n"
    "                     aggregator and --query-fanout other hosts, each\n"
    "                     sending it a flow of 1/fanout of a size from\n"
    "                     --query-sizes (20000,80000, equally likely), at\n"
    "                     once; beside them --workload's flows at --load\n"
    "                     until the last query (instead of --flows)\n"
    "  --query-fanout F   hosts that answer a query, 1..64 (10)\n"
    "  --query-load L     the queries' share of the host links (0.1)\n"
    "  --seed N           arrivals, sizes, senders and hash keys (1)\n"
    "  --queues K         strict-priority queues, 2..8 (2)\n"
    "  --thresholds LIST  K-1 bytes: fixed (static, pias: no default) or\n"
    "                     initial (awafs, auto) (1000000 each)\n"
    "  --percentiles LIST K-1 RefPct values of awafs (10,20,...)\n"
    "  --objective O      auto: fct | slowdown | short | pias, what its\n"
    "                     thresholds minimise in the model (fct; short:\n"
    "                     the mean FCT of the flows up to 100 kB; pias:\n"
    "                     PIAS's objective, of flow fractions only)\n"
    "  --window-ms N      W_update (1000)\n"
    "  --interval-ms N    T_schedule (200)\n"
    "  --min-samples N    completions before an update (10)\n"
    "  --window-type T    histogram | exact (histogram)\n"
    "  --buffer N         packets held at the port (1024)\n"
    "  --nic-buffer N     leaf-spine, fat-tree: packets held at a host's NIC\n"
    "                     (--buffer)\n"
    "  --nic-queue Q      leaf-spine, fat-tree: fifo, the hosts' NICs are\n"
    "                     FIFOs that mark as the ports do (srpt's: SRPT);\n"
    "                     port, they run the scheme as the switch ports do,\n"
    "                     each its own instance (a hypervisor's AWAFS\n"
    "                     uplink) (fifo)\n"
    "  --karuna K         on | off: every AWAFS port in Karuna's mode (seed\n"
    "                     003, the switch's karuna=on): queue 0 for\n"
    "                     deadline flows, flows of known size below it by\n"
    "                     their size and --size-thresholds, the others by\n"
    "                     bytes sent and --thresholds (K-2 values each);\n"
    "                     each set learned from its own flows (off)\n"
    "  --size-thresholds LIST  with --karuna: those of the known sizes\n"
    "                     (--thresholds)\n"
    "  --size-percentiles LIST  with --karuna and awafs: their RefPct\n"
    "                     (--percentiles)\n"
    "  --deadline-share F Karuna's flow types, for every scheme: this share\n"
    "                     of the flows has a deadline (type 1), and says its\n"
    "                     size (0)\n"
    "  --sized-share F    and this share says only its size (type 2); the\n"
    "                     others say neither (0)\n"
    "  --deadline-ms MS   a deadline flow's deadline is the time its bytes\n"
    "                     take at --deadline-rate, at least MS ms (5:\n"
    "                     Karuna's least), at most 4095 ms\n"
    "  --deadline-rate R  (--rate / 4: the testbed's 25 Mbit/s of its 100)\n"
    "  --deadline-transport T  dctcp | mcp: with --transport dctcp, the\n"
    "                     deadline flows' (Karuna's MCP: paced at 5/4 of\n"
    "                     what is left over the time left, the deadline\n"
    "                     given up once passed) (dctcp)\n"
    "  --aging A          on | off: with --karuna and the flow table\n"
    "                     (--trust switch or verify), a message ages at\n"
    "                     every kappa-th timeout (a retransmission after\n"
    "                     --min-rto-ms of silence), kappa per flow uniform\n"
    "                     in [--aging-min-timeouts, --aging-max-timeouts]\n"
    "                     (2, 10), as the switch's aging (off)\n"
    "  --tardy T          off | tfs | tfs+: a flow that sent data again goes\n"
    "                     to queue 0 (TFS), or while under --tardy-limit\n"
    "                     bytes (TFS+), as the switch's tardy (off)\n"
    "  --tardy-limit N    TFS+'s limit, bytes (100000)\n"
    "  --source-budgets B on | off: each source's budgets in queue 0 (for\n"
    "                     data, and for segments without payload), which\n"
    "                     the switch sets with a flow table (off)\n"
    "  --ecn-threshold N  CE-mark above N packets queued, 0 off (with DCTCP\n"
    "                     20 on the star, 65 on the leaf-spine; else 0)\n"
    "  --ecn-mode M       port | queue: what the ECN threshold counts at an\n"
    "                     AWAFS port, as the switch's ecn-mode (port)\n"
    "  --flow-table-size N  flows the switch counts at once (4096)\n"
    "  --min-rto-ms N     TCP's minimum RTO (200, Linux's)\n"
    "  --delack-count N   segments a receiver waits for before it ACKs (2,\n"
    "                     ns-3's; 1: an ACK for every segment, as the ns-2\n"
    "                     scripts of pFabric's line set their receivers)\n"
    "  --delack-ms N      the longest a receiver delays an ACK (40, Linux's\n"
    "                     least)\n"
    "  --syn-rto-ms N     the wait before a SYN is sent again (3000, ns-3's;\n"
    "                     Linux's is 1000)\n"
    "  --flows-csv FILE   every flow: id,size,start_s,fct_ms,sender (and\n"
    "                     receiver on a fabric; part, 0 or 1, the workload\n"
    "                     it is from, with a second workload; with queries,\n"
    "                     query, its query's number or empty, and tardy, 1\n"
    "                     if its sender retransmitted; with Karuna's types,\n"
    "                     type, 1 to 3, and deadline_ms, 0 if none)\n"
    "  --trace-csv FILE   every recalculation round: time_s,version,window,\n"
    "                     load,thr1[,thr2...] (a fabric: of its first edge\n"
    "                     switch's port toward host 0), and with --karuna\n"
    "                     the known sizes' sthr1[,sthr2...]\n"
    "  --waits-csv FILE   a fabric: where each flow's packets waited (not\n"
    "                     its ACKs): id,nic_packets,nic_wait_us (in its\n"
    "                     sender's NIC), then q0_packets,q0_wait_us ... for\n"
    "                     each queue of the switch ports on its path (srpt:\n"
    "                     all in q0); a wait is from arrival to dequeue\n"
    "\n"
    "Prints one line: the scheme, flows completed, short and long mean FCT,\n"
    "the final thresholds, simulated and wall seconds.  Exit status 2 on a\n"
    "bad argument, 1 if a flow did not complete.\n";

} // namespace

[[noreturn]] void
Usage(const std::string &msg)
{
    fprintf(stderr, "awafs-ns3: %s (--help lists the options)\n",
            msg.c_str());
    exit(2);
}

namespace {

/* The ranges of the awafs QoS type's integer keys, from its one table. */
struct KeyRange {
    const char *name;
    uint64_t min, max;
};

#define AWAFS_CHOICES(...) nullptr
#define AWAFS_QOS_KEY(ID, NAME, TYPE, MIN, MAX, CHOICES, DEFAULT, DOC) \
    {NAME, MIN, MAX},
const KeyRange KEY_RANGES[] = {
#include "netdev-dpdk-awafs-keys.def"
};
#undef AWAFS_QOS_KEY
#undef AWAFS_CHOICES

uint64_t
ParseUint(const std::string &name, const std::string &v, uint64_t min,
          uint64_t max)
{
    char *end;
    unsigned long long x;

    errno = 0;
    x = strtoull(v.c_str(), &end, 10);
    if (v.empty() || v[0] == '-' || *end || errno || x < min || x > max) {
        Usage("--" + name + " must be a whole number from "
              + std::to_string(min) + " to " + std::to_string(max)
              + ", not '" + v + "'");
    }
    return x;
}

/* The value of the awafs QoS key 'name' in its table's range. */
uint64_t
ParseKey(const std::string &name, const std::string &v)
{
    for (const KeyRange &k : KEY_RANGES) {
        if (name == k.name) {
            return ParseUint(name, v, k.min, k.max);
        }
    }
    abort();                    /* Not a key of the table. */
}

double
ParseDouble(const std::string &name, const std::string &v, double min,
            double max, bool open)
{
    char *end;
    double x = strtod(v.c_str(), &end);

    if (v.empty() || *end || !std::isfinite(x)
        || (open ? x <= min || x >= max : x < min || x > max)) {
        char range[96];

        snprintf(range, sizeof range, "%s%g, %g%s", open ? "(" : "[", min,
                 max, open ? ")" : "]");
        Usage("--" + name + " must be a number in " + range + ", not '" + v
              + "'");
    }
    return x;
}

/* "100M", "10G", "100Mbps", "1e9": bit/s, for option 'name'. */
uint64_t
ParseRate(const std::string &name, const std::string &v)
{
    char *end;
    double x = strtod(v.c_str(), &end);
    std::string unit(end);

    if (!unit.empty() && (unit.back() == 's')) {
        if (unit.size() >= 3 && unit.compare(unit.size() - 3, 3, "bps") == 0) {
            unit.erase(unit.size() - 3);
        }
    }
    if (unit == "k" || unit == "K") {
        x *= 1e3;
    } else if (unit == "M") {
        x *= 1e6;
    } else if (unit == "G") {
        x *= 1e9;
    } else if (!unit.empty()) {
        x = -1;
    }
    if (end == v.c_str() || !std::isfinite(x) || x < 1000 || x > 4e11) {
        Usage("--" + name + " must be 1k to 400G bit/s (e.g. 100M, 10G), not '"
              + v + "'");
    }
    return (uint64_t) x;
}

} // namespace

Options
ParseOptions(int argc, char **argv)
{
    std::vector<std::string> given;
    Options o;

    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i], name, value;
        size_t eq;

        if (arg == "--help" || arg == "-h") {
            fputs(USAGE, stdout);
            exit(0);
        }
        if (arg.compare(0, 2, "--") != 0) {
            Usage("unexpected argument '" + arg + "'");
        }
        eq = arg.find('=');
        name = arg.substr(2, eq == std::string::npos ? std::string::npos
                                                     : eq - 2);
        if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            Usage("--" + name + " needs a value");
        }

        if (name == "topology") {
            if (value != "star" && value != "leaf-spine"
                && value != "fat-tree") {
                Usage("--topology must be star, leaf-spine or fat-tree, not '"
                      + value + "'");
            }
            o.topology = value;
        } else if (name == "scheme") {
            if (value != "fifo" && value != "static" && value != "pias"
                && value != "awafs" && value != "auto" && value != "srpt") {
                Usage("--scheme must be fifo, static, pias, awafs, auto or "
                      "srpt, not '" + value + "'");
            }
            o.scheme = value;
        } else if (name == "trust") {
            if (value != "switch" && value != "host" && value != "verify") {
                Usage("--trust must be switch, host or verify, not '" + value
                      + "'");
            }
            o.trust = value;
        } else if (name == "transport") {
            static const std::map<std::string, std::string> alias = {
                {"newreno", "ns3::TcpNewReno"},
                {"cubic", "ns3::TcpCubic"},
                {"dctcp", "ns3::TcpDctcp"},
            };
            auto a = alias.find(value);

            o.transport = a != alias.end() ? a->second : value;
            if (o.transport != "ns3::TcpNewReno"
                && o.transport != "ns3::TcpCubic"
                && o.transport != "ns3::TcpDctcp") {
                Usage("--transport must be ns3::TcpNewReno, ns3::TcpCubic "
                      "or ns3::TcpDctcp, not '" + value + "'");
            }
        } else if (name == "hosts") {
            o.hosts = ParseUint(name, value, 1, 250);
        } else if (name == "leaves") {
            o.leaves = ParseUint(name, value, 1, 250);
        } else if (name == "spines") {
            o.spines = ParseUint(name, value, 1, 32);
        } else if (name == "hosts-per-leaf") {
            o.hosts_per_leaf = ParseUint(name, value, 1, 250);
        } else if (name == "k") {
            o.k = ParseUint(name, value, 2, 10);
            if (o.k % 2) {
                Usage("--k must be even, not " + value);
            }
        } else if (name == "spine-rate") {
            o.spine_rate_bps = ParseRate(name, value);
        } else if (name == "ecmp") {
            if (value != "flow" && value != "packet") {
                Usage("--ecmp must be flow or packet, not '" + value + "'");
            }
            o.ecmp = value;
        } else if (name == "rate") {
            o.rate_bps = ParseRate(name, value);
        } else if (name == "access-rate") {
            o.access_rate_bps = ParseRate(name, value);
        } else if (name == "max-rate") {
            o.max_rate_bps = value == "0" ? 0 : ParseRate(name, value);
        } else if (name == "delay-us") {
            o.delay_us = ParseDouble(name, value, 0, 1e6, false);
        } else if (name == "load") {
            o.load = ParseDouble(name, value, 0, 1, true);
        } else if (name == "flows") {
            o.flows = ParseUint(name, value, 1, 10000000);
        } else if (name == "seed") {
            o.seed = ParseUint(name, value, 1, UINT32_MAX);
        } else if (name == "queues") {
            o.queues = ParseKey(name, value);
        } else if (name == "thresholds") {
            o.thresholds = value;
        } else if (name == "percentiles") {
            o.percentiles = value;
        } else if (name == "objective") {
            enum awafs_fct_model model;

            if (!awafs_fct_model_from_string(value.c_str(), &model)) {
                Usage("--objective must be " AWAFS_FCT_MODEL_NAMES ", not '"
                      + value + "'");
            }
            o.objective = value;
        } else if (name == "window-ms") {
            o.window_ms = ParseKey(name, value);
        } else if (name == "interval-ms") {
            o.interval_ms = ParseKey(name, value);
        } else if (name == "min-samples") {
            o.min_samples = ParseKey(name, value);
        } else if (name == "window-type") {
            o.window_type = value;
        } else if (name == "buffer") {
            o.buffer = ParseKey(name, value);
        } else if (name == "nic-buffer") {
            o.nic_buffer = ParseKey("buffer", value);
        } else if (name == "nic-queue") {
            if (value != "fifo" && value != "port") {
                Usage("--nic-queue must be fifo or port, not '" + value
                      + "'");
            }
            o.nic_queue = value;
        } else if (name == "karuna") {
            if (value != "on" && value != "off") {
                Usage("--karuna must be on or off, not '" + value + "'");
            }
            o.karuna = value == "on";
        } else if (name == "size-thresholds") {
            o.size_thresholds = value;
        } else if (name == "size-percentiles") {
            o.size_percentiles = value;
        } else if (name == "deadline-share") {
            o.deadline_share = ParseDouble(name, value, 0, 1, false);
        } else if (name == "sized-share") {
            o.sized_share = ParseDouble(name, value, 0, 1, false);
        } else if (name == "deadline-ms") {
            o.deadline_ms = ParseUint(name, value, 1,
                                      AWAFS_KARUNA_DEADLINE_MAX);
        } else if (name == "deadline-rate") {
            o.deadline_rate_bps = ParseRate(name, value);
        } else if (name == "deadline-transport") {
            if (value != "dctcp" && value != "mcp") {
                Usage("--deadline-transport must be dctcp or mcp, not '"
                      + value + "'");
            }
            o.mcp = value == "mcp";
        } else if (name == "aging") {
            if (value != "on" && value != "off") {
                Usage("--aging must be on or off, not '" + value + "'");
            }
            o.aging = value == "on";
        } else if (name == "aging-min-timeouts") {
            o.aging_min_timeouts = ParseUint(name, value, 1,
                                             AWAFS_FLOWTAB_MAX_KAPPA);
        } else if (name == "aging-max-timeouts") {
            o.aging_max_timeouts = ParseUint(name, value, 1,
                                             AWAFS_FLOWTAB_MAX_KAPPA);
        } else if (name == "tardy") {
            if (value != "off" && value != "tfs" && value != "tfs+") {
                Usage("--tardy must be off, tfs or tfs+, not '" + value + "'");
            }
            o.tardy = value;
        } else if (name == "source-budgets") {
            if (value != "on" && value != "off") {
                Usage("--source-budgets must be on or off, not '" + value
                      + "'");
            }
            o.source_budgets = value == "on";
        } else if (name == "tardy-limit") {
            o.tardy_limit = ParseKey(name, value);
        } else if (name == "queries") {
            o.queries = ParseUint(name, value, 1, 10000000);
        } else if (name == "query-sizes") {
            o.query_sizes = value;
        } else if (name == "query-fanout") {
            o.query_fanout = ParseUint(name, value, 1, 64);
        } else if (name == "query-load") {
            o.query_load = ParseDouble(name, value, 0, 1, true);
        } else if (name == "ecn-threshold") {
            o.ecn_threshold = ParseKey(name, value);
        } else if (name == "ecn-mode") {
            if (value != "port" && value != "queue") {
                Usage("--ecn-mode: port or queue, not '" + value + "'");
            }
            o.ecn_mode = value;
        } else if (name == "flow-table-size") {
            o.flow_table_size = ParseKey(name, value);
        } else if (name == "min-rto-ms") {
            o.min_rto_ms = ParseDouble(name, value, 1, 60000, false);
        } else if (name == "delack-count") {
            o.delack_count = ParseUint(name, value, 1, 64);
        } else if (name == "delack-ms") {
            o.delack_ms = ParseDouble(name, value, 0.001, 1000, false);
        } else if (name == "syn-rto-ms") {
            o.syn_rto_ms = ParseDouble(name, value, 1, 60000, false);
        } else if (name == "workload") {
            o.workload = value;
        } else if (name == "then-workload") {
            o.then_workload = value;
        } else if (name == "pair-workload") {
            o.pair_workload = value;
        } else if (name == "flows-csv") {
            o.flows_csv = value;
        } else if (name == "trace-csv") {
            o.trace_csv = value;
        } else if (name == "waits-csv") {
            o.waits_csv = value;
        } else {
            Usage("unknown option --" + name);
        }
        given.push_back(name);
    }
    bool star = o.topology == "star";
    bool fat_tree = o.topology == "fat-tree";
    for (const std::string &name : given) {
        /* Each option that not every topology has: those that have it. */
        static const std::map<std::string, std::vector<std::string>> only = {
            {"hosts", {"star"}},
            {"access-rate", {"star"}},
            {"max-rate", {"star"}},
            {"leaves", {"leaf-spine"}},
            {"spines", {"leaf-spine"}},
            {"hosts-per-leaf", {"leaf-spine"}},
            {"spine-rate", {"leaf-spine"}},
            {"k", {"fat-tree"}},
            {"queries", {"fat-tree"}},
            {"query-sizes", {"fat-tree"}},
            {"query-fanout", {"fat-tree"}},
            {"query-load", {"fat-tree"}},
            {"ecmp", {"leaf-spine", "fat-tree"}},
            {"pair-workload", {"leaf-spine", "fat-tree"}},
            {"nic-buffer", {"leaf-spine", "fat-tree"}},
            {"nic-queue", {"leaf-spine", "fat-tree"}},
            {"waits-csv", {"leaf-spine", "fat-tree"}},
        };
        auto it = only.find(name);

        if (it != only.end()
            && std::find(it->second.begin(), it->second.end(), o.topology)
               == it->second.end()) {
            Usage("--" + name + " is not an option of the " + o.topology);
        }
    }
    if (o.queries) {
        std::vector<double> sizes;

        if (std::find(given.begin(), given.end(), "flows") != given.end()) {
            Usage("--flows: with --queries, --workload's flows run until "
                  "the last query");
        }
        if (o.workload.empty() || !o.then_workload.empty()
            || !o.pair_workload.empty()) {
            Usage("--queries needs --workload (one), the traffic beside "
                  "them");
        }
        if (!ParseList(o.query_sizes, &sizes)) {
            Usage("--query-sizes: a list of bytes, not '" + o.query_sizes
                  + "'");
        }
        for (double v : sizes) {
            if (v < o.query_fanout || v > 1e9 || v != floor(v)) {
                Usage("--query-sizes: whole bytes from --query-fanout to "
                      "1e9, not '" + o.query_sizes + "'");
            }
        }
        if (o.query_fanout >= o.k * o.k * o.k / 4) {
            Usage("--query-fanout must be below the number of hosts");
        }
    } else {
        for (const char *q : {"query-sizes", "query-fanout", "query-load"}) {
            if (std::find(given.begin(), given.end(), q) != given.end()) {
                Usage(std::string("--") + q + " needs --queries");
            }
        }
    }
    if (o.source_budgets && (o.trust == "host" || o.scheme == "srpt")) {
        Usage("--source-budgets: the flow table of trust=switch or verify "
              "tells the sources apart (not with srpt or --trust host)");
    }
    if (o.tardy != "off" && (o.trust == "host" || o.scheme == "srpt")) {
        Usage("--tardy: the flow table of trust=switch or verify counts "
              "what is sent again (not with srpt or --trust host)");
    }
    if (o.deadline_share + o.sized_share > 1) {
        Usage("--deadline-share and --sized-share: at most 1 together");
    }
    if (o.mcp && o.transport != "ns3::TcpDctcp") {
        Usage("--deadline-transport mcp: MCP is DCTCP's window, with "
              "--transport dctcp");
    }
    for (const char *k : {"deadline-ms", "deadline-rate",
                          "deadline-transport"}) {
        if (!o.deadline_share
            && std::find(given.begin(), given.end(), k) != given.end()) {
            Usage(std::string("--") + k + " needs --deadline-share");
        }
    }
    if (!o.karuna && (!o.size_thresholds.empty()
                      || !o.size_percentiles.empty())) {
        Usage("--size-thresholds, --size-percentiles: only with --karuna "
              "on");
    }
    if (o.karuna && o.scheme == "srpt") {
        Usage("--karuna: the AWAFS ports' mode, not srpt's");
    }
    if ((!o.then_workload.empty() || !o.pair_workload.empty())
        && o.workload.empty()) {
        Usage("a second workload needs --workload");
    }
    if (!o.then_workload.empty() && !o.pair_workload.empty()) {
        Usage("--then-workload or --pair-workload, not both");
    }
    if (star && o.scheme == "srpt") {
        Usage("--scheme srpt: leaf-spine or fat-tree only");
    }
    if (o.scheme == "pias" && o.thresholds.empty()) {
        Usage("--scheme pias needs --thresholds");
    }
    if (o.scheme == "srpt" && !o.trace_csv.empty()) {
        Usage("--trace-csv: srpt has no thresholds");
    }
    if (!o.rate_bps) {
        o.rate_bps = star ? 100000000 : 10000000000;
    }
    if (o.delay_us < 0) {
        o.delay_us = star ? 10 : fat_tree ? 20 : 10.65;
    }
    if (!o.nic_buffer) {
        o.nic_buffer = o.buffer;
    }
    if (!o.deadline_rate_bps) {
        o.deadline_rate_bps = o.rate_bps / 4;
    }
    if (o.max_rate_bps > o.rate_bps) {
        Usage("--max-rate must be at most --rate");
    }
    if (!o.access_rate_bps) {
        o.access_rate_bps = std::min<uint64_t>(10 * o.rate_bps, 400e9);
    }
    if (o.ecn_threshold < 0) {
        o.ecn_threshold = (o.transport != "ns3::TcpDctcp" ? 0
                           : star ? 20 : 65);
    }
    return o;
}

Cdf
LoadCdf(const std::string &path)
{
    std::ifstream in(path);
    std::string line;
    Cdf cdf;

    if (!in) {
        Usage("--workload: cannot read '" + path + "'");
    }
    while (std::getline(in, line)) {
        std::istringstream words(line);
        double size, p;

        if (line.empty() || line[0] == '#') {
            continue;
        }
        if (!(words >> size >> p) || size < 1 || p < 0 || p > 1
            || (!cdf.empty() && (size < cdf.back().first
                                 || p < cdf.back().second))) {
            Usage("--workload: '" + path + "' is not a CDF of ascending "
                  "sizes and probabilities: '" + line + "'");
        }
        cdf.emplace_back(size, p);
    }
    if (cdf.empty() || cdf.back().second != 1) {
        Usage("--workload: '" + path + "' does not end at probability 1");
    }
    return cdf;
}

double
InverseCdf(const Cdf &cdf, double u)
{
    for (size_t i = 0; i < cdf.size(); i++) {
        if (u <= cdf[i].second) {
            if (!i || cdf[i].second == cdf[i - 1].second) {
                return cdf[i].first;
            }
            return cdf[i - 1].first
                   + (u - cdf[i - 1].second)
                     / (cdf[i].second - cdf[i - 1].second)
                     * (cdf[i].first - cdf[i - 1].first);
        }
    }
    return cdf.back().first;
}

double
CdfMean(const Cdf &cdf)
{
    double mean = cdf[0].first * cdf[0].second;

    for (size_t i = 1; i < cdf.size(); i++) {
        mean += (cdf[i].second - cdf[i - 1].second)
                * (cdf[i].first + cdf[i - 1].first) / 2;
    }
    return mean;
}

uint64_t
PortRate(const Options &o)
{
    return o.max_rate_bps ? o.max_rate_bps : o.rate_bps;
}

std::string
Repeat(const std::string &v, uint32_t n)
{
    std::string s;

    for (uint32_t i = 0; i < n; i++) {
        s += (i ? "," : "") + v;
    }
    return s;
}

std::string
DefaultPercentiles(uint32_t n_queues)
{
    struct awafs_config c;
    std::string s;

    awafs_config_default(&c, n_queues);
    for (uint32_t i = 0; i + 1 < n_queues; i++) {
        char pct[32];

        snprintf(pct, sizeof pct, "%g", c.pct_milli[i] / 1000.0);
        s += (i ? "," : "") + std::string(pct);
    }
    return s;
}
