/*
 * awafs-ns3: the AWAFS core (lib/) as an ns-3 queue disc on a switch port,
 * under the thesis's micro benchmark on simulated TCP.
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

/* A star: H sender hosts and one receiver on one switch (an IPv4 router
 * with a point-to-point link to each host).  The switch's port towards the
 * receiver runs AwafsQueueDisc, which drives the unchanged core as the OVS
 * datapath does with trust=switch (netdev-ext/netdev-dpdk-awafs.c,
 * awafs_qos_classify_batch()): each packet is serialized behind an Ethernet
 * header into a frame that awafs_parse_head(), awafs_flow_key_from_frame()
 * and awafs_flowtab_update() read (with trust=host, the option that the
 * sender's agent would have written, from a byte tag on the message's
 * bytes, and the host-mode classification); completed messages go into
 * the adapt ring; awafs_adapt_update() runs every interval of simulated time; the
 * packets wait in the core's strict-priority scheduler (struct awafs_sched),
 * which also decides drops and ECN marks.  sim/ns3/README.md has the rest. */

extern "C" {
#include "awafs.h"
}

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace ns3;

namespace {

/* What the OVS datapath does between packets, at its pace
 * (netdev-dpdk-awafs.c): the flow table's sweep of idle messages. */
const int64_t SWEEP_INTERVAL_US = 1000;
const uint32_t SWEEP_ENTRIES = 256;
const int64_t US = 1000000;
/* The thesis's micro benchmark (testbed/micro.py). */
const uint64_t SHORT = 10000, LONG = 1000000;
const double SHORT_SHARE = 0.8;
/* Short flows, as the thesis counts them: at most 100 kB. */
const uint64_t SHORT_MAX = 100000;
const uint16_t PORT = 5000;
/* With trust=host, the least a sender writes at once (or the rest of its
 * flow): each write carries a byte tag, and ns-3's TCP copies the tags of
 * every write still in its buffer onto each segment it cuts, so that a
 * write per ACK made a run of web-search flows 3 times slower; the
 * buffer (4 MB) keeps TCP from waiting for it. */
const uint32_t TAGGED_WRITE_MIN = 256 << 10;

/* Parses a list of numbers separated by commas; false if it is not one. */
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

/* "1 value", "3 values". */
std::string
Values(uint32_t n)
{
    return std::to_string(n) + (n == 1 ? " value" : " values");
}

} // namespace

/* ---- The queue disc ---------------------------------------------------- */

/* What a sending host's agent knows of the message that a byte belongs
 * to, set by the sending application on every byte it writes (ns-3 keeps
 * byte tags on the bytes through TCP's segmentation and every hop): the
 * TCP sequence number of the message's first byte and its size.  With
 * trust=host a switch port writes from it, into the frame it parses, the
 * option that the host agent would have written (docs/header.md). */
class AwafsMessageTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 8; }
    void Serialize(TagBuffer b) const override
    {
        b.WriteU32(seq);
        b.WriteU32(size);
    }
    void Deserialize(TagBuffer b) override
    {
        seq = b.ReadU32();
        size = b.ReadU32();
    }
    void Print(std::ostream &os) const override
    {
        os << "seq=" << seq << " size=" << size;
    }

    uint32_t seq = 0;
    uint32_t size = 0;
};

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

/* One round of the recalculation, as the trace records it. */
struct AwafsRound {
    double time_s;
    struct awafs_thresholds thr;
    uint32_t window;            /* Completions in the window. */
    double load;                /* Measured, a share of the rate. */
};

class AwafsQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    AwafsQueueDisc();
    ~AwafsQueueDisc() override;

    /* Builds the core's configuration from the attributes: "" if it is
     * valid, else why not. */
    std::string ConfigError();

    const struct awafs_thresholds &Thresholds() const { return m_thr; }
    const std::vector<AwafsRound> &Rounds() const { return m_rounds; }
    void GetQueueStats(uint32_t q, struct awafs_queue_stats *) const;
    uint32_t NQueues() const { return m_cfg.n_queues; }
    uint64_t Completions() const { return m_completions; }
    void GetFlowtabStats(struct awafs_flowtab_stats *) const;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;

    uint32_t Frame(Ptr<QueueDiscItem> item, uint8_t *frame,
                   uint32_t *len) const;
    uint32_t WriteOption(Ptr<QueueDiscItem> item, uint8_t *frame,
                         uint32_t head_len, uint32_t len) const;
    unsigned int Classify(const uint8_t *frame, uint32_t head_len,
                          uint32_t len, enum awafs_parse_result r,
                          const struct awafs_hdr *h, int64_t now_us);
    void Complete(int64_t now_us, uint64_t size, const uint8_t src[16]);
    void Recalculate();
    void Sweep();
    double MeasureLoad(int64_t now_us);
    static uint32_t Ticks();

    /* Attributes. */
    uint32_t m_queues;
    std::string m_mode;
    std::string m_trust;
    std::string m_thresholds;
    std::string m_percentiles;
    uint32_t m_windowMs;
    uint32_t m_intervalMs;
    uint32_t m_minSamples;
    std::string m_windowType;
    uint32_t m_buffer;
    uint32_t m_ecnThreshold;
    bool m_ecnPerQueue;
    uint32_t m_flowTableSize;
    uint32_t m_idleUs;
    std::string m_tardy;
    uint64_t m_tardyLimit;
    bool m_sourceBudgets;
    DataRate m_linkRate;
    DataRate m_maxRate;
    uint64_t m_seed;

    /* The core's parts, as one port of netdev-dpdk-awafs.c holds them. */
    struct awafs_config m_cfg;
    struct awafs_adapt *m_adapt;
    struct awafs_ring *m_ring;
    struct awafs_flowtab *m_flows;
    struct awafs_sched *m_sched;
    bool m_trustHost;                   /* Trust is "host". */
    bool m_trustVerify;                 /* Trust is "verify". */
    uint64_t m_tardyBytes;              /* awafs_flowtab_set_tardy()'s. */
    struct awafs_tb m_byteFree;
    struct awafs_tb m_shaper;           /* With MaxRate. */
    EventId m_wakeEvent;                /* Dequeue when it has credit. */
    struct awafs_parse_stats m_parse;
    struct awafs_thresholds m_thr;
    uint32_t m_sourceKey[4];

    uint64_t m_completions;
    uint64_t m_byteFreeOver;
    struct awafs_load m_load;
    std::vector<AwafsRound> m_rounds;
    EventId m_recalcEvent, m_sweepEvent;
};

NS_OBJECT_ENSURE_REGISTERED(AwafsQueueDisc);

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
                          MakeUintegerAccessor(&AwafsQueueDisc::m_ecnThreshold),
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
                          MakeUintegerChecker<uint64_t>());
    return tid;
}

AwafsQueueDisc::AwafsQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS),
      m_adapt(nullptr),
      m_ring(nullptr),
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
}

AwafsQueueDisc::~AwafsQueueDisc()
{
    awafs_adapt_destroy(m_adapt);
    awafs_flowtab_destroy(m_flows);
    if (m_sched) {
        awafs_sched_destroy(m_sched);
    }
}

