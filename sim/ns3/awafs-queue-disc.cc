/*
 * awafs-ns3: AwafsQueueDisc, the AWAFS core (lib/) as an ns-3 queue disc
 * on a switch port.
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

/* The queue disc of awafs-queue-disc.h: its attributes, the core's
 * configuration built from them, and what it does per packet (the frame
 * it parses, the option it writes with trust=host or verify, the queue it
 * picks, the completions it reports) and between packets (the
 * recalculation of the thresholds and the sweep of the flow table), as
 * netdev-ext/netdev-dpdk-awafs.c does. */

#include "awafs-queue-disc.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace {

/* What the OVS datapath does between packets, at its pace
 * (netdev-dpdk-awafs.c): the flow table's sweep of idle messages. */
const int64_t SWEEP_INTERVAL_US = 1000;
const uint32_t SWEEP_ENTRIES = 256;
const int64_t US = 1000000;

/* "1 value", "3 values". */
std::string
Values(uint32_t n)
{
    return std::to_string(n) + (n == 1 ? " value" : " values");
}

/* Sets the initial or fixed thresholds of 'cfg' from 'list', the value of
 * the attribute that 'key' names, for 'queues' (the port's, as a message
 * names them).  Returns "" or why 'list' is not valid. */
std::string
SetThresholds(const std::string &key, const std::string &queues,
              const std::string &list, struct awafs_config *cfg)
{
    uint32_t n = cfg->n_queues - 1;
    std::vector<double> thr;

    if (!ParseList(list, &thr) || thr.size() != n) {
        return key + ": " + queues + " take " + Values(n)
               + " in bytes, not '" + list + "'";
    }
    for (uint32_t i = 0; i < n; i++) {
        if (thr[i] < 0 || thr[i] > 4294967295.0 || thr[i] != floor(thr[i])) {
            return key + " must be whole bytes up to 4294967295";
        }
        cfg->init_thr[i] = (uint64_t) thr[i];
    }
    return "";
}

/* The same for the RefPct values of 'cfg'; 'other' is what else the
 * attribute takes (" or auto"), for the message. */
std::string
SetPercentiles(const std::string &key, const std::string &queues,
               const std::string &other, const std::string &list,
               struct awafs_config *cfg)
{
    uint32_t n = cfg->n_queues - 1;
    std::vector<double> pct;

    if (!ParseList(list, &pct) || pct.size() != n) {
        return key + ": " + queues + " take " + Values(n) + other + ", not '"
               + list + "'";
    }
    for (uint32_t i = 0; i < n; i++) {
        if (pct[i] <= 0 || pct[i] >= 100) {
            return key + " must be in (0, 100)";
        }
        cfg->pct_milli[i] = (uint32_t) llround(pct[i] * 1000);
    }
    return "";
}

} // namespace

bool
ParseList(const std::string &s, std::vector<double> *out)
{
    std::stringstream ss(s);
    std::string item;

    out->clear();
    while (std::getline(ss, item, ',')) {
        char *end;
        double v = strtod(item.c_str(), &end);

        if (item.empty() || *end || !std::isfinite(v)) {
            return false;
        }
        out->push_back(v);
    }
    return !out->empty() && s.back() != ',';
}

/* ---- The queue disc ---------------------------------------------------- */

NS_OBJECT_ENSURE_REGISTERED(AwafsMessageTag);

TypeId
AwafsMessageTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::AwafsMessageTag")
                            .SetParent<Tag>()
                            .SetGroupName("TrafficControl")
                            .AddConstructor<AwafsMessageTag>();
    return tid;
}

NS_OBJECT_ENSURE_REGISTERED(AwafsQueueDisc);

AwafsQueueDisc::MarkOf AwafsQueueDisc::s_markOf = nullptr;

