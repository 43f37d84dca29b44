/*
 * awafs-ns3: ClosRouting, the forwarding of a leaf-spine's or a
 * fat-tree's switches.
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

/* The routing protocol of clos-routing.h: the uplink a packet takes (a
 * hash of its five-tuple salted per switch, or a draw per packet) and the
 * route of a packet that arrives at a switch, down toward its destination
 * host or up. */

#include "clos-routing.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <cstring>

using namespace ns3;

/* ---- Routing in a leaf-spine or fat-tree ------------------------------- */

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