std::string
AwafsQueueDisc::ConfigError()
{
    std::vector<double> thr, pct;
    const char *msg;

    if (m_queues < AWAFS_MIN_QUEUES || m_queues > AWAFS_MAX_QUEUES) {
        return "queues must be between 2 and 8";
    }
    awafs_config_default(&m_cfg, m_queues);
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
    if (m_tardy == "tfs+" && !m_tardyLimit) {
        return "the tardy limit must be positive";
    }
    m_tardyBytes = (m_tardy == "tfs" ? UINT64_MAX
                    : m_tardy == "tfs+" ? m_tardyLimit : 0);
    if (!ParseList(m_thresholds, &thr) || thr.size() != m_queues - 1) {
        return "thresholds: " + std::to_string(m_queues) + " queues take "
               + Values(m_queues - 1) + " in bytes, not '" + m_thresholds
               + "'";
    }
    for (size_t i = 0; i < thr.size(); i++) {
        if (thr[i] < 0 || thr[i] > 4294967295.0 || thr[i] != floor(thr[i])) {
            return "thresholds must be whole bytes up to 4294967295";
        }
        m_cfg.init_thr[i] = (uint64_t) thr[i];
    }
    if (m_percentiles == "auto") {
        m_cfg.minimise_fct = true;
    } else if (!ParseList(m_percentiles, &pct)
               || pct.size() != m_queues - 1) {
        return "percentiles: " + std::to_string(m_queues) + " queues take "
               + Values(m_queues - 1) + " or auto, not '" + m_percentiles
               + "'";
    } else {
        for (size_t i = 0; i < pct.size(); i++) {
            if (pct[i] <= 0 || pct[i] >= 100) {
                return "percentiles must be in (0, 100)";
            }
            m_cfg.pct_milli[i] = (uint32_t) llround(pct[i] * 1000);
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
    m_sched = awafs_sched_create(m_cfg.n_queues, m_buffer);
    NS_ABORT_MSG_IF(!m_adapt || !m_flows || !m_sched,
                    "AwafsQueueDisc: out of memory");
    m_ring = awafs_adapt_ring(m_adapt);
    awafs_flowtab_set_tardy(m_flows, m_tardyBytes);
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
    m_rounds.push_back({Simulator::Now().GetSeconds(), m_thr, 0, 0});
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

/* With trust=host: adds to the frame parsed from 'head_len' bytes at
 * 'frame' (room for AWAFS_HEAD_MAX) the option that the sending host's
 * agent writes on a TCP segment with payload (docs/header.md), from the
 * AwafsMessageTag on the segment's first byte: the bytes of its message
 * before the segment and, on the segment that carries the message's last
 * byte, the completed bit and the size.  That segment also gets PSH, which
 * Linux sets on the last segment of a write and ns-3's TCP never does:
 * the switch counts a completion on it (awafs_hdr_counts_completion()).
 * Returns the bytes added to the frame and its IP packet (0: no option: no
 * tag, no payload, or no room in the TCP header). */
uint32_t
AwafsQueueDisc::WriteOption(Ptr<QueueDiscItem> item, uint8_t *frame,
                            uint32_t head_len, uint32_t len) const
{
    uint8_t opt[AWAFS_OPT_LEN_COMPLETED];
    uint32_t tcp_hlen, opts, bytes_sent, n;
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
    tot_len = (uint16_t) ((l3[2] << 8 | l3[3]) + n);
    l3[2] = (uint8_t) (tot_len >> 8);
    l3[3] = (uint8_t) tot_len;
    return n;
}

/* A message of 'size' bytes from 'src' completed: the datapath's
 * awafs_qos_complete() without Karuna. */
void
AwafsQueueDisc::Complete(int64_t now_us, uint64_t size, const uint8_t src[16])
{
    m_completions++;
    awafs_ring_push_from(m_ring, now_us, size,
                         awafs_source_id(m_sourceKey, src));
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
    unsigned int last = m_cfg.n_queues - 1, q;
    struct awafs_flow_result fr;
    struct awafs_flow_key key;
    bool byte_free_refused = false;     /* By its source's budget. */

    if (m_trustHost) {
        if (r != AWAFS_PARSE_OK) {
            q = r == AWAFS_PARSE_NO_OPTION && !h->payload_len ? 0 : last;
        } else {
            if (awafs_hdr_counts_completion(h)) {
                uint8_t src[16] = {0};

                memcpy(src, frame + h->l3_ofs + 12, 4);
                Complete(now_us, h->flow_size, src);
            }
            q = awafs_classify(&m_thr, h->bytes_sent);
        }
    } else if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION)
        || !awafs_flow_key_from_frame(frame, head_len, h, &key)) {
        q = last;                               /* default-queue */
    } else {
        awafs_flowtab_update(m_flows, &key, h, m_trustVerify, now_us,
                             m_idleUs, &m_thr, &fr);
        byte_free_refused = fr.byte_free_refused;
        for (int i = 0; i < fr.n_completed; i++) {
            Complete(now_us, fr.completed[i], key.src);
        }
        q = fr.queue;
    }
    if ((r != AWAFS_PARSE_OK && r != AWAFS_PARSE_NO_OPTION) || !h->l4_ofs) {
        return q;
    }
    if (awafs_hdr_padded(h, len)) {
        return last;
    }
    if (!h->payload_len) {
        return (byte_free_refused ? last
                : awafs_byte_free_queue(&m_byteFree, now_us, len,
                                        m_cfg.n_queues, &m_byteFreeOver));
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
    opt_len = (m_trustHost || m_trustVerify
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
    awafs_sched_commit(m_sched, 1);
    item = Ptr<QueueDiscItem>(static_cast<QueueDiscItem *>(pkt), false);
    if (rate) {
        awafs_tb_consume(&m_shaper,
                         std::max<uint32_t>(AWAFS_ETH_MIN_FRAME,
                                            14 + item->GetSize())
                         + AWAFS_WIRE_OVERHEAD);
    }
    return item;
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

    for (uint32_t q = 0; q < m_cfg.n_queues; q++) {
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
    m_rounds.push_back({Simulator::Now().GetSeconds(), m_thr,
                        awafs_adapt_window_count(m_adapt), load});
    m_recalcEvent = Simulator::Schedule(MicroSeconds(m_cfg.interval_us),
                                        &AwafsQueueDisc::Recalculate, this);
}

void
AwafsQueueDisc::Sweep()
{
    int64_t now_us = Simulator::Now().GetMicroSeconds();
    uint64_t sizes[SWEEP_ENTRIES];
    uint8_t srcs[SWEEP_ENTRIES][16];
    size_t n;

    n = awafs_flowtab_sweep(m_flows, SWEEP_ENTRIES, now_us, m_idleUs, sizes,
                            nullptr, srcs);
    for (size_t i = 0; i < n; i++) {
        Complete(now_us, sizes[i], srcs[i]);
    }
    m_sweepEvent = Simulator::Schedule(MicroSeconds(SWEEP_INTERVAL_US),
                                       &AwafsQueueDisc::Sweep, this);
}

/* ---- The ideal scheduler ----------------------------------------------- */

/* A packet's flow: its IPv4 addresses, protocol and ports (TCP or UDP). */
struct FiveTuple {
    uint32_t src, dst;
    uint16_t sport, dport;
    uint8_t proto;
};

FiveTuple
TupleOf(const Ipv4Header &ip, Ptr<const Packet> l4)
{
    FiveTuple t = {ip.GetSource().Get(), ip.GetDestination().Get(), 0, 0,
                   ip.GetProtocol()};
    uint8_t ports[4];

    if ((t.proto == 6 || t.proto == 17) && l4->GetSize() >= 4) {
        l4->CopyData(ports, 4);
        t.sport = ports[0] << 8 | ports[1];
        t.dport = ports[2] << 8 | ports[3];
    }
    return t;
}

/* The ideal lower bound, pFabric's scheduling with the sizes known: the
 * port sends a packet of the flow with the fewest bytes left to deliver (as
 * the simulator knows them, not as any packet says), that flow's earliest
 * packet, so that no flow is reordered; a full buffer drops the latest
 * packet of the flow with the most bytes left.  A flow's acknowledgements
 * go with it.  Without the oracle (SetOracle()) every packet is of one
 * flow: a drop-tail FIFO that marks as the switch's ports do, the
 * leaf-spine's hosts' NICs. */
class SrptQueueDisc : public QueueDisc
{
  public:
    /* The flow of a packet (NO_FLOW: none), and the bytes it has left. */
    typedef std::function<uint32_t(const FiveTuple &)> FlowOf;
    typedef std::function<uint64_t(uint32_t)> BytesLeft;
    static const uint32_t NO_FLOW = UINT32_MAX;

    static TypeId GetTypeId();
    SrptQueueDisc() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}
    void SetOracle(FlowOf flow_of, BytesLeft left);

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override { return true; }
    void InitializeParams() override {}
    uint64_t Left(uint32_t flow) const;
    uint32_t Ahead(uint32_t flow) const;

    uint32_t m_buffer;
    uint32_t m_ecnThreshold;
    FlowOf m_flowOf;
    BytesLeft m_left;
    std::map<uint32_t, std::deque<Ptr<QueueDiscItem>>> m_held;
    uint32_t m_count = 0;
};

NS_OBJECT_ENSURE_REGISTERED(SrptQueueDisc);

TypeId
SrptQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::SrptQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddConstructor<SrptQueueDisc>()
            .AddAttribute("Buffer", "Packets held.", UintegerValue(1024),
                          MakeUintegerAccessor(&SrptQueueDisc::m_buffer),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("EcnThreshold",
                          "CE-mark an ECT packet that finds more than this "
                          "many packets queued (0: off).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&SrptQueueDisc::m_ecnThreshold),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

void
SrptQueueDisc::SetOracle(FlowOf flow_of, BytesLeft left)
{
    m_flowOf = flow_of;
    m_left = left;
}

uint64_t
SrptQueueDisc::Left(uint32_t flow) const
{
    return flow == NO_FLOW ? 0 : m_left(flow);
}

/* The packets held that go before one of 'flow' would: the queue that
 * the ECN threshold is of.  A flow is marked for the packets it waits
 * behind, not for those of longer flows waiting behind it (marked for
 * those, DCTCP's short flows slowed down behind nothing). */
uint32_t
SrptQueueDisc::Ahead(uint32_t flow) const
{
    uint64_t left = Left(flow);
    uint32_t n = 0;

    for (const auto &h : m_held) {
        n += Left(h.first) <= left ? h.second.size() : 0;
    }
    return n;
}

bool
SrptQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    uint32_t flow = (ip && m_flowOf
                     ? m_flowOf(TupleOf(ip->GetHeader(), ip->GetPacket()))
                     : NO_FLOW);

    if (m_count >= m_buffer) {
        auto victim = m_held.end();

        for (auto it = m_held.begin(); it != m_held.end(); ++it) {
            if (victim == m_held.end() || Left(it->first) > Left(victim->first)) {
                victim = it;
            }
        }
        if (Left(flow) >= Left(victim->first)) {
            DropBeforeEnqueue(item, "buffer full");
            return false;
        }
        DropAfterDequeue(victim->second.back(), "pushed out");
        victim->second.pop_back();
        if (victim->second.empty()) {
            m_held.erase(victim);
        }
        m_count--;
    }
    if (m_ecnThreshold && ip
        && ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT
        && Ahead(flow) > m_ecnThreshold) {
        Mark(item, "CE above the ECN threshold");
    }
    m_held[flow].push_back(item);
    m_count++;
    return true;
}

Ptr<QueueDiscItem>
SrptQueueDisc::DoDequeue()
{
    auto best = m_held.end();
    Ptr<QueueDiscItem> item;

    /* The bytes left change as the flows' receivers read, so the order is
     * decided now, over the flows held (a handful). */
    for (auto it = m_held.begin(); it != m_held.end(); ++it) {
        if (best == m_held.end() || Left(it->first) < Left(best->first)) {
            best = it;
        }
    }
    if (best == m_held.end()) {
        return nullptr;
    }
    item = best->second.front();
    best->second.pop_front();
    if (best->second.empty()) {
        m_held.erase(best);
    }
    m_count--;
    return item;
}

/* ---- Routing in a leaf-spine or fat-tree ------------------------------- */

/* What the top switches (spines, cores) saw, for the summary: packets per
 * switch, and the top switches each flow direction (five-tuple) crossed. */
struct EcmpStats {
    std::vector<uint64_t> spine_packets;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> spines_of;

    void Count(uint32_t spine, const FiveTuple &t)
    {
        spine_packets[spine]++;
        spines_of[{t.src, t.dst, (uint32_t) t.sport << 16 | t.dport}]
            |= 1u << spine;
    }

    /* Flow directions whose packets crossed more than one top switch. */
    uint32_t Multipath() const
    {
        uint32_t n = 0;

        for (const auto &s : spines_of) {
            n += (s.second & (s.second - 1)) != 0;
        }
        return n;
    }
};

/* The forwarding of one switch of a Clos fabric: a leaf-spine (edges and
 * cores) or a three-tier fat-tree (edges, aggregation switches, cores).
 * Host h of edge e in pod p is 10.p.(e * per_edge + h).1 (in the
 * leaf-spine, a pod is a leaf, with one edge).  An edge switch sends a
 * packet for one of its hosts down that host's link, and any other up; an
 * aggregation switch sends a packet for its pod down to its edge, and any
 * other up; a core sends it down to its destination's pod.  Up is chosen by
 * a hash of the packet's five-tuple, salted per switch, so that every
 * packet of a flow direction takes one path (per-flow ECMP), or at random
 * per packet (--ecmp packet, packet spraying: ns-3's global routing offers
 * only this, its RandomEcmpRouting, which reorders TCP's segments). */
class ClosRouting : public Ipv4RoutingProtocol
{
  public:
    enum Role { EDGE, AGG, CORE };
    struct Port {
        uint32_t iface;
        Ipv4Address next;           /* The neighbour on that link. */
    };

    static TypeId GetTypeId();
    /* An edge switch 'index' of pod 'pod' (of 'per_edge' hosts), an
     * aggregation switch of pod 'pod', or core 'index'. */
    ClosRouting(Role role, uint32_t pod, uint32_t index, uint32_t per_edge,
                bool per_packet, uint32_t salt, EcmpStats *stats)
        : m_role(role), m_pod(pod), m_index(index), m_perEdge(per_edge),
          m_perPacket(per_packet), m_salt(salt), m_rng(salt),
          m_stats(stats) {}

    std::vector<Port> down;         /* Edge: by host.  Aggregation: by edge.
                                     * Core: by pod. */
    std::vector<Port> up;

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet>, const Ipv4Header &,
                               Ptr<NetDevice>,
                               Socket::SocketErrno &err) override
    {
        /* A switch sends nothing of its own. */
        err = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    bool RouteInput(Ptr<const Packet> p, const Ipv4Header &ip,
                    Ptr<const NetDevice> idev, UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
    void SetIpv4(Ptr<Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit) const override
    {
        static const char *names[] = {"edge", "aggregation", "core"};

        *stream->GetStream() << names[m_role] << " " << m_pod << "/"
                             << m_index << ": " << down.size() << " down, "
                             << up.size() << " up (per-flow ECMP)\n";
    }

  private:
    uint32_t Uplink(const FiveTuple &t);

    Role m_role;
    uint32_t m_pod;
    uint32_t m_index;
    uint32_t m_perEdge;
    bool m_perPacket;
    uint32_t m_salt;
    std::mt19937 m_rng;
    EcmpStats *m_stats;
    Ptr<Ipv4> m_ipv4;
};

TypeId
ClosRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ClosRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("Internet");
    return tid;
}

uint32_t
ClosRouting::Uplink(const FiveTuple &t)
{
    uint8_t key[17];

    if (m_perPacket) {
        return m_rng() % up.size();
    }
    memcpy(key, &t.src, 4);
    memcpy(key + 4, &t.dst, 4);
    memcpy(key + 8, &t.sport, 2);
    memcpy(key + 10, &t.dport, 2);
    key[12] = t.proto;
    memcpy(key + 13, &m_salt, 4);
    return Hash32((const char *) key, sizeof key) % up.size();
}

bool
ClosRouting::RouteInput(Ptr<const Packet> p, const Ipv4Header &ip,
                        Ptr<const NetDevice>, UnicastForwardCallback ucb,
                        MulticastForwardCallback, LocalDeliverCallback,
                        ErrorCallback)
{
    uint8_t a[4];
    uint32_t i;
    const Port *port = nullptr;

    /* Ipv4ListRouting delivered the packets addressed to this node. */
    ip.GetDestination().Serialize(a);
    if (a[0] != 10) {
        return false;
    }
    switch (m_role) {
    case CORE:
        m_stats->Count(m_index, TupleOf(ip, p));
        i = a[1];
        break;
    case AGG:
        i = a[1] == m_pod ? a[2] / m_perEdge : UINT32_MAX;
        break;
    case EDGE:
    default:
        i = (a[1] == m_pod && a[2] / m_perEdge == m_index
             ? a[2] % m_perEdge : UINT32_MAX);
        break;
    }
    if (i != UINT32_MAX) {
        if (i >= down.size()) {
            return false;
        }
        port = &down[i];
    } else if (up.empty()) {
        return false;
    } else {
        port = &up[Uplink(TupleOf(ip, p))];
    }
    Ptr<Ipv4Route> r = Create<Ipv4Route>();
    r->SetDestination(ip.GetDestination());
    r->SetGateway(port->next);
    r->SetSource(m_ipv4->GetAddress(port->iface, 0).GetLocal());
    r->SetOutputDevice(m_ipv4->GetNetDevice(port->iface));
    ucb(r, p, ip);
    return true;
}

/* ---- Command line ------------------------------------------------------ */

namespace {

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
    uint64_t rate_bps = 0;              /* Default: 100M star, 10G leaf-spine. */
    uint64_t access_rate_bps = 0;       /* Default: 10 x rate_bps. */
    uint64_t max_rate_bps = 0;          /* 0: rate_bps paces the port. */
    uint64_t spine_rate_bps = 40000000000;
    std::string ecmp = "flow";
    double delay_us = -1;               /* Default: 10 star, 10.65 leaf-spine. */
    double load = 0.5;
    uint32_t flows = 1000;
    uint64_t seed = 1;
    uint32_t queues = 2;
    std::string thresholds;             /* Default: 1000000 each. */
    std::string percentiles;            /* Default: 10, 20, ... */
    uint32_t window_ms = 1000;
    uint32_t interval_ms = 200;
    uint32_t min_samples = 10;
    std::string window_type = "histogram";
    uint32_t buffer = 1024;
    uint32_t nic_buffer = 0;            /* Default: buffer. */
    long ecn_threshold = -1;            /* Default: 20 with DCTCP, else 0. */
    std::string ecn_mode = "port";
    uint32_t flow_table_size = 4096;
    double min_rto_ms = 200;
    double syn_rto_ms = 3000;           /* ns-3's ConnTimeout. */
    std::string workload;               /* A CDF file; "": the micro mix. */
    std::string then_workload;          /* A CDF: the second half's. */
    std::string pair_workload;          /* A CDF: higher to lower host's. */
    uint32_t queries = 0;               /* Partition-aggregate queries. */
    std::string query_sizes = "20000,80000";
    uint32_t query_fanout = 10;
    double query_load = 0.1;
    std::string tardy = "off";
    uint64_t tardy_limit = 100000;
    bool source_budgets = false;
    std::string flows_csv;
    std::string trace_csv;
};

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
    "  --rate R           star: the receiver's link; leaf-spine: every host's\n"
    "                     link; fat-tree: every link; bit/s: 100M, 10G, 1e9\n"
    "                     (star 100M, else 10G)\n"
    "  --access-rate R    the senders' links (10 x --rate): the switch's port\n"
    "                     toward the receiver is the one bottleneck\n"
    "  --max-rate R       shape that port as the switch's max-rate does\n"
    "                     (a 1 ms token bucket), below --rate; the load is\n"
    "                     of this rate (0: none)\n"
    "  --delay-us D       every link's propagation delay (star 10,\n"
    "                     leaf-spine 10.65: the thesis's 85.2 us base RTT\n"
    "                     over 8 links; fat-tree 20: TFS's 240 us over the\n"
    "                     12 links between pods)\n"
    "  --load L           offered load, in (0, 1), of the star's bottleneck or\n"
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
    "  --window-ms N      W_update (1000)\n"
    "  --interval-ms N    T_schedule (200)\n"
    "  --min-samples N    completions before an update (10)\n"
    "  --window-type T    histogram | exact (histogram)\n"
    "  --buffer N         packets held at the port (1024)\n"
    "  --nic-buffer N     leaf-spine, fat-tree: packets held at a host's NIC\n"
    "                     (--buffer)\n"
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
    "  --syn-rto-ms N     the wait before a SYN is sent again (3000, ns-3's;\n"
    "                     Linux's is 1000)\n"
    "  --flows-csv FILE   every flow: id,size,start_s,fct_ms,sender (and\n"
    "                     receiver on a fabric; part, 0 or 1, the workload\n"
    "                     it is from, with a second workload; with queries,\n"
    "                     query, its query's number or empty, and tardy, 1\n"
    "                     if its sender retransmitted)\n"
    "  --trace-csv FILE   every recalculation round: time_s,version,window,\n"
    "                     load,thr1[,thr2...] (a fabric: of its first edge\n"
    "                     switch's port toward host 0)\n"
    "\n"
    "Prints one line: the scheme, flows completed, short and long mean FCT,\n"
    "the final thresholds, simulated and wall seconds.  Exit status 2 on a\n"
    "bad argument, 1 if a flow did not complete.\n";

[[noreturn]] void
Usage(const std::string &msg)
{
    fprintf(stderr, "awafs-ns3: %s (--help lists the options)\n",
            msg.c_str());
    exit(2);
}

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

/* A flow-size CDF: (size, cumulative probability) points, ascending. */
typedef std::vector<std::pair<double, double>> Cdf;

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

/* The size at cumulative probability 'u', linear between the points (as
 * testbed/workload.py's inverse_cdf()). */
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

/* The mean of InverseCdf() over u uniform in [0, 1]. */
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

/* The rate of the switch's port toward the receiver. */
uint64_t
PortRate(const Options &o)
{
    return o.max_rate_bps ? o.max_rate_bps : o.rate_bps;
}

/* "v,v,...", 'n' times. */
std::string
Repeat(const std::string &v, uint32_t n)
{
    std::string s;

    for (uint32_t i = 0; i < n; i++) {
        s += (i ? "," : "") + v;
    }
    return s;
}

/* The core's default RefPct for 'n_queues' queues (awafs_config_default()),
 * as the option writes them. */
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

/* ---- The workload ------------------------------------------------------ */

struct Flow {
    uint32_t id;
    uint32_t sender;            /* Host index: 1..H on the star. */
    uint32_t receiver = 0;
    uint64_t size;
    double start_s;
    double fct_ms = -1;
    uint64_t sent = 0;
    uint64_t received = 0;
    bool closed = false;
    uint8_t part = 0;           /* 1: from the second workload. */
    uint32_t first_seq = 0;     /* TCP sequence number of its first byte. */
    int32_t query = -1;         /* Its query's index, if it answers one. */
    bool tardy = false;         /* Its sender went into loss recovery. */
};

/* A partition-aggregate query: its answers are the flows whose 'query' is
 * its index, all started at 'start_s'. */
struct Query {
    double start_s;
    uint64_t size;              /* The answers' bytes, all together. */
};

struct Run {
    std::vector<Flow> flows;
    std::vector<Query> queries;
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> by_peer;
    NodeContainer hosts;        /* Star: 0 the receiver. */
    std::vector<Ipv4Address> addrs;
    uint32_t completed = 0;
    std::vector<Ptr<Socket>> listeners;
    bool tag_messages = false;  /* trust=host: the senders tag their bytes. */
};

Run g_run;

void
SendMore(uint32_t id, Ptr<Socket> s)
{
    Flow &f = g_run.flows[id];

    while (f.sent < f.size) {
        uint32_t room = s->GetTxAvailable();
        uint32_t n = (uint32_t) std::min<uint64_t>(f.size - f.sent, room);
        int r;

        if (!n || (g_run.tag_messages && n < f.size - f.sent
                   && n < TAGGED_WRITE_MIN)) {
            return;
        }
        Ptr<Packet> p = Create<Packet>(n);

        if (g_run.tag_messages) {
            /* The flow is one message, as a host agent sees it. */
            AwafsMessageTag tag;

            tag.seq = f.first_seq;
            tag.size = (uint32_t) std::min<uint64_t>(f.size, UINT32_MAX);
            p->AddByteTag(tag);
        }
        r = s->Send(p);
        if (r <= 0) {
            return;
        }
        f.sent += r;
    }
    if (!f.closed) {
        f.closed = true;
        s->Close();             /* FIN after the data. */
    }
}

void
OnConnected(uint32_t id, Ptr<Socket> s)
{
    /* The next byte to send, which no byte has taken yet. */
    g_run.flows[id].first_seq = DynamicCast<TcpSocketBase>(s)
                                    ->GetTxBuffer()->TailSequence()
                                    .GetValue();
    SendMore(id, s);
}

void
OnConnectFailed(uint32_t id, Ptr<Socket>)
{
    NS_FATAL_ERROR("flow " << id << ": connection failed");
}

void
OnSendSpace(uint32_t id, Ptr<Socket> s, uint32_t)
{
    if (!g_run.flows[id].closed) {
        SendMore(id, s);
    }
}

/* A flow is tardy (TFS's word) once its sender has retransmitted: fast
 * recovery or a timeout. */
void
OnCongState(uint32_t id, TcpSocketState::TcpCongState_t,
            TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY || now == TcpSocketState::CA_LOSS) {
        g_run.flows[id].tardy = true;
    }
}

void
StartFlow(uint32_t id)
{
    Flow &f = g_run.flows[id];
    Ptr<Socket> s = Socket::CreateSocket(g_run.hosts.Get(f.sender),
                                         TcpSocketFactory::GetTypeId());
    InetSocketAddress local = InetSocketAddress(Ipv4Address::GetAny(), 0);
    Address a;

    s->Bind();
    s->GetSockName(a);
    local = InetSocketAddress::ConvertFrom(a);
    g_run.by_peer[{g_run.addrs[f.sender].Get(), local.GetPort()}] = id;
    s->SetConnectCallback(MakeBoundCallback(&OnConnected, id),
                          MakeBoundCallback(&OnConnectFailed, id));
    s->SetSendCallback(MakeBoundCallback(&OnSendSpace, id));
    s->TraceConnectWithoutContext("CongState",
                                  MakeBoundCallback(&OnCongState, id));
    s->Connect(InetSocketAddress(g_run.addrs[f.receiver], PORT));
}

void
OnRecv(uint32_t id, Ptr<Socket> s)
{
    Flow &f = g_run.flows[id];
    Ptr<Packet> p;

    while ((p = s->Recv())) {
        f.received += p->GetSize();
    }
    if (f.received >= f.size && f.fct_ms < 0) {
        f.fct_ms = (Simulator::Now().GetSeconds() - f.start_s) * 1e3;
        s->Close();
        if (++g_run.completed == g_run.flows.size()) {
            Simulator::Stop();
        }
    }
}

void
OnAccept(Ptr<Socket> s, const Address &from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    auto it = g_run.by_peer.find({peer.GetIpv4().Get(), peer.GetPort()});

    NS_ABORT_MSG_IF(it == g_run.by_peer.end(), "a connection of no flow");
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, it->second));
    OnRecv(it->second, s);
}

/* SrptQueueDisc's knowledge: a packet's flow, by its sender's address and
 * port in either direction, and the bytes its receiver still lacks. */
uint32_t
FlowOf(const FiveTuple &t)
{
    auto it = g_run.by_peer.end();

    if (t.proto == 6 && t.dport == PORT) {
        it = g_run.by_peer.find({t.src, t.sport});
    } else if (t.proto == 6 && t.sport == PORT) {
        it = g_run.by_peer.find({t.dst, t.dport});
    }
    return it == g_run.by_peer.end() ? SrptQueueDisc::NO_FLOW : it->second;
}

uint64_t
BytesLeft(uint32_t id)
{
    const Flow &f = g_run.flows[id];

    return f.received < f.size ? f.size - f.received : 0;
}

double
Mean(const std::vector<double> &v)
{
    double sum = 0;

    for (double x : v) {
        sum += x;
    }
    return v.empty() ? NAN : sum / v.size();
}

std::string
JoinThresholds(const struct awafs_thresholds &t)
{
    std::string s;

    for (uint32_t i = 0; i + 1 < t.n_queues; i++) {
        s += (i ? "," : "") + std::to_string(t.thr[i]);
    }
    return s;
}

/* Each query's response time (ms), from its start to its last answer's
 * last byte; -1 if an answer did not complete. */
std::vector<double>
QueryTimes()
{
    std::vector<double> ms(g_run.queries.size(), 0);

    for (const Flow &f : g_run.flows) {
        if (f.query >= 0 && ms[f.query] >= 0) {
            ms[f.query] = f.fct_ms < 0 ? -1 : std::max(ms[f.query], f.fct_ms);
        }
    }
    return ms;
}

/* "SIZE:MEAN,...": the mean response time (ms) of the queries of each
 * size that completed, by size; and in '*done' how many completed. */
std::string
QueryMeans(uint32_t *done)
{
    std::map<uint64_t, std::vector<double>> by_size;
    std::vector<double> ms = QueryTimes();
    std::string s;

    *done = 0;
    for (uint32_t q = 0; q < ms.size(); q++) {
        if (ms[q] >= 0) {
            by_size[g_run.queries[q].size].push_back(ms[q]);
            ++*done;
        }
    }
    for (const auto &b : by_size) {
        char cell[64];

        snprintf(cell, sizeof cell, "%s%" PRIu64 ":%.3f", s.empty() ? "" : ",",
                 b.first, Mean(b.second));
        s += cell;
    }
    return s;
}

/* The port of one switch as the scheme configures it (testbed/micro.py
 * SCHEMES): 'thresholds' fixed or initial, at 'rate_bps'; exits with the
 * usage message if the core refuses the configuration. */
Ptr<AwafsQueueDisc>
MakeAwafs(const Options &o, const std::string &thresholds, uint64_t rate_bps,
          uint64_t seed)
{
    Ptr<AwafsQueueDisc> disc = CreateObject<AwafsQueueDisc>();
    std::string err;

    disc->SetAttribute("Queues", UintegerValue(o.queues));
    disc->SetAttribute("Mode", StringValue(o.scheme == "awafs"
                                           || o.scheme == "auto"
                                           ? "adaptive" : "static"));
    disc->SetAttribute("Trust", StringValue(o.trust));
    disc->SetAttribute("Thresholds", StringValue(thresholds));
    disc->SetAttribute("Percentiles",
                       StringValue(o.scheme == "auto" ? "auto"
                                   : !o.percentiles.empty() ? o.percentiles
                                   : DefaultPercentiles(o.queues)));
    disc->SetAttribute("WindowMs", UintegerValue(o.window_ms));
    disc->SetAttribute("IntervalMs", UintegerValue(o.interval_ms));
    disc->SetAttribute("MinSamples", UintegerValue(o.min_samples));
    disc->SetAttribute("WindowType", StringValue(o.window_type));
    disc->SetAttribute("Buffer", UintegerValue(o.buffer));
    disc->SetAttribute("EcnThreshold", UintegerValue(o.ecn_threshold));
    disc->SetAttribute("EcnPerQueue", BooleanValue(o.ecn_mode == "queue"));
    disc->SetAttribute("FlowTableSize", UintegerValue(o.flow_table_size));
    disc->SetAttribute("LinkRate", DataRateValue(DataRate(rate_bps)));
    disc->SetAttribute("MaxRate", DataRateValue(DataRate(o.max_rate_bps)));
    disc->SetAttribute("Tardy", StringValue(o.tardy));
    disc->SetAttribute("TardyLimit", UintegerValue(o.tardy_limit));
    disc->SetAttribute("SourceBudgets", BooleanValue(o.source_budgets));
    disc->SetAttribute("Seed", UintegerValue(seed));
    err = disc->ConfigError();
    if (!err.empty()) {
        Usage(err);
    }
    return disc;
}

/* SRPT ('srpt'), or else the marking FIFO of the hosts' NICs, holding
 * 'buffer' packets. */
Ptr<SrptQueueDisc>
MakeSrpt(const Options &o, bool srpt, uint32_t buffer)
{
    Ptr<SrptQueueDisc> disc = CreateObject<SrptQueueDisc>();

    disc->SetAttribute("Buffer", UintegerValue(buffer));
    disc->SetAttribute("EcnThreshold", UintegerValue(o.ecn_threshold));
    if (srpt) {
        disc->SetOracle(&FlowOf, &BytesLeft);
    }
    return disc;
}

/* Point-to-point links of 'o.delay_us' whose device queues hold one
 * packet, so that packets wait in the queue discs. */
static PointToPointHelper
Links(const Options &o)
{
    PointToPointHelper p2p;

    p2p.SetChannelAttribute("Delay",
                            TimeValue(NanoSeconds(llround(o.delay_us * 1e3))));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                 QueueSizeValue(QueueSize("1p")));
    return p2p;
}