TypeId
AwafsQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::AwafsQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddConstructor<AwafsQueueDisc>()
            .AddAttribute("Queues", "Strict-priority queues k (2..8).",
                          UintegerValue(2),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_queues),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Mode", "adaptive, or static (PIAS).",
                          StringValue("adaptive"),
                          MakeStringAccessor(&AwafsQueueDisc::m_mode),
                          MakeStringChecker())
            .AddAttribute("Trust",
                          "switch (the flow table counts each flow's bytes "
                          "and messages), host (the end hosts' header, "
                          "from each message's AwafsMessageTag), or verify "
                          "(the flow table, checking the header against "
                          "it).",
                          StringValue("switch"),
                          MakeStringAccessor(&AwafsQueueDisc::m_trust),
                          MakeStringChecker())
            .AddAttribute("Thresholds",
                          "k-1 demotion thresholds in bytes, comma-separated:"
                          " initial (adaptive) or fixed (static).",
                          StringValue("1000000"),
                          MakeStringAccessor(&AwafsQueueDisc::m_thresholds),
                          MakeStringChecker())
            .AddAttribute("Percentiles",
                          "k-1 increasing RefPct values, comma-separated, or"
                          " auto (thresholds that minimise the FCT model).",
                          StringValue("10"),
                          MakeStringAccessor(&AwafsQueueDisc::m_percentiles),
                          MakeStringChecker())
            .AddAttribute("Karuna",
                          "Karuna's mode (seed 003; the switch's "
                          "karuna=on): queue 0 for deadline flows, the "
                          "others below it, flows of known size by their "
                          "size and SizeThresholds, the others by bytes "
                          "sent and Thresholds; each set learned from its "
                          "own flows' completions.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&AwafsQueueDisc::m_karuna),
                          MakeBooleanChecker())
            .AddAttribute("SizeThresholds",
                          "With Karuna: the k-2 thresholds of the known "
                          "sizes, as Thresholds (\"\": the same).",
                          StringValue(""),
                          MakeStringAccessor(
                              &AwafsQueueDisc::m_sizeThresholds),
                          MakeStringChecker())
            .AddAttribute("SizePercentiles",
                          "With Karuna: their k-2 RefPct values "
                          "(\"\": Percentiles).",
                          StringValue(""),
                          MakeStringAccessor(
                              &AwafsQueueDisc::m_sizePercentiles),
                          MakeStringChecker())
            .AddAttribute("Objective",
                          "With auto: what its thresholds minimise in the "
                          "model, fct (mean FCT), slowdown (mean "
                          "slowdown) or short (mean FCT of the flows up "
                          "to 100 kB) or pias (PIAS's objective, of flow "
                          "fractions only).",
                          StringValue("fct"),
                          MakeStringAccessor(&AwafsQueueDisc::m_objective),
                          MakeStringChecker())
            .AddAttribute("WindowMs", "W_update, ms.", UintegerValue(1000),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_windowMs),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("IntervalMs", "T_schedule, ms.", UintegerValue(200),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_intervalMs),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("MinSamples", "Completions before an update.",
                          UintegerValue(10),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_minSamples),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("WindowType", "histogram or exact.",
                          StringValue("histogram"),
                          MakeStringAccessor(&AwafsQueueDisc::m_windowType),
                          MakeStringChecker())
            .AddAttribute("Buffer", "Packets held, all queues.",
                          UintegerValue(1024),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_buffer),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnThreshold",
                          "CE-mark an ECT packet that finds more than this "
                          "many packets queued on the port (0: off).",
                          UintegerValue(0),
                          MakeUintegerAccessor(
                              &AwafsQueueDisc::m_ecnThreshold),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("EcnPerQueue",
                          "Count the ECN threshold against the packet's "
                          "own queue, not the whole port (the switch's "
                          "ecn-mode=queue).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&AwafsQueueDisc::m_ecnPerQueue),
                          MakeBooleanChecker())
            .AddAttribute("FlowTableSize", "Flows counted at once.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(
                              &AwafsQueueDisc::m_flowTableSize),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("IdleUs",
                          "A flow silent this long after the end of a write "
                          "has ended its message.",
                          UintegerValue(50000),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_idleUs),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Tardy",
                          "off, tfs (the segments of a message that sent "
                          "data again go to queue 0) or tfs+ (while its "
                          "message has sent less than TardyLimit bytes).",
                          StringValue("off"),
                          MakeStringAccessor(&AwafsQueueDisc::m_tardy),
                          MakeStringChecker())
            .AddAttribute("TardyLimit", "TFS+'s limit, bytes.",
                          UintegerValue(100000),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_tardyLimit),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("Aging",
                          "With Karuna and the flow table (trust=switch or "
                          "verify), a message ages at every kappa-th "
                          "timeout, kappa uniform per flow in "
                          "[AgingMinTimeouts, AgingMaxTimeouts], as the "
                          "switch's aging=on.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&AwafsQueueDisc::m_aging),
                          MakeBooleanChecker())
            .AddAttribute("AgingMinTimeouts", "Kappa's lower end.",
                          UintegerValue(2),
                          MakeUintegerAccessor(
                              &AwafsQueueDisc::m_agingMinTimeouts),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("AgingMaxTimeouts", "Kappa's upper end.",
                          UintegerValue(10),
                          MakeUintegerAccessor(
                              &AwafsQueueDisc::m_agingMaxTimeouts),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RtoMinUs",
                          "A retransmission after this much silence of its "
                          "flow is a timeout (the switch's rto-min-us: the "
                          "senders' least RTO).",
                          UintegerValue(AWAFS_FLOWTAB_RTO_MIN_US),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_rtoMinUs),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("SourceBudgets",
                          "With trust=switch, each source's budgets in "
                          "queue 0, for data and for segments without "
                          "payload, as the switch sets them "
                          "(awafs_txq_init_budgets()).",
                          BooleanValue(false),
                          MakeBooleanAccessor(
                              &AwafsQueueDisc::m_sourceBudgets),
                          MakeBooleanChecker())
            .AddAttribute("LinkRate", "The port's rate (load, byte-free "
                          "budget).",
                          DataRateValue(DataRate("100Mbps")),
                          MakeDataRateAccessor(&AwafsQueueDisc::m_linkRate),
                          MakeDataRateChecker())
            .AddAttribute("MaxRate", "Wire rate the port is shaped to, as "
                          "the switch's max-rate (0: the link paces it).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&AwafsQueueDisc::m_maxRate),
                          MakeDataRateChecker())
            .AddAttribute("Seed", "Key of the flow table's hash and of the "
                          "source names.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&AwafsQueueDisc::m_seed),
                          MakeUintegerChecker<uint64_t>())
            .AddTraceSource("Departure",
                            "A packet dequeued, and the queue it left.",
                            MakeTraceSourceAccessor(
                                &AwafsQueueDisc::m_departure),
                            "ns3::AwafsQueueDisc::DepartureCallback");
    return tid;
}

