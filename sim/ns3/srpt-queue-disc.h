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

#ifndef AWAFS_NS3_SRPT_QUEUE_DISC_H
#define AWAFS_NS3_SRPT_QUEUE_DISC_H 1

/* SrptQueueDisc: with --scheme srpt, the lower bound the schemes are
 * measured against, on every switch port and host NIC of the leaf-spine
 * or fat-tree, given an oracle of each packet's flow and the bytes it has
 * left (FlowOf() and BytesLeft() in awafs-ns3.cc); without the oracle,
 * the drop-tail FIFO that marks as the switches do, on the hosts' NICs
 * under the other schemes. */

#include "five-tuple.h"

#include "ns3/queue-disc.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>

/* The ideal lower bound, pFabric's scheduling with the sizes known: the
 * port sends a packet of the flow with the fewest bytes left to deliver (as
 * the simulator knows them, not as any packet says), that flow's earliest
 * packet, so that no flow is reordered; a full buffer drops the latest
 * packet of the flow with the most bytes left.  A flow's acknowledgements
 * go with it.  Without the oracle (SetOracle()) every packet is of one
 * flow: a drop-tail FIFO that marks as the switch's ports do, the
 * leaf-spine's hosts' NICs. */
class SrptQueueDisc : public ns3::QueueDisc
{
  public:
    /* The flow of a packet (NO_FLOW: none), and the bytes it has left. */
    typedef std::function<uint32_t(const FiveTuple &)> FlowOf;
    typedef std::function<uint64_t(uint32_t)> BytesLeft;
    static const uint32_t NO_FLOW = UINT32_MAX;
    /* The "Departure" trace source's: a packet dequeued, and its queue (0,
     * the one this disc has). */
    typedef void (*DepartureCallback)(ns3::Ptr<const ns3::QueueDiscItem>,
                                      int);

    static ns3::TypeId GetTypeId();
    SrptQueueDisc() : ns3::QueueDisc(ns3::QueueDiscSizePolicy::NO_LIMITS) {}
    void SetOracle(FlowOf flow_of, BytesLeft left);

  private:
    bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
    ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override { return true; }
    void InitializeParams() override {}
    uint64_t Left(uint32_t flow) const;
    uint32_t Ahead(uint32_t flow) const;

    uint32_t m_buffer;
    uint32_t m_ecnThreshold;
    FlowOf m_flowOf;
    BytesLeft m_left;
    std::map<uint32_t, std::deque<ns3::Ptr<ns3::QueueDiscItem>>> m_held;
    uint32_t m_count = 0;
    ns3::TracedCallback<ns3::Ptr<const ns3::QueueDiscItem>, int>
        m_departure;
};

#endif /* srpt-queue-disc.h */