/* The star: host 0 receives, hosts 1..H send; one link each to the switch,
 * whose device queues hold one packet so that packets wait in the queue
 * discs.  'disc' goes on the switch's port toward the receiver. */
void
BuildStar(const Options &o, Ptr<AwafsQueueDisc> disc)
{
    NodeContainer sw;
    sw.Create(1);
    g_run.hosts.Create(o.hosts + 1);
    InternetStackHelper stack;
    stack.Install(sw);
    stack.Install(g_run.hosts);

    PointToPointHelper p2p = Links(o);
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize("1000p")));
    Ptr<NetDevice> bottleneck;
    for (uint32_t i = 0; i <= o.hosts; i++) {
        NetDeviceContainer d;
        char base[32];

        /* The senders' links are faster: a sender's own link holds no
         * queue that its short flows wait in behind its long ones. */
        p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(
            i ? o.access_rate_bps : o.rate_bps)));
        d = p2p.Install(g_run.hosts.Get(i), sw.Get(0));
        Ipv4AddressHelper a;

        snprintf(base, sizeof base, "10.0.%u.0", i);
        a.SetBase(base, "255.255.255.0");
        Ipv4InterfaceContainer ifc = a.Assign(d);
        g_run.addrs.push_back(ifc.GetAddress(0));
        /* Assign() installed ns-3's default queue disc. */
        fifo.Uninstall(d);
        fifo.Install(d.Get(0));
        if (i == 0) {
            bottleneck = d.Get(1);
        } else {
            fifo.Install(d.Get(1));
        }
    }
    sw.Get(0)->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
        bottleneck, disc);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
}

