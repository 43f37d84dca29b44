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

#ifndef AWAFS_NS3_OPTIONS_H
#define AWAFS_NS3_OPTIONS_H 1

/* The program's options (Options, ParseOptions(); --help, in options.cc,
 * lists them), the exit with a message on a bad argument (Usage()), the
 * flow-size CDFs that --workload and the second workloads name, and what
 * the program derives from the options (PortRate(), Repeat(),
 * DefaultPercentiles()). */

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct Options {
    std::string topology = "star";
    std::string scheme = "awafs";
    std::string trust = "switch";
    std::string transport = "ns3::TcpNewReno";
    uint32_t hosts = 8;
    uint32_t leaves = 9;
    uint32_t spines = 4;
    uint32_t hosts_per_leaf = 16;
    uint32_t k = 6;
    uint64_t rate_bps = 0;              /* Default: 100M star, 10G
                                         * leaf-spine. */
    uint64_t access_rate_bps = 0;       /* Default: 10 x rate_bps. */
    uint64_t max_rate_bps = 0;          /* 0: rate_bps paces the port. */
    uint64_t spine_rate_bps = 40000000000;
    std::string ecmp = "flow";
    double delay_us = -1;               /* Default: 10 star, 10.65
                                         * leaf-spine. */
    double load = 0.5;
    uint32_t flows = 1000;
    uint64_t seed = 1;
    uint32_t queues = 2;
    std::string thresholds;             /* Default: 1000000 each. */
    std::string percentiles;            /* Default: 10, 20, ... */
    std::string objective = "fct";      /* Of percentiles=auto. */
    uint32_t window_ms = 1000;
    uint32_t interval_ms = 200;
    uint32_t min_samples = 10;
    std::string window_type = "histogram";
    uint32_t buffer = 1024;
    uint32_t nic_buffer = 0;            /* Default: buffer. */
    std::string nic_queue = "fifo";     /* Or "port": as the switches'. */
    long ecn_threshold = -1;            /* Default: 20 with DCTCP, else 0. */
    std::string ecn_mode = "port";
    uint32_t flow_table_size = 4096;
    double min_rto_ms = 200;
    uint32_t delack_count = 2;          /* Segments per ACK, as ns-3's. */
    double delack_ms = 40;              /* Linux's least delayed-ACK wait. */
    double syn_rto_ms = 3000;           /* ns-3's ConnTimeout. */
    std::string workload;               /* A CDF file; "": the micro mix. */
    std::string then_workload;          /* A CDF: the second half's. */
    std::string pair_workload;          /* A CDF: higher to lower host's. */
    uint32_t queries = 0;               /* Partition-aggregate queries. */
    std::string query_sizes = "20000,80000";
    uint32_t query_fanout = 10;
    double query_load = 0.1;
    bool karuna = false;                /* The ports' karuna=on. */
    std::string size_thresholds;        /* Default: --thresholds. */
    std::string size_percentiles;       /* Default: --percentiles. */
    double deadline_share = 0;          /* Karuna's type 1 flows. */
    double sized_share = 0;             /* Type 2: their size known. */
    uint32_t deadline_ms = 5;           /* The least deadline. */
    uint64_t deadline_rate_bps = 0;     /* Default: rate_bps / 4. */
    bool mcp = false;                   /* The deadline flows run MCP. */
    bool aging = false;                 /* The ports' aging=on. */
    uint32_t aging_min_timeouts = 2;    /* Karuna's kappa, per flow */
    uint32_t aging_max_timeouts = 10;   /* uniform in [min, max]. */
    std::string tardy = "off";
    uint64_t tardy_limit = 100000;
    bool source_budgets = false;
    std::string flows_csv;
    std::string trace_csv;
    std::string waits_csv;
};

/* Prints 'msg' on stderr, as a bad argument's reason, and exits with
 * status 2. */
[[noreturn]] void Usage(const std::string &msg);

/* The options of the command line 'argv', their defaults filled in; exits
 * after printing the usage with --help, through Usage() on a bad
 * argument. */
Options ParseOptions(int argc, char **argv);

/* A flow-size CDF: (size, cumulative probability) points, ascending. */
typedef std::vector<std::pair<double, double>> Cdf;

/* The CDF in the file 'path'; exits through Usage() if it cannot be read
 * or is not one. */
Cdf LoadCdf(const std::string &path);

/* The size at cumulative probability 'u', linear between the points (as
 * testbed/workload.py's inverse_cdf()). */
double InverseCdf(const Cdf &cdf, double u);

/* The mean of InverseCdf() over u uniform in [0, 1]. */
double CdfMean(const Cdf &cdf);

/* The rate of the switch's port toward the receiver. */
uint64_t PortRate(const Options &o);

/* "v,v,...", 'n' times. */
std::string Repeat(const std::string &v, uint32_t n);

/* The core's default RefPct for 'n_queues' queues (awafs_config_default()),
 * as the option writes them. */
std::string DefaultPercentiles(uint32_t n_queues);

#endif /* options.h */