AwafsQueueDisc::AwafsQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS),
      m_adapt(nullptr),
      m_ring(nullptr),
      m_betaAdapt(nullptr),
      m_betaRing(nullptr),
      m_flows(nullptr),
      m_sched(nullptr),
      m_trustHost(false),
      m_trustVerify(false),
      m_tardyBytes(0),
      m_completions(0),
      m_byteFreeOver(0)
{
    memset(&m_cfg, 0, sizeof m_cfg);
    memset(&m_load, 0, sizeof m_load);
    memset(&m_byteFree, 0, sizeof m_byteFree);
    memset(&m_parse, 0, sizeof m_parse);
    memset(&m_thr, 0, sizeof m_thr);
    memset(&m_betaCfg, 0, sizeof m_betaCfg);
    memset(&m_betaThr, 0, sizeof m_betaThr);
    memset(&m_karunaStats, 0, sizeof m_karunaStats);
}

AwafsQueueDisc::~AwafsQueueDisc()
{
    awafs_adapt_destroy(m_adapt);
    awafs_adapt_destroy(m_betaAdapt);
    awafs_flowtab_destroy(m_flows);
    if (m_sched) {
        awafs_sched_destroy(m_sched);
    }
}

std::string
AwafsQueueDisc::ConfigError()
{
    std::string queues, err;
    const char *msg;
    uint32_t sieve;

    if (m_queues < AWAFS_MIN_QUEUES || m_queues > AWAFS_MAX_QUEUES) {
        return "queues must be between 2 and 8";
    }
    if (m_karuna && m_queues < 3) {
        return "karuna: 3 queues at least, queue 0 for deadline flows and "
               "two for the others";
    }
    /* With Karuna, the sieve has the queues below the deadline queue. */
    sieve = m_queues - m_karuna;
    queues = std::to_string(m_queues) + " queues"
             + (m_karuna ? " with karuna" : "");
    awafs_config_default(&m_cfg, sieve);
    if (m_mode != "adaptive" && m_mode != "static") {
        return "mode must be adaptive or static";
    }
    m_cfg.adaptive = m_mode == "adaptive";
    if (m_trust != "switch" && m_trust != "host" && m_trust != "verify") {
        return "trust must be switch, host or verify";
    }
    m_trustHost = m_trust == "host";
    m_trustVerify = m_trust == "verify";
    /* As the switch's tardy and tardy-limit (awafs_tardy_limit()). */
    if (m_tardy != "off" && m_tardy != "tfs" && m_tardy != "tfs+") {
        return "tardy must be off, tfs or tfs+";
    }
    if (m_tardy != "off" && m_trustHost) {
        return "tardy needs trust=switch or verify: the flow table counts "
               "what is sent again";
    }
    if (m_tardy != "off" && m_karuna) {
        return "tardy cannot go with karuna, which reserves queue 0 for "
               "deadline flows";
    }
    if (m_tardy == "tfs+" && !m_tardyLimit) {
        return "the tardy limit must be positive";
    }
    m_tardyBytes = (m_tardy == "tfs" ? UINT64_MAX
                    : m_tardy == "tfs+" ? m_tardyLimit : 0);
    /* As the switch's aging, aging-min-timeouts and aging-max-timeouts. */
    if (m_aging && !m_karuna) {
        return "aging: needs karuna";
    }
    if (m_aging && m_trustHost) {
        return "aging: needs trust=switch or verify (only the flow table "
               "sees timeouts)";
    }
    if (!m_agingMinTimeouts || m_agingMinTimeouts > m_agingMaxTimeouts
        || m_agingMaxTimeouts > AWAFS_FLOWTAB_MAX_KAPPA) {
        return "aging: kappa from 1 to " + std::to_string(
                   AWAFS_FLOWTAB_MAX_KAPPA) + ", its least not above its "
               "most";
    }
    if (!m_rtoMinUs) {
        return "the least RTO must be positive";
    }
    err = SetThresholds("thresholds", queues, m_thresholds, &m_cfg);
    if (!err.empty()) {
        return err;
    }
    if (!awafs_fct_model_from_string(m_objective.c_str(),
                                     &m_cfg.fct_model)) {
        return "objective: " AWAFS_FCT_MODEL_NAMES ", not '" + m_objective
               + "'";
    }
    if (m_percentiles == "auto") {
        if (m_karuna) {
            return "percentiles: auto cannot go with karuna";
        }
        m_cfg.minimise_fct = true;
    } else if (m_objective != "fct") {
        return "objective: only with percentiles auto";
    } else {
        err = SetPercentiles("percentiles", queues, " or auto",
                             m_percentiles, &m_cfg);
        if (!err.empty()) {
            return err;
        }
    }
    if (m_windowType != "histogram" && m_windowType != "exact") {
        return "window type must be histogram or exact";
    }
    m_cfg.window_kind = (m_windowType == "exact" ? AWAFS_WINDOW_EXACT
                         : AWAFS_WINDOW_HISTOGRAM);
    m_cfg.window_us = (int64_t) m_windowMs * 1000;
    m_cfg.interval_us = (int64_t) m_intervalMs * 1000;
    m_cfg.min_samples = m_minSamples;
    msg = awafs_config_check(&m_cfg);
    if (msg) {
        return msg;
    }
    if (m_karuna) {
        /* The known sizes' window is the sieve's, with its own
         * thresholds (as the switch's size-thresholds and
         * size-percentiles). */
        awafs_config_default(&m_betaCfg, sieve);
        err = SetThresholds("size thresholds", queues,
                            (m_sizeThresholds.empty() ? m_thresholds
                             : m_sizeThresholds), &m_betaCfg);
        if (err.empty()) {
            err = SetPercentiles("size percentiles", queues, "",
                                 (m_sizePercentiles.empty() ? m_percentiles
                                  : m_sizePercentiles), &m_betaCfg);
        }
        if (!err.empty()) {
            return err;
        }
        awafs_config_share_window(&m_betaCfg, &m_cfg);
        msg = awafs_config_check(&m_betaCfg);
        if (msg) {
            return std::string("size ") + msg;
        }
    } else if (!m_sizeThresholds.empty() || !m_sizePercentiles.empty()) {
        return "size thresholds and percentiles: only with karuna";
    }
    if (!m_buffer || m_buffer > AWAFS_SCHED_MAX_LIMIT) {
        return "buffer must be between 1 and "
               + std::to_string(AWAFS_SCHED_MAX_LIMIT) + " packets";
    }
    if (m_ecnThreshold > m_buffer) {
        return "the ECN threshold must be at most the buffer";
    }
    if (m_flowTableSize < 8 || m_flowTableSize > (1u << 24)) {
        return "the flow table holds 8 to 16777216 flows";
    }
    if (!m_idleUs) {
        return "idle-us must be positive";
    }
    if (!m_linkRate.GetBitRate()) {
        return "the link rate must be positive";
    }
    return "";
}