uint32_t
Iface(Ptr<NetDevice> dev)
{
    return dev->GetNode()->GetObject<Ipv4>()->GetInterfaceForDevice(dev);
}

/* What a leaf-spine and a fat-tree build alike.  Every switch port has its
 * own queue disc of the scheme -- each its own instance of the core (flow
 * table, window, thresholds), as each port of an OVS switch.  The hosts'
 * NICs, as fast as their switch's port, hold a sender's window when its
 * flows share them: they mark as the switches do (else DCTCP's windows grow
 * until they drop, and a lost SYN costs a flow 3 s), drop-tail FIFOs of
 * --nic-buffer packets, or SRPT with srpt (as pFabric's hosts). */
class Fabric
{
  public:
    Fabric(const Options &o, const std::string &thresholds, EcmpStats *stats,
           std::vector<Ptr<QueueDisc>> *nics)
        : m_o(o), m_thresholds(thresholds), m_stats(stats), m_nics(nics),
          m_p2p(Links(o)) {}

    /* Switch 'n' forwards by a ClosRouting, ahead of the stack's static
     * and global routing, which hold no routes. */
    Ptr<ClosRouting> Router(Ptr<Node> n, ClosRouting::Role role,
                            uint32_t pod, uint32_t index, uint32_t per_edge)
    {
        Ptr<ClosRouting> r = CreateObject<ClosRouting>(
            role, pod, index, per_edge, m_o.ecmp == "packet",
            (uint32_t) (m_o.seed * 2654435761u + n->GetId()), m_stats);

        DynamicCast<Ipv4ListRouting>(
            n->GetObject<Ipv4>()->GetRoutingProtocol())
            ->AddRoutingProtocol(r, 10);
        return r;
    }

