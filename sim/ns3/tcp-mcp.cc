/*
 * awafs-ns3: TcpMcp, Karuna's deadline congestion control (MCP).
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

/* tcp-mcp.h's TcpMcp on ns-3's TCP (3.37): the socket paces at
 * min(its ratio x max(cwnd, in flight) / smoothed RTT, m_maxPacingRate),
 * recomputed on every ACK (TcpSocketBase::UpdatePacingRate()), so the cap
 * is m_maxPacingRate, and the window's floor keeps the first term above
 * it. */

#include "tcp-mcp.h"

#include "ns3/data-rate.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-state.h"

#include <algorithm>

using namespace ns3;

namespace {

/* The headroom over gamma, as awafs_mcp's: for the hosts' own delays. */
const double HEADROOM = 1.25;
/* As awafs_mcp's: the message aims to end this share of its whole
 * deadline early, a reserve for the delays after its last update. */
const int RESERVE_SHARE = 8;

} // namespace

NS_OBJECT_ENSURE_REGISTERED(TcpMcp);

TypeId
TcpMcp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpMcp")
                            .SetParent<TcpDctcp>()
                            .SetGroupName("Internet")
                            .AddConstructor<TcpMcp>();
    return tid;
}

TcpMcp::TcpMcp() = default;

TcpMcp::TcpMcp(const TcpMcp &other) = default;

void
TcpMcp::SetMessage(Time deadline, uint64_t size, Callback<void> give_up)
{
    m_deadline = deadline;
    m_reserve = (deadline - Simulator::Now()) / RESERVE_SHARE;
    m_size = size;
    m_giveUp = give_up;
    m_active = true;
}

void
TcpMcp::SetFirstSequence(SequenceNumber32 first)
{
    m_first = first;
    m_nextUpdate = first;
    m_firstKnown = true;
}

/* The time gamma spreads what is left over, as awafs_mcp's mcp_update():
 * what is left of the deadline less the reserve and a round trip 'rtt'
 * (the last byte is acknowledged a round trip after it is sent), or in the
 * last two of those, half of what is left. */
Time
TcpMcp::Left(Time rtt) const
{
    Time left = m_deadline - Simulator::Now(), margin = m_reserve + rtt;

    return left > 2 * margin ? left - margin : left / 2;
}

void
TcpMcp::Init(Ptr<TcpSocketState> tcb)
{
    TcpDctcp::Init(tcb);
    if (m_active) {
        Time left = Left(Time(0));

        /* Paced from the first segment, at the rate of the whole message
         * over the whole time (no round trip measured yet). */
        tcb->m_pacing = true;
        tcb->m_paceInitialWindow = true;
        m_cap = (left.IsStrictlyPositive()
                 ? HEADROOM * m_size / left.GetSeconds() : 0);
        if (m_cap > 0) {
            tcb->m_maxPacingRate = DataRate((uint64_t) (m_cap * 8));
            tcb->m_pacingRate = tcb->m_maxPacingRate;
        }
    }
}

/* The window that carries the capped rate for a round trip of the empty
 * path: DCTCP's cut stops there.  With the last RTT, which counts the
 * queues, the floor grew with them (on one leaf at 80 %, 393 packets
 * dropped in a run that dropped none with this). */
uint32_t
TcpMcp::Floor(Ptr<const TcpSocketState> tcb) const
{
    Time rtt = tcb->m_minRtt;

    if (!m_active || m_cap <= 0 || !rtt.IsStrictlyPositive()
        || rtt == Time::Max()) {
        return 0;
    }
    return (uint32_t) std::min<double>(m_cap * rtt.GetSeconds()
                                       + 2 * tcb->m_segmentSize,
                                       UINT32_MAX / 2);
}

uint32_t
TcpMcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytes_in_flight)
{
    return std::max(TcpDctcp::GetSsThresh(tcb, bytes_in_flight), Floor(tcb));
}

void
TcpMcp::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segments_acked,
                  const Time &rtt)
{
    TcpDctcp::PktsAcked(tcb, segments_acked, rtt);
    if (m_active && m_firstKnown
        && (tcb->m_lastAckedSeq >= m_nextUpdate
            || Simulator::Now() >= m_deadline)) {
        Update(tcb);
    }
}

/* Once per window of data, and on every ACK once the deadline has
 * passed, as awafs_mcp's mcp_update(): done, given up, or gamma from what
 * is left, the cap and the floor. */
void
TcpMcp::Update(Ptr<TcpSocketState> tcb)
{
    uint32_t acked = (uint32_t) (tcb->m_lastAckedSeq - m_first);
    Time now = Simulator::Now(), rtt = tcb->m_lastRtt.Get(), left;
    double gamma = 0;

    m_nextUpdate = tcb->m_highTxMark.Get();
    if (acked < m_size && now < m_deadline) {
        left = Left(rtt);
        gamma = (m_size - acked) / left.GetSeconds();
    }
    if (acked >= m_size || now >= m_deadline
        || (m_capacity && gamma > m_capacity)) {
        m_active = false;
        tcb->m_pacing = false;
        if (acked < m_size) {
            /* Too late: the rest of the message goes by its size. */
            if (!m_giveUp.IsNull()) {
                m_giveUp();
            }
        }
        return;
    }
    m_cap = HEADROOM * gamma;
    tcb->m_maxPacingRate = DataRate((uint64_t) std::min(m_cap * 8, 4e11));
    if (tcb->m_cWnd < Floor(tcb)) {
        tcb->m_cWnd = Floor(tcb);
    }
}

Ptr<TcpCongestionOps>
TcpMcp::Fork()
{
    return CopyObject<TcpMcp>(this);
}
