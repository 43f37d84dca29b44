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

#ifndef AWAFS_NS3_AWAFS_QUEUE_DISC_H
#define AWAFS_NS3_AWAFS_QUEUE_DISC_H 1

/* AwafsQueueDisc, which drives the unchanged core on one switch port as
 * the OVS datapath does (the top of awafs-ns3.cc tells how); the byte tag
 * AwafsMessageTag, from which it writes the senders' option with
 * trust=host or verify; AwafsRound, a recalculation round as the trace
 * records it; and ParseList(), which reads the queue disc's lists of
 * thresholds and percentiles, and the command line's lists. */

extern "C" {
#include "awafs.h"
}

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/queue-disc.h"
#include "ns3/tag.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

/* Parses a list of numbers separated by commas; false if it is not one. */
bool ParseList(const std::string &s, std::vector<double> *out);

/* What a sending host's agent knows of the message that a byte belongs
 * to, set by the sending application on every byte it writes (ns-3 keeps
 * byte tags on the bytes through TCP's segmentation and every hop): the
 * TCP sequence number of the message's first byte, its size, and its flow
 * (1 + the program's index; 0: none), whose socket's mark is the flow's
 * Karuna word (AwafsQueueDisc::SetMarkOf()).  With trust=host a switch
 * port writes from it, into the frame it parses, the option that the host
 * agent would have written (docs/header.md), and with Karuna in every
 * trust mode the word at its end. */
class AwafsMessageTag : public ns3::Tag
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 12; }
    void Serialize(ns3::TagBuffer b) const override
    {
        b.WriteU32(seq);
        b.WriteU32(size);
        b.WriteU32(flow);
    }
    void Deserialize(ns3::TagBuffer b) override
    {
        seq = b.ReadU32();
        size = b.ReadU32();
        flow = b.ReadU32();
    }
    void Print(std::ostream &os) const override
    {
        os << "seq=" << seq << " size=" << size << " flow=" << flow;
    }

    uint32_t seq = 0;
    uint32_t size = 0;
    uint32_t flow = 0;
};

/* One round of the recalculation, as the trace records it. */
struct AwafsRound {
    double time_s;
    struct awafs_thresholds thr;
    uint32_t window;            /* Completions in the window. */
    double load;                /* Measured, a share of the rate. */
    struct awafs_thresholds beta;   /* With Karuna: the known sizes'. */
};

class AwafsQueueDisc : public ns3::QueueDisc
{
  public:
    static ns3::TypeId GetTypeId();
    AwafsQueueDisc();
    ~AwafsQueueDisc() override;

    /* Builds the core's configuration from the attributes: "" if it is
     * valid, else why not. */
    std::string ConfigError();

    /* With Karuna, {alpha}: the sieve's, for the queues below queue 0. */
    const struct awafs_thresholds &Thresholds() const { return m_thr; }
    bool Karuna() const { return m_karuna; }
    /* With Karuna, {beta}: those of the known sizes. */
    const struct awafs_thresholds &SizeThresholds() const
    {
        return m_betaThr;
    }
    const struct awafs_karuna_stats &KarunaStats() const
    {
        return m_karunaStats;
    }
    const std::vector<AwafsRound> &Rounds() const { return m_rounds; }
    void GetQueueStats(uint32_t q, struct awafs_queue_stats *) const;
    uint32_t NQueues() const { return m_queues; }
    uint64_t Completions() const { return m_completions; }
    void GetFlowtabStats(struct awafs_flowtab_stats *) const;
    /* The mark (a Karuna word, 0: none) of the socket that sends the
     * flow of an AwafsMessageTag, when the agent writes a segment's
     * option: Karuna's MCP takes a deadline it can no longer meet out of
     * it.  One for the program: the flows are its. */
    typedef uint32_t (*MarkOf)(uint32_t flow);
    static void SetMarkOf(MarkOf mark_of) { s_markOf = mark_of; }
    /* The "Departure" trace source's: a packet dequeued, and its queue. */
    typedef void (*DepartureCallback)(ns3::Ptr<const ns3::QueueDiscItem>,
                                      int);

  private:
    bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
    ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;

    uint32_t Frame(ns3::Ptr<ns3::QueueDiscItem> item, uint8_t *frame,
                   uint32_t *len) const;
    uint32_t WriteOption(ns3::Ptr<ns3::QueueDiscItem> item, uint8_t *frame,
                         uint32_t head_len, uint32_t len) const;
    unsigned int Classify(const uint8_t *frame, uint32_t head_len,
                          uint32_t len, enum awafs_parse_result r,
                          const struct awafs_hdr *h, int64_t now_us);
    void Complete(int64_t now_us, uint64_t size, const uint8_t src[16],
                  enum awafs_flow_type type);
    void Recalculate();
    void Sweep();
    int CommitRecording();
    double MeasureLoad(int64_t now_us);
    static uint32_t Ticks();

    /* Attributes. */
    uint32_t m_queues;
    std::string m_mode;
    std::string m_trust;
    std::string m_thresholds;
    std::string m_percentiles;
    bool m_karuna;
    std::string m_sizeThresholds;
    std::string m_sizePercentiles;
    std::string m_objective;
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
    bool m_aging;
    uint32_t m_agingMinTimeouts;
    uint32_t m_agingMaxTimeouts;
    uint32_t m_rtoMinUs;
    bool m_sourceBudgets;
    ns3::DataRate m_linkRate;
    ns3::DataRate m_maxRate;
    uint64_t m_seed;

    /* The core's parts, as one port of netdev-dpdk-awafs.c holds them. */
    struct awafs_config m_cfg;          /* With Karuna, the sieve's. */
    struct awafs_adapt *m_adapt;
    struct awafs_ring *m_ring;
    struct awafs_config m_betaCfg;      /* With Karuna. */
    struct awafs_adapt *m_betaAdapt;
    struct awafs_ring *m_betaRing;
    struct awafs_thresholds m_betaThr;
    struct awafs_karuna_stats m_karunaStats;
    struct awafs_flowtab *m_flows;
    struct awafs_sched *m_sched;
    bool m_trustHost;                   /* Trust is "host". */
    bool m_trustVerify;                 /* Trust is "verify". */
    uint64_t m_tardyBytes;              /* awafs_flowtab_set_tardy()'s. */
    struct awafs_tb m_byteFree;
    struct awafs_tb m_shaper;           /* With MaxRate. */
    ns3::EventId m_wakeEvent;           /* Dequeue when it has credit. */
    struct awafs_parse_stats m_parse;
    struct awafs_thresholds m_thr;
    uint32_t m_sourceKey[4];

    uint64_t m_completions;
    uint64_t m_byteFreeOver;
    struct awafs_load m_load;
    std::vector<AwafsRound> m_rounds;
    ns3::EventId m_recalcEvent, m_sweepEvent;
    ns3::TracedCallback<ns3::Ptr<const ns3::QueueDiscItem>, int>
        m_departure;
    static MarkOf s_markOf;
};

#endif /* awafs-queue-disc.h */