    /* A link at --rate from host 'host' to its edge switch 'edge' (routing
     * 'r'), 10.'pod'.'slot'.0/24: the host is .1, its next host down. */
    void HostLink(Ptr<Node> host, Ptr<Node> edge, Ptr<ClosRouting> r,
                  uint32_t pod, uint32_t slot)
    {
        NetDeviceContainer d;
        Ipv4InterfaceContainer ifc;

        m_p2p.SetDeviceAttribute("DataRate",
                                 DataRateValue(DataRate(m_o.rate_bps)));
        d = m_p2p.Install(host, edge);
        ifc = Assign(d, 10, pod, slot);
        g_run.addrs.push_back(ifc.GetAddress(0));
        m_nics->push_back(MakeSrpt(m_o, m_o.scheme == "srpt",
                                   m_o.nic_buffer));
        host->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(
            d.Get(0), m_nics->back());
        Port(d.Get(1), m_o.rate_bps);
        r->down.push_back({Iface(d.Get(1)), ifc.GetAddress(0)});
        m_statics.GetStaticRouting(host->GetObject<Ipv4>())
            ->SetDefaultRoute(ifc.GetAddress(1), Iface(d.Get(0)));
    }

    /* A link at 'rate' up from switch 'lower' to 'upper', a.b.c.0/24. */
    void SwitchLink(Ptr<Node> lower, Ptr<ClosRouting> lr, Ptr<Node> upper,
                    Ptr<ClosRouting> ur, uint64_t rate, uint32_t a,
                    uint32_t b, uint32_t c)
    {
        NetDeviceContainer d;
        Ipv4InterfaceContainer ifc;

        m_p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate)));
        d = m_p2p.Install(lower, upper);
        ifc = Assign(d, a, b, c);
        Port(d.Get(0), rate);
        Port(d.Get(1), rate);
        lr->up.push_back({Iface(d.Get(0)), ifc.GetAddress(1)});
        ur->down.push_back({Iface(d.Get(1)), ifc.GetAddress(0)});
    }

    std::vector<Ptr<QueueDisc>> ports;  /* In the order they were made. */

  private:
    Ipv4InterfaceContainer Assign(const NetDeviceContainer &d, uint32_t a,
                                  uint32_t b, uint32_t c)
    {
        Ipv4AddressHelper h;
        Ipv4InterfaceContainer ifc;
        char base[32];

        snprintf(base, sizeof base, "%u.%u.%u.0", a, b, c);
        h.SetBase(base, "255.255.255.0");
        ifc = h.Assign(d);
        /* Assign() installed ns-3's default queue discs. */
        m_none.Uninstall(d);
        return ifc;
    }

    void Port(Ptr<NetDevice> dev, uint64_t rate)
    {
        Ptr<QueueDisc> q;

        if (m_o.scheme == "srpt") {
            q = MakeSrpt(m_o, true, m_o.buffer);
        } else {
            q = MakeAwafs(m_o, m_thresholds, rate,
                          (m_o.seed << 20) + ports.size());
        }
        dev->GetNode()->GetObject<TrafficControlLayer>()
            ->SetRootQueueDiscOnDevice(dev, q);
        ports.push_back(q);
    }

    const Options &m_o;
    const std::string &m_thresholds;
    EcmpStats *m_stats;
    std::vector<Ptr<QueueDisc>> *m_nics;
    PointToPointHelper m_p2p;
    TrafficControlHelper m_none;
    Ipv4StaticRoutingHelper m_statics;
};