bool
AwafsQueueDisc::CheckConfig()
{
    std::string err = ConfigError();

    /* QueueDisc::DoInitialize() only asserts on false, and release builds
     * of ns-3 (Debian's) compile asserts out. */
    if (!err.empty()) {
        NS_FATAL_ERROR("AwafsQueueDisc: " << err);
    }
    if (GetNQueueDiscClasses() || GetNPacketFilters()
        || GetNInternalQueues()) {
        NS_FATAL_ERROR("AwafsQueueDisc holds its packets in the core's "
                       "scheduler: no classes, filters or internal queues");
    }
    return true;
}

void
AwafsQueueDisc::InitializeParams()
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    std::mt19937_64 keygen(m_seed ^ 0x4157414653ull);

    m_adapt = awafs_adapt_create(&m_cfg);
    m_flows = awafs_flowtab_create(m_flowTableSize, keygen());
    m_sched = awafs_sched_create(m_queues, m_buffer);
    if (m_karuna) {
        m_betaAdapt = awafs_adapt_create(&m_betaCfg);
    }
    NS_ABORT_MSG_IF(!m_adapt || !m_flows || !m_sched
                    || (m_karuna && !m_betaAdapt),
                    "AwafsQueueDisc: out of memory");
    m_ring = awafs_adapt_ring(m_adapt);
    if (m_betaAdapt) {
        m_betaRing = awafs_adapt_ring(m_betaAdapt);
        awafs_adapt_current(m_betaAdapt, &m_betaThr);
    }
    awafs_flowtab_set_tardy(m_flows, m_tardyBytes);
    NS_ABORT_MSG_IF(!awafs_flowtab_set_aging(
                        m_flows, m_rtoMinUs,
                        m_aging ? m_agingMinTimeouts : 0,
                        m_aging ? m_agingMaxTimeouts : 0),
                    "AwafsQueueDisc: ConfigError() passed a bad aging");
    awafs_adapt_current(m_adapt, &m_thr);
    if (m_ecnThreshold) {
        awafs_sched_set_ecn(m_sched, m_ecnThreshold, m_ecnPerQueue);
    }
    awafs_byte_free_init(&m_byteFree, m_linkRate.GetBitRate() / 8, US,
                         now_us);
    if (m_sourceBudgets && !m_trustHost) {
        /* As netdev-dpdk-awafs.c's awafs_txq_init_budgets(), for one
         * instance on the port. */
        uint64_t rate = (m_maxRate.GetBitRate() ? m_maxRate.GetBitRate()
                         : m_linkRate.GetBitRate()) / 8;

        awafs_flowtab_set_queue0_rate(m_flows, rate / AWAFS_QUEUE0_SHARE);
        awafs_flowtab_set_byte_free_rate(
            m_flows, rate / AWAFS_BYTE_FREE_SHARE
                     / AWAFS_BYTE_FREE_SOURCE_SHARE);
    }
    if (m_maxRate.GetBitRate()) {
        /* The switch's shaper: a token bucket of a millisecond's bytes,
         * at least two full frames (awafs_qos_init_tb()). */
        uint64_t rate = m_maxRate.GetBitRate() / 8;

        awafs_tb_init(&m_shaper, rate,
                      std::max<uint64_t>(rate / 1000,
                                         2 * (1518 + AWAFS_WIRE_OVERHEAD)),
                      US, now_us);
    }
    for (int i = 0; i < 4; i++) {
        m_sourceKey[i] = (uint32_t) keygen();
    }
    awafs_load_update(&m_load, now_us, 0, m_linkRate.GetBitRate(),
                      m_cfg.window_us);
    m_rounds.push_back({Simulator::Now().GetSeconds(), m_thr, 0, 0,
                        m_betaThr});
    m_recalcEvent = Simulator::Schedule(MicroSeconds(m_cfg.interval_us),
                                        &AwafsQueueDisc::Recalculate, this);
    m_sweepEvent = Simulator::Schedule(MicroSeconds(SWEEP_INTERVAL_US),
                                       &AwafsQueueDisc::Sweep, this);
}

