/*
 * awafs-ns3: a packet's five-tuple, by which the ideal scheduler and
 * the fabric's routing tell flows apart.
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

#ifndef AWAFS_NS3_FIVE_TUPLE_H
#define AWAFS_NS3_FIVE_TUPLE_H 1

/* FiveTuple, a packet's flow, and TupleOf(), which reads it from the
 * packet's IPv4 header and the first bytes of its payload.  SrptQueueDisc
 * (srpt-queue-disc.h) finds each packet's flow by it, through the
 * program's oracle (FlowOf() in awafs-ns3.cc), and ClosRouting
 * (clos-routing.h) hashes it onto a path. */

#include "ns3/ipv4-header.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>

/* A packet's flow: its IPv4 addresses, protocol and ports (TCP or UDP). */
struct FiveTuple {
    uint32_t src, dst;
    uint16_t sport, dport;
    uint8_t proto;
};

inline FiveTuple
TupleOf(const ns3::Ipv4Header &ip, ns3::Ptr<const ns3::Packet> l4)
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

#endif /* five-tuple.h */
