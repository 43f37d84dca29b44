/*
 * awafs-ns3: ClosRouting, the forwarding of a leaf-spine's or a
 * fat-tree's switches, and EcmpStats, what their top switches saw.
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

#ifndef AWAFS_NS3_CLOS_ROUTING_H
#define AWAFS_NS3_CLOS_ROUTING_H 1

/* ClosRouting, an ns-3 routing protocol that forwards as one switch of a
 * Clos fabric does, by the fabric's addressing (class Fabric in
 * awafs-ns3.cc builds the fabric and gives each switch its ports), with
 * per-flow ECMP or packet spraying up; and EcmpStats, the packets each top
 * switch forwarded and the paths each flow direction took, for the
 * summary. */

#include "five-tuple.h"

#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

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
class ClosRouting : public ns3::Ipv4RoutingProtocol
{
  public:
    enum Role { EDGE, AGG, CORE };
    struct Port {
        uint32_t iface;
        ns3::Ipv4Address next;      /* The neighbour on that link. */
    };

    static ns3::TypeId GetTypeId();
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

    ns3::Ptr<ns3::Ipv4Route>
    RouteOutput(ns3::Ptr<ns3::Packet>, const ns3::Ipv4Header &,
                ns3::Ptr<ns3::NetDevice>,
                ns3::Socket::SocketErrno &err) override
    {
        /* A switch sends nothing of its own. */
        err = ns3::Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header &ip,
                    ns3::Ptr<const ns3::NetDevice> idev,
                    UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
    void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { m_ipv4 = ipv4; }
    void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream,
                           ns3::Time::Unit) const override
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
    ns3::Ptr<ns3::Ipv4> m_ipv4;
};

#endif /* clos-routing.h */