void
AwafsQueueDisc::DoDispose()
{
    void *pkts[64];
    size_t n;

    m_recalcEvent.Cancel();
    m_wakeEvent.Cancel();
    m_sweepEvent.Cancel();
    while (m_sched && (n = awafs_sched_flush(m_sched, pkts, 64))) {
        for (size_t i = 0; i < n; i++) {
            static_cast<QueueDiscItem *>(pkts[i])->Unref();
        }
    }
    QueueDisc::DoDispose();
}

/* The scheduler's clock: microseconds, modulo 2^32 as it takes them. */
uint32_t
AwafsQueueDisc::Ticks()
{
    return (uint32_t) Simulator::Now().GetMicroSeconds();
}

/* Writes into 'frame' (AWAFS_HEAD_MAX bytes) the head of the Ethernet frame
 * that would carry 'item' -- a 14-byte Ethernet header, the IPv4 header and
 * the first bytes of the IP payload, enough for any TCP header -- and into
 * '*len' the frame's whole length (padded to the Ethernet minimum, without
 * FCS, as the NIC counts it).  Returns the head's length. */
uint32_t
AwafsQueueDisc::Frame(Ptr<QueueDiscItem> item, uint8_t *frame,
                      uint32_t *len) const
{
    static const uint8_t eth[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    Ptr<const Packet> p = item->GetPacket();
    uint32_t ihl, l4, copy, head;

    memcpy(frame, eth, sizeof eth);
    if (!ip) {
        /* Not IPv4: a frame of an experimental EtherType, which no rule
         * reads. */
        frame[12] = 0x88;
        frame[13] = 0xb5;
        *len = std::max<uint32_t>(AWAFS_ETH_MIN_FRAME, 14 + p->GetSize());
        return 14;
    }
    frame[12] = 0x08;
    frame[13] = 0x00;
    const Ipv4Header &hdr = ip->GetHeader();
    ihl = hdr.GetSerializedSize();
    Buffer b;
    b.AddAtStart(ihl);
    hdr.Serialize(b.Begin());
    b.CopyData(frame + 14, ihl);

    l4 = p->GetSize();
    copy = std::min<uint32_t>(l4, 60);      /* The longest TCP header. */
    p->CopyData(frame + 14 + ihl, copy);
    *len = std::max<uint32_t>(AWAFS_ETH_MIN_FRAME, 14 + ihl + l4);
    head = std::min<uint32_t>(*len, 14 + ihl + 60);
    memset(frame + 14 + ihl + copy, 0, head - (14 + ihl + copy));
    return head;
}

/* With trust=host or verify, or Karuna: adds to the frame parsed from
 * 'head_len' bytes at 'frame' (room for AWAFS_HEAD_MAX) the option that the
 * sending host's agent writes on a TCP segment with payload
 * (docs/header.md), from the AwafsMessageTag on the segment's first byte:
 * the bytes of its message before the segment, on the segment that carries
 * the message's last byte the completed bit and the size, and the Karuna
 * word in its socket's mark if it has one.  That last segment also gets
 * PSH, which Linux sets on the last segment of a write and ns-3's TCP
 * never does: the switch counts a completion on it
 * (awafs_hdr_counts_completion()).  Returns the bytes added to the frame
 * and its IP packet (0: no option: no tag, no payload, or no room in the
 * TCP header). */
uint32_t
AwafsQueueDisc::WriteOption(Ptr<QueueDiscItem> item, uint8_t *frame,
                            uint32_t head_len, uint32_t len) const
{
    uint8_t opt[AWAFS_OPT_LEN_COMPLETED + AWAFS_OPT_KARUNA_LEN];
    uint32_t tcp_hlen, opts, bytes_sent, n, word;
    AwafsMessageTag tag;
    struct awafs_hdr h;
    uint8_t *l3, *l4;
    uint16_t tot_len;
    bool completed;

    if (awafs_parse_head(frame, head_len, len, nullptr, &h, nullptr)
        != AWAFS_PARSE_NO_OPTION || !h.payload_len || h.ip_version != 4
        || !item->GetPacket()->FindFirstMatchingByteTag(tag)) {
        return 0;
    }
    bytes_sent = h.seq - tag.seq;           /* Modulo 2^32, as TCP's. */
    if (bytes_sent >= tag.size) {
        return 0;
    }
    completed = h.payload_len >= tag.size - bytes_sent;
    n = awafs_opt_encode(opt, bytes_sent, completed, tag.size);
    word = s_markOf && tag.flow ? s_markOf(tag.flow - 1) : 0;
    if (word) {
        n = awafs_opt_add_karuna(opt, n, word);
    }
    l3 = frame + h.l3_ofs;
    l4 = frame + h.l4_ofs;
    tcp_hlen = (l4[12] >> 4) * 4;
    if (tcp_hlen + n > 60 || head_len + n > AWAFS_HEAD_MAX) {
        return 0;
    }
    /* First among the options: ns-3 pads its own with EOL, which ends
     * them. */
    opts = h.l4_ofs + 20;
    memmove(frame + opts + n, frame + opts, head_len - opts);
    memcpy(frame + opts, opt, n);
    l4[12] = (uint8_t) ((tcp_hlen + n) / 4 << 4 | (l4[12] & 0x0f));
    if (completed) {
        l4[13] |= AWAFS_TCP_PSH;
    }
    tot_len = (uint16_t) (awafs_rd16(l3 + 2) + n);
    l3[2] = (uint8_t) (tot_len >> 8);
    l3[3] = (uint8_t) tot_len;
    return n;
}

/* A message of 'size' bytes from 'src', of a flow of 'type', completed:
 * the datapath's awafs_qos_complete(). */
void
AwafsQueueDisc::Complete(int64_t now_us, uint64_t size, const uint8_t src[16],
                         enum awafs_flow_type type)
{
    struct awafs_ring *ring = awafs_karuna_ring(m_ring, m_betaRing, type);

    m_completions++;
    if (ring) {
        awafs_ring_push_from(ring, now_us, size,
                             awafs_source_id(m_sourceKey, src));
    }
}

/* The queue of a frame parsed into 'h' (result 'r'), and the completions it
 * ends or reports: awafs_qos_classify__() with the port's trust mode, then
 * the rules for padded and byte-free TCP segments of awafs_qos_classify().
 * With trust=host, a frame without a valid option takes the default queue
 * (the lowest), and one without payload queue 0 within the byte-free
 * budget. */
unsigned int
AwafsQueueDisc::Classify(const uint8_t *frame, uint32_t head_len,
                         uint32_t len, enum awafs_parse_result r,
                         const struct awafs_hdr *h, int64_t now_us)
{
    unsigned int last = m_queues - 1, q;
    struct awafs_flow_result fr;
    struct awafs_flow_key key;
    bool byte_free_refused = false;     /* By its source's budget. */

    if (m_trustHost) {
        if (r != AWAFS_PARSE_OK) {
            q = r == AWAFS_PARSE_NO_OPTION && !h->payload_len ? 0 : last;
        } else {
            enum awafs_flow_type type = awafs_karuna_type(h->karuna);

            if (awafs_hdr_counts_completion(h)) {
                uint8_t src[16] = {0};

                memcpy(src, frame + h->l3_ofs + 12, 4);
                Complete(now_us, h->flow_size, src, type);
            }
            q = (m_karuna
                 ? awafs_karuna_queue(&m_thr, &m_betaThr, h, type,
                                      h->bytes_sent, -1, false,
                                      &m_karunaStats)
                 : awafs_classify(&m_thr, h->bytes_sent));
        }
    } else if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION)
        || !awafs_flow_key_from_frame(frame, head_len, h, &key)) {
        q = last;                               /* default-queue */
    } else {
        awafs_flowtab_update(m_flows, &key, h, m_trustVerify, now_us,
                             m_idleUs, &m_thr, &fr);
        byte_free_refused = fr.byte_free_refused;
        for (int i = 0; i < fr.n_completed; i++) {
            Complete(now_us, fr.completed[i], key.src,
                     (enum awafs_flow_type) fr.completed_type[i]);
        }
        q = (m_karuna
             ? awafs_karuna_queue(&m_thr, &m_betaThr, h,
                                  (enum awafs_flow_type) fr.type,
                                  fr.bytes_sent, fr.queue, fr.aged,
                                  &m_karunaStats)
             : fr.queue);
    }
    if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION) || !h->l4_ofs) {
        return q;
    }
    if (h->padded) {
        return last;
    }
    if (!h->payload_len) {
        return (byte_free_refused ? last
                : awafs_byte_free_queue(&m_byteFree, now_us, len,
                                        m_queues, &m_byteFreeOver));
    }
    return q;
}

