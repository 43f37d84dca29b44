/*
 * awafs-ns3: TcpMcp, Karuna's deadline congestion control (MCP) for a
 * flow with a deadline.
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

#ifndef AWAFS_NS3_TCP_MCP_H
#define AWAFS_NS3_TCP_MCP_H 1

/* Karuna's MCP (seed 003, §4) as the host agent's awafs_mcp
 * (host-agent/README.md, "MCP"), for one message on a socket: DCTCP's
 * window, the socket's pacing rate capped, once per window of data, at
 * 5/4 of gamma -- the bytes not yet acknowledged over the time left less
 * a round trip and an 8th of the whole deadline -- and a window never
 * below what carries that rate for the path's minimum round trip (the
 * network term: marks caused by the queues below do not make it late);
 * once its deadline has passed, or as soon as the rate it needs is above
 * its path's capacity (the paper's Z > C), it gives the deadline up (the
 * callback, which takes it out of the socket's mark) and runs as DCTCP. */

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-dctcp.h"

#include <cstdint>
#include <string>

class TcpMcp : public ns3::TcpDctcp
{
  public:
    static ns3::TypeId GetTypeId();
    TcpMcp();
    TcpMcp(const TcpMcp &other);

    /* The message: 'size' bytes due at simulated time 'deadline';
     * 'give_up' runs once if the deadline passes first.  Before the socket
     * takes this object (SetCongestionControlAlgorithm(), which calls
     * Init()). */
    void SetMessage(ns3::Time deadline, uint64_t size,
                    ns3::Callback<void> give_up);
    /* The capacity of the message's path, bytes/s (0: unknown). */
    void SetCapacity(double capacity) { m_capacity = capacity; }
    /* The sequence number of the message's first byte, once connected. */
    void SetFirstSequence(ns3::SequenceNumber32 first);

    std::string GetName() const override { return "TcpMcp"; }
    void Init(ns3::Ptr<ns3::TcpSocketState> tcb) override;
    uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb,
                         uint32_t bytes_in_flight) override;
    void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segments_acked,
                   const ns3::Time &rtt) override;
    ns3::Ptr<ns3::TcpCongestionOps> Fork() override;

  private:
    void Update(ns3::Ptr<ns3::TcpSocketState> tcb);
    uint32_t Floor(ns3::Ptr<const ns3::TcpSocketState> tcb) const;

    ns3::Time Left(ns3::Time rtt) const;

    ns3::Time m_deadline;
    ns3::Time m_reserve;                    /* An 8th of the whole deadline. */
    uint64_t m_size = 0;
    ns3::Callback<void> m_giveUp;
    ns3::SequenceNumber32 m_first;
    bool m_firstKnown = false;
    ns3::SequenceNumber32 m_nextUpdate;     /* One window of data on. */
    double m_cap = 0;                       /* Bytes/s; 0: none yet. */
    double m_capacity = 0;                  /* Bytes/s; 0: unknown. */
    bool m_active = false;                  /* A deadline it still keeps. */
};

#endif /* tcp-mcp.h */