/* The thesis's leaf-spine (§5.4): L leaves of H hosts each, every leaf
 * linked to every spine; host i of leaf l is 10.l.i.1, the link of leaf l
 * and spine s is 11.l.s.0/24 (class Fabric has the ports and NICs).
 * Returns the switches' queue discs, leaf 0's port toward host 0 first,
 * and the hosts' in 'nics'. */
std::vector<Ptr<QueueDisc>>
BuildLeafSpine(const Options &o, const std::string &thresholds,
               EcmpStats *stats, std::vector<Ptr<QueueDisc>> *nics)
{
    NodeContainer leaves, spines;
    std::vector<Ptr<ClosRouting>> leaf_r, spine_r;
    Fabric f(o, thresholds, stats, nics);

    leaves.Create(o.leaves);
    spines.Create(o.spines);
    g_run.hosts.Create(o.leaves * o.hosts_per_leaf);
    InternetStackHelper stack;
    stack.Install(leaves);
    stack.Install(spines);
    stack.Install(g_run.hosts);
    stats->spine_packets.assign(o.spines, 0);

    for (uint32_t l = 0; l < o.leaves; l++) {
        leaf_r.push_back(f.Router(leaves.Get(l), ClosRouting::EDGE, l, 0,
                                  o.hosts_per_leaf));
    }
    for (uint32_t s = 0; s < o.spines; s++) {
        spine_r.push_back(f.Router(spines.Get(s), ClosRouting::CORE, 0, s,
                                   o.hosts_per_leaf));
    }
    for (uint32_t l = 0; l < o.leaves; l++) {
        for (uint32_t h = 0; h < o.hosts_per_leaf; h++) {
            f.HostLink(g_run.hosts.Get(l * o.hosts_per_leaf + h),
                       leaves.Get(l), leaf_r[l], l, h);
        }
    }
    for (uint32_t l = 0; l < o.leaves; l++) {
        for (uint32_t s = 0; s < o.spines; s++) {
            f.SwitchLink(leaves.Get(l), leaf_r[l], spines.Get(s), spine_r[s],
                         o.spine_rate_bps, 11, l, s);
        }
    }
    return f.ports;
}

/* TFS's three-tier fat-tree (seed 004, §5; Al-Fares et al.'s k-ary
 * fat-tree): k pods, each of k/2 edge and k/2 aggregation switches, every
 * edge switch with k/2 hosts and linked to each aggregation switch of its
 * pod; aggregation switch a of every pod linked to cores a k/2 .. a k/2 +
 * k/2 - 1; every link at --rate (k 6: 54 hosts, 45 switches, full
 * bisection).  Host h of edge e in pod p is 10.p.(e k/2 + h).1; the link
 * of edge e and aggregation switch a of pod p is 11.p.(e k/2 + a).0/24,
 * that of aggregation switch a of pod p and core a k/2 + j is
 * 12.p.(a k/2 + j).0/24.  Returns the switches' queue discs, edge 0's port
 * toward host 0 first, and the hosts' in 'nics'. */