bool
AwafsQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    uint8_t frame[AWAFS_HEAD_MAX];
    enum awafs_parse_result r;
    struct awafs_hdr h;
    uint32_t head_len, len, opt_len;
    void *pkt, *victims[1];
    uint8_t queue, ecn;
    bool self = false;
    size_t n;

    head_len = Frame(item, frame, &len);
    /* 'len' stays the packet's: the option is in the frame parsed, not on
     * the simulated link. */
    opt_len = (m_trustHost || m_trustVerify || m_karuna
               ? WriteOption(item, frame, head_len, len) : 0);
    head_len += opt_len;
    r = awafs_parse_head(frame, head_len, len + opt_len, nullptr, &h,
                         &m_parse);
    queue = Classify(frame, head_len, len + opt_len, r, &h, now_us);
    ecn = m_ecnThreshold && awafs_ecn_capable(frame, head_len, &h);

    /* The scheduler holds a reference of its own. */
    item->Ref();
    pkt = PeekPointer(item);
    n = awafs_sched_enqueue_burst(m_sched, &queue, &pkt, &len,
                                  m_ecnThreshold ? &ecn : nullptr, 1,
                                  Ticks(), victims);
    for (size_t i = 0; i < n; i++) {
        Ptr<QueueDiscItem> v(static_cast<QueueDiscItem *>(victims[i]), false);

        if (v == item) {
            self = true;
            DropBeforeEnqueue(v, "buffer full");
        } else {
            /* Pushed out of a lower queue by this packet. */
            DropAfterDequeue(v, "pushed out");
        }
    }
    if (!self && ecn) {
        Mark(item, "CE above the ECN threshold");
    }
    return !self;
}

