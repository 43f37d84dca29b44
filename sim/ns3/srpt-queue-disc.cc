/*
 * awafs-ns3: SrptQueueDisc, the ideal scheduler (pFabric's, the sizes
 * known), and the marking FIFO of the fabric's hosts' NICs.
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

/* The queue disc of srpt-queue-disc.h: its attributes, the order it sends
 * in (the fewest bytes left first), the packet it drops when full (the
 * latest of the flow with the most bytes left) and the packets it marks
 * (those behind more than the ECN threshold's packets that go first). */

#include "srpt-queue-disc.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

/* ---- The ideal scheduler ----------------------------------------------- */

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
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("Departure",
                            "A packet dequeued, and the queue it left (0).",
                            MakeTraceSourceAccessor(
                                &SrptQueueDisc::m_departure),
                            "ns3::SrptQueueDisc::DepartureCallback");
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
            if (victim == m_held.end()
                || Left(it->first) > Left(victim->first)) {
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
    m_departure(item, 0);
    return item;
}