std::vector<Ptr<QueueDisc>>
BuildFatTree(const Options &o, const std::string &thresholds,
             EcmpStats *stats, std::vector<Ptr<QueueDisc>> *nics)
{
    uint32_t half = o.k / 2;
    NodeContainer edges, aggs, cores;
    std::vector<Ptr<ClosRouting>> edge_r, agg_r, core_r;
    Fabric f(o, thresholds, stats, nics);

    edges.Create(o.k * half);
    aggs.Create(o.k * half);
    cores.Create(half * half);
    g_run.hosts.Create(o.k * half * half);
    InternetStackHelper stack;
    stack.Install(edges);
    stack.Install(aggs);
    stack.Install(cores);
    stack.Install(g_run.hosts);
    stats->spine_packets.assign(half * half, 0);

    for (uint32_t i = 0; i < o.k * half; i++) {
        edge_r.push_back(f.Router(edges.Get(i), ClosRouting::EDGE, i / half,
                                  i % half, half));
        agg_r.push_back(f.Router(aggs.Get(i), ClosRouting::AGG, i / half,
                                 i % half, half));
    }
    for (uint32_t c = 0; c < half * half; c++) {
        core_r.push_back(f.Router(cores.Get(c), ClosRouting::CORE, 0, c,
                                  half));
    }
    for (uint32_t i = 0; i < o.k * half; i++) {
        for (uint32_t h = 0; h < half; h++) {
            f.HostLink(g_run.hosts.Get(i * half + h), edges.Get(i),
                       edge_r[i], i / half, i % half * half + h);
        }
    }
    for (uint32_t p = 0; p < o.k; p++) {
        for (uint32_t e = 0; e < half; e++) {
            for (uint32_t a = 0; a < half; a++) {
                f.SwitchLink(edges.Get(p * half + e), edge_r[p * half + e],
                             aggs.Get(p * half + a), agg_r[p * half + a],
                             o.rate_bps, 11, p, e * half + a);
            }
        }
        /* Each core's down-links in the order of the pods. */
        for (uint32_t a = 0; a < half; a++) {
            for (uint32_t j = 0; j < half; j++) {
                f.SwitchLink(aggs.Get(p * half + a), agg_r[p * half + a],
                             cores.Get(a * half + j), core_r[a * half + j],
                             o.rate_bps, 12, p, a * half + j);
            }
        }
    }
    return f.ports;
}

} // namespace