Ptr<QueueDiscItem>
AwafsQueueDisc::DoDequeue()
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    uint64_t rate = m_maxRate.GetBitRate() / 8;
    int64_t budget = INT64_MAX;
    Ptr<QueueDiscItem> item;
    int queue = -1;
    void *pkt;

    if (rate) {
        budget = awafs_tb_budget(&m_shaper, now_us);
        if (budget <= 0) {
            /* Back when the bucket holds a byte again. */
            if (!m_wakeEvent.IsRunning()) {
                m_wakeEvent = Simulator::Schedule(
                    MicroSeconds(1 + (1 - budget) * 1000000 / rate),
                    &QueueDisc::Run, this);
            }
            return nullptr;
        }
    }
    if (!awafs_sched_peek(m_sched, &pkt, 1, budget, Ticks())) {
        return nullptr;
    }
    if (m_departure.IsEmpty()) {
        awafs_sched_commit(m_sched, 1);
    } else {
        queue = CommitRecording();     /* A look at every queue's counters. */
    }
    item = Ptr<QueueDiscItem>(static_cast<QueueDiscItem *>(pkt), false);
    m_departure(item, queue);
    if (rate) {
        awafs_tb_consume(&m_shaper,
                         std::max<uint32_t>(AWAFS_ETH_MIN_FRAME,
                                            14 + item->GetSize())
                         + AWAFS_WIRE_OVERHEAD);
    }
    return item;
}

/* awafs_sched_commit() of the one packet peeked: returns its queue, the one
 * whose sent packets it counts. */
int
AwafsQueueDisc::CommitRecording()
{
    uint64_t before[AWAFS_MAX_QUEUES];
    struct awafs_queue_stats qs;

    for (uint32_t q = 0; q < m_queues; q++) {
        awafs_sched_get_queue_stats(m_sched, q, &qs);
        before[q] = qs.tx_packets;
    }
    awafs_sched_commit(m_sched, 1);
    for (uint32_t q = 0; q < m_queues; q++) {
        awafs_sched_get_queue_stats(m_sched, q, &qs);
        if (qs.tx_packets != before[q]) {
            return q;
        }
    }
    return -1;
}

void
AwafsQueueDisc::GetQueueStats(uint32_t q, struct awafs_queue_stats *s) const
{
    awafs_sched_get_queue_stats(m_sched, q, s);
}

void
AwafsQueueDisc::GetFlowtabStats(struct awafs_flowtab_stats *s) const
{
    awafs_flowtab_get_stats(m_flows, s);
}

/* The port's load for the FCT model, as the datapath's
 * awafs_qos_measure_load() gives it: awafs_load_update() of the wire bytes
 * sent and dropped. */
double
AwafsQueueDisc::MeasureLoad(int64_t now_us)
{
    uint64_t bytes = 0;

    for (uint32_t q = 0; q < m_queues; q++) {
        struct awafs_queue_stats qs;

        awafs_sched_get_queue_stats(m_sched, q, &qs);
        bytes += awafs_queue_wire_bytes(&qs);
    }
    return awafs_load_update(&m_load, now_us, bytes,
                             m_linkRate.GetBitRate(), m_cfg.window_us);
}

void
AwafsQueueDisc::Recalculate()
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    double load = MeasureLoad(now_us);

    if (m_cfg.minimise_fct) {
        awafs_adapt_set_load(m_adapt, load);
    }
    awafs_adapt_update(m_adapt, now_us, &m_thr);
    if (m_betaAdapt) {
        awafs_adapt_update(m_betaAdapt, now_us, &m_betaThr);
    }
    m_rounds.push_back({Simulator::Now().GetSeconds(), m_thr,
                        awafs_adapt_window_count(m_adapt), load,
                        m_betaThr});
    m_recalcEvent = Simulator::Schedule(MicroSeconds(m_cfg.interval_us),
                                        &AwafsQueueDisc::Recalculate, this);
}

void
AwafsQueueDisc::Sweep()
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    uint64_t sizes[SWEEP_ENTRIES];
    uint8_t types[SWEEP_ENTRIES];
    uint8_t srcs[SWEEP_ENTRIES][16];
    size_t n;

    n = awafs_flowtab_sweep(m_flows, SWEEP_ENTRIES, now_us, m_idleUs, sizes,
                            types, srcs);
    for (size_t i = 0; i < n; i++) {
        Complete(now_us, sizes[i], srcs[i], (enum awafs_flow_type) types[i]);
    }
    m_sweepEvent = Simulator::Schedule(MicroSeconds(SWEEP_INTERVAL_US),
                                       &AwafsQueueDisc::Sweep, this);
}