int
main(int argc, char **argv)
{
    Options o = ParseOptions(argc, argv);
    auto wall0 = std::chrono::steady_clock::now();
    bool star = o.topology == "star";
    bool fat_tree = o.topology == "fat-tree";
    uint32_t n_hosts = (star ? o.hosts : fat_tree ? o.k * o.k * o.k / 4
                        : o.leaves * o.hosts_per_leaf);
    Ptr<AwafsQueueDisc> disc;
    std::vector<Ptr<QueueDisc>> ports, nics;
    EcmpStats ecmp;
    std::string thresholds;

    g_run.tag_messages = o.trust != "switch";

    if (!star && n_hosts < 2) {
        Usage("the " + o.topology + " needs two hosts at least");
    }
    /* The scheme as the testbed's micro benchmark configures the port
     * (testbed/micro.py SCHEMES). */
    thresholds = (o.thresholds.empty() ? Repeat("1000000", o.queues - 1)
                  : o.thresholds);
    if (o.scheme == "fifo") {
        if (!o.thresholds.empty()) {
            Usage("--thresholds: fifo has none");
        }
        thresholds = Repeat("4294967295", o.queues - 1);
    }
    if (!o.percentiles.empty() && o.scheme != "awafs") {
        Usage("--percentiles: only awafs has them");
    }
    if (star) {
        disc = MakeAwafs(o, thresholds, PortRate(o), o.seed);
    }

    RngSeedManager::SetSeed(o.seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(o.transport)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto",
                       TimeValue(MicroSeconds(llround(o.min_rto_ms * 1e3))));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout",
                       TimeValue(MicroSeconds(llround(o.syn_rto_ms * 1e3))));
    /* No TIME_WAIT: ns-3 finds a segment's socket by walking a list of
     * every endpoint of its node, so closed connections that linger make
     * each packet cost more the longer a run is. */
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime",
                       DoubleValue(0));

    if (star) {
        BuildStar(o, disc);
    } else {
        ports = (fat_tree ? BuildFatTree(o, thresholds, &ecmp, &nics)
                 : BuildLeafSpine(o, thresholds, &ecmp, &nics));
        disc = DynamicCast<AwafsQueueDisc>(ports[0]);
    }

    /* The receivers accept every flow on one port. */
    for (uint32_t i = 0; i < (star ? 1 : n_hosts); i++) {
        Ptr<Socket> l = Socket::CreateSocket(g_run.hosts.Get(i),
                                             TcpSocketFactory::GetTypeId());

        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), PORT));
        l->Listen();
        l->SetAcceptCallback(
            MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
            MakeCallback(&OnAccept));
        g_run.listeners.push_back(l);
    }

    /* Poisson arrivals at 'load' of the capacity in flow bytes -- the
     * star's bottleneck, or the fabric's host links (senders and receivers
     * uniform, so each host's link carries 'load' on average); every scheme
     * sees the same flows for the same seed. */
    std::mt19937_64 gen(o.seed);
    Cdf cdf = o.workload.empty() ? Cdf() : LoadCdf(o.workload);
    double mean_size = (cdf.empty()
                        ? SHORT_SHARE * SHORT + (1 - SHORT_SHARE) * LONG
                        : CdfMean(cdf));
    /* A second workload: the second half's (a shift), or that of the flows
     * from a higher- to a lower-numbered host (pairs; half of the flows, so
     * the arrivals follow the two means' mean). */
    bool pairs = !o.pair_workload.empty();
    bool shift = !o.then_workload.empty();
    Cdf second = (pairs || shift
                  ? LoadCdf(pairs ? o.pair_workload : o.then_workload)
                  : Cdf());
    double second_mean = second.empty() ? mean_size : CdfMean(second);
    double capacity = star ? PortRate(o) : (double) n_hosts * o.rate_bps;
    std::exponential_distribution<double> gap(
        o.load * capacity / 8
        / (pairs ? (mean_size + second_mean) / 2 : mean_size));
    std::exponential_distribution<double> then_gap(o.load * capacity / 8
                                                   / second_mean);
    std::uniform_real_distribution<double> unit(0, 1);
    std::uniform_int_distribution<uint32_t> sender(star ? 1 : 0,
                                                   star ? o.hosts
                                                   : n_hosts - 1);
    std::uniform_int_distribution<uint32_t> other(0, n_hosts - 2);
    double t = 0;
    auto draw_size = [&](const Cdf &c) -> uint64_t {
        if (c.empty()) {
            return unit(gen) < SHORT_SHARE ? SHORT : LONG;
        }
        return std::max<uint64_t>(1, llround(InverseCdf(c, unit(gen))));
    };
    auto draw_peers = [&](Flow &f) {
        f.sender = sender(gen);
        if (!star) {
            /* Any host but the sender. */
            f.receiver = other(gen);
            f.receiver += f.receiver >= f.sender;
        }
    };
    auto add = [&](Flow f) {
        f.id = g_run.flows.size();
        f.start_s = t;
        g_run.flows.push_back(f);
        Simulator::ScheduleWithContext(g_run.hosts.Get(f.sender)->GetId(),
                                       Seconds(t), &StartFlow, f.id);
        return f.size;
    };
    /* Whatever happens, a bound: every flow's bytes at a tenth of the
     * capacity after the last arrival. */
    double bound_bytes = 0;
    if (o.queries) {
        /* TFS's traffic: queries, Poisson at their load; between them
         * --workload's flows at --load until the last query. */
        std::vector<double> sizes;
        std::vector<uint32_t> others;

        ParseList(o.query_sizes, &sizes);
        std::exponential_distribution<double> query_gap(
            o.query_load * capacity / 8 / Mean(sizes));
        std::uniform_int_distribution<size_t> query_size(0, sizes.size() - 1);
        double next = gap(gen), at = 0;

        for (uint32_t q = 0; q < o.queries; q++) {
            at += query_gap(gen);
            for (; next < at; next += gap(gen)) {
                Flow f;

                t = next;
                f.size = draw_size(cdf);
                draw_peers(f);
                bound_bytes += add(f);
            }
            t = at;
            g_run.queries.push_back({t, (uint64_t) sizes[query_size(gen)]});
            /* An aggregator, and 'fanout' other hosts, each sending it its
             * share of the answer. */
            uint32_t aggregator = sender(gen);
            others.clear();
            for (uint32_t h = 0; h < n_hosts; h++) {
                if (h != aggregator) {
                    others.push_back(h);
                }
            }
            for (uint32_t i = 0; i < o.query_fanout; i++) {
                std::uniform_int_distribution<size_t> pick(i,
                                                           others.size() - 1);
                uint64_t size = g_run.queries.back().size;
                Flow f;

                std::swap(others[i], others[pick(gen)]);
                f.sender = others[i];
                f.receiver = aggregator;
                f.query = q;
                f.size = size / o.query_fanout + (i < size % o.query_fanout);
                bound_bytes += add(f);
            }
        }
    } else {
        for (uint32_t i = 0; i < o.flows; i++) {
            Flow f;

            f.part = shift && i >= o.flows / 2;
            t += f.part ? then_gap(gen) : gap(gen);
            if (pairs) {
                /* The pair decides the workload: peers first. */
                draw_peers(f);
                f.part = f.sender > f.receiver;
                f.size = draw_size(f.part ? second : cdf);
            } else {
                f.size = draw_size(f.part ? second : cdf);
                draw_peers(f);
            }
            add(f);
        }
        bound_bytes = o.flows * std::max(mean_size, second_mean);
    }
    Simulator::Stop(Seconds(t + 10 + bound_bytes * 8 * 10 / capacity));
    Simulator::Run();

    double sim_s = Simulator::Now().GetSeconds();
    double wall_s = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - wall0).count();
    std::vector<double> short_fct, long_fct;
    for (const Flow &f : g_run.flows) {
        if (f.fct_ms >= 0) {
            (f.size <= SHORT_MAX ? short_fct : long_fct).push_back(f.fct_ms);
        }
    }

    if (!o.flows_csv.empty()) {
        std::ofstream out(o.flows_csv);

        out << "id,size,start_s,fct_ms,sender" << (star ? "" : ",receiver")
            << (second.empty() ? "" : ",part")
            << (o.queries ? ",query,tardy" : "") << "\n";
        for (const Flow &f : g_run.flows) {
            char line[128];

            snprintf(line, sizeof line, "%u,%" PRIu64 ",%.6f,%s,%u", f.id,
                     f.size, f.start_s,
                     f.fct_ms < 0 ? "" : std::to_string(f.fct_ms).c_str(),
                     f.sender);
            out << line;
            if (!star) {
                out << "," << f.receiver;
            }
            if (!second.empty()) {
                out << "," << (unsigned) f.part;
            }
            if (o.queries) {
                out << ","
                    << (f.query < 0 ? "" : std::to_string(f.query))
                    << "," << f.tardy;
            }
            out << "\n";
        }
        if (!out) {
            fprintf(stderr, "awafs-ns3: cannot write %s\n",
                    o.flows_csv.c_str());
            return 1;
        }
    }
    if (!o.trace_csv.empty()) {
        std::ofstream out(o.trace_csv);

        out << "time_s,version,window,load";
        for (uint32_t i = 1; i < o.queues; i++) {
            out << ",thr" << i;
        }
        out << "\n";
        for (const AwafsRound &r : disc->Rounds()) {
            char line[64];

            snprintf(line, sizeof line, "%.3f,%" PRIu64 ",%u,%.4f", r.time_s,
                     r.thr.version, r.window, r.load);
            out << line << "," << JoinThresholds(r.thr) << "\n";
        }
        if (!out) {
            fprintf(stderr, "awafs-ns3: cannot write %s\n",
                    o.trace_csv.c_str());
            return 1;
        }
    }

    uint64_t drops = 0, marks = 0;
    if (star) {
        std::string queue_marks;

        for (uint32_t q = 0; q < disc->NQueues(); q++) {
            struct awafs_queue_stats qs;

            disc->GetQueueStats(q, &qs);
            drops += qs.drop_packets;
            marks += qs.ecn_marks;
            queue_marks += (q ? "," : "") + std::to_string(qs.ecn_marks);
        }
        printf("scheme=%s trust=%s transport=%s hosts=%u rate_bps=%" PRIu64
               " access_rate_bps=%" PRIu64 " max_rate_bps=%" PRIu64
               " load=%g buffer=%u ecn_threshold=%ld ecn_mode=%s seed=%"
               PRIu64
               " flows=%u/%u short_mean_ms=%.3f long_mean_ms=%.3f "
               "thresholds=%s completions=%" PRIu64 " drops=%" PRIu64
               " marks=%" PRIu64 " queue_marks=%s sim_s=%.3f wall_s=%.3f\n",
               o.scheme.c_str(), o.trust.c_str(), o.transport.c_str(),
               o.hosts, o.rate_bps, o.access_rate_bps, o.max_rate_bps, o.load,
               o.buffer, o.ecn_threshold, o.ecn_mode.c_str(), o.seed,
               g_run.completed, o.flows, Mean(short_fct), Mean(long_fct),
               JoinThresholds(disc->Thresholds()).c_str(),
               disc->Completions(), drops, marks, queue_marks.c_str(), sim_s,
               wall_s);
    } else {
        uint64_t completions = 0, nic_drops = 0, tardy_packets = 0;
        std::string spine_packets;

        /* Every switch port's; srpt's ports complete no messages. */
        for (const Ptr<QueueDisc> &q : ports) {
            Ptr<AwafsQueueDisc> a = DynamicCast<AwafsQueueDisc>(q);

            drops += q->GetStats().nTotalDroppedPackets;
            marks += q->GetStats().nTotalMarkedPackets;
            completions += a ? a->Completions() : 0;
            if (a) {
                struct awafs_flowtab_stats fs;

                a->GetFlowtabStats(&fs);
                tardy_packets += fs.tardy_packets;
            }
        }
        for (const Ptr<QueueDisc> &q : nics) {
            nic_drops += q->GetStats().nTotalDroppedPackets;
        }
        for (uint64_t n : ecmp.spine_packets) {
            spine_packets += (spine_packets.empty() ? "" : ",")
                             + std::to_string(n);
        }
        char shape[128];
        uint64_t sent = 0;
        uint32_t tardy = 0;

        for (const Ptr<QueueDisc> &q : nics) {
            sent += q->GetStats().nTotalReceivedPackets;
        }
        for (const Flow &f : g_run.flows) {
            tardy += f.tardy;
        }
        if (fat_tree) {
            snprintf(shape, sizeof shape, "k=%u", o.k);
        } else {
            snprintf(shape, sizeof shape,
                     "leaves=%u spines=%u hosts_per_leaf=%u rate_bps=%" PRIu64
                     " spine_rate_bps=%" PRIu64, o.leaves, o.spines,
                     o.hosts_per_leaf, o.rate_bps, o.spine_rate_bps);
        }
        printf("topology=%s scheme=%s trust=%s transport=%s %s",
               o.topology.c_str(), o.scheme.c_str(), o.trust.c_str(),
               o.transport.c_str(), shape);
        if (fat_tree) {
            printf(" rate_bps=%" PRIu64 " tardy=%s", o.rate_bps,
                   o.tardy.c_str());
        }
        printf(" ecmp=%s load=%g buffer=%u "
               "ecn_threshold=%ld ecn_mode=%s seed=%" PRIu64 " flows=%u/%zu "
               "short_mean_ms=%.3f long_mean_ms=%.3f thresholds=%s "
               "completions=%" PRIu64 " drops=%" PRIu64 " marks=%" PRIu64
               " host_drops=%" PRIu64 " ports=%zu spine_packets=%s "
               "multipath_flows=%u",
               o.ecmp.c_str(), o.load, o.buffer, o.ecn_threshold,
               o.ecn_mode.c_str(), o.seed, g_run.completed,
               g_run.flows.size(), Mean(short_fct), Mean(long_fct),
               disc ? JoinThresholds(disc->Thresholds()).c_str() : "",
               completions, drops, marks, nic_drops, ports.size(),
               spine_packets.c_str(), ecmp.Multipath());
        if (fat_tree) {
            printf(" host_packets=%" PRIu64 " tardy_flows=%u tardy_packets=%"
                   PRIu64, sent, tardy, tardy_packets);
        }
        if (o.queries) {
            uint32_t done;
            std::string means = QueryMeans(&done);

            printf(" queries=%u/%zu query_mean_ms=%s", done,
                   g_run.queries.size(), means.c_str());
        }
        printf(" sim_s=%.3f wall_s=%.3f\n", sim_s, wall_s);
    }
    fflush(stdout);
    Simulator::Destroy();
    return g_run.completed == g_run.flows.size() ? 0 : 1;
}
