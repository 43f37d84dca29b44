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

/* This file holds the workload (the flows, the sockets that run them, and
 * the summary's means), the topologies (the star, and the leaf-spine and
 * fat-tree that class Fabric builds) and main(); the queue discs, the
 * fabric's routing and the command line are in awafs-queue-disc.h,
 * srpt-queue-disc.h, clos-routing.h and options.h. */

extern "C" {
#include "awafs.h"
}

#include "awafs-queue-disc.h"
#include "clos-routing.h"
#include "five-tuple.h"
#include "options.h"
#include "srpt-queue-disc.h"
#include "tcp-mcp.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace ns3;

namespace {

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

/* ---- The workload ------------------------------------------------------ */

struct Flow {
    uint32_t id = 0;
    uint32_t sender = 0;        /* Host index: 1..H on the star. */
    uint32_t receiver = 0;
    uint64_t size = 0;
    double start_s = 0;
    double fct_ms = -1;
    uint64_t sent = 0;
    uint64_t received = 0;
    bool closed = false;
    uint8_t part = 0;           /* 1: from the second workload. */
    uint32_t first_seq = 0;     /* TCP sequence number of its first byte. */
    int32_t query = -1;         /* Its query's index, if it answers one. */
    bool tardy = false;         /* Its sender went into loss recovery. */
    uint8_t type = 0;           /* Karuna's 1 (deadline), 2 (size known)
                                 * or 3 (neither); 0: no types. */
    uint32_t deadline_ms = 0;
    uint32_t karuna = 0;        /* Its Karuna word: its socket's mark. */
    Ptr<TcpMcp> mcp;            /* A deadline flow's, with MCP. */
    bool gave_up = false;       /* Its MCP gave up the deadline. */
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
    bool tag_messages = false;  /* The senders tag their bytes: trust=host
                                 * or verify, or Karuna's types. */
    uint64_t path_rate_bps = 0; /* A flow's path: MCP's capacity. */
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
            tag.flow = id + 1;
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
    Flow &f = g_run.flows[id];

    /* The next byte to send, which no byte has taken yet. */
    f.first_seq = DynamicCast<TcpSocketBase>(s)->GetTxBuffer()
                      ->TailSequence().GetValue();
    if (f.mcp) {
        f.mcp->SetFirstSequence(SequenceNumber32(f.first_seq));
    }
    SendMore(id, s);
}

/* MCP gave up flow 'id''s deadline: its socket's mark keeps the size. */
void
OnGiveUp(uint32_t id)
{
    Flow &f = g_run.flows[id];

    f.gave_up = true;
    f.karuna &= AWAFS_KARUNA_SIZE_MAX;
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
StartFlow(uint32_t id, bool mcp)
{
    Flow &f = g_run.flows[id];
    Ptr<Socket> s = Socket::CreateSocket(g_run.hosts.Get(f.sender),
                                         TcpSocketFactory::GetTypeId());

    if (mcp && f.type == 1) {
        f.mcp = CreateObject<TcpMcp>();
        f.mcp->SetMessage(Seconds(f.start_s) + MilliSeconds(f.deadline_ms),
                          f.size, MakeBoundCallback(&OnGiveUp, id));
        f.mcp->SetCapacity(g_run.path_rate_bps / 8.0);
        DynamicCast<TcpSocketBase>(s)->SetCongestionControlAlgorithm(f.mcp);
    }
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

/* AwafsQueueDisc's MarkOf: the mark of flow 'id''s socket. */
uint32_t
MarkOf(uint32_t id)
{
    return id < g_run.flows.size() ? g_run.flows[id].karuna : 0;
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

/* ---- Where packets wait (--waits-csv) ---------------------------------- */

/* Of one flow's packets (not its ACKs): how many left its sender's NIC and
 * each queue of the switch ports on its path, and their waits there, in
 * microseconds. */
struct FlowWaits {
    uint64_t nic_packets = 0;
    double nic_us = 0;
    uint64_t packets[AWAFS_MAX_QUEUES] = {};
    double us[AWAFS_MAX_QUEUES] = {};
};

std::vector<FlowWaits> g_waits;     /* By flow id. */

/* The flow whose sender sent 'item' (not an ACK of its receiver), or
 * NO_FLOW. */
uint32_t
SenderFlowOf(Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ip
        = DynamicCast<const Ipv4QueueDiscItem>(item);
    FiveTuple t;

    if (!ip) {
        return SrptQueueDisc::NO_FLOW;
    }
    t = TupleOf(ip->GetHeader(), ip->GetPacket());
    return t.dport == PORT ? FlowOf(t) : SrptQueueDisc::NO_FLOW;
}

/* How long 'item', just dequeued, waited in its queue disc. */
double
WaitUs(Ptr<const QueueDiscItem> item)
{
    return (Simulator::Now() - item->GetTimeStamp()).GetSeconds() * 1e6;
}

void
NicDeparture(Ptr<const QueueDiscItem> item, int)
{
    uint32_t id = SenderFlowOf(item);

    if (id != SrptQueueDisc::NO_FLOW) {
        g_waits[id].nic_packets++;
        g_waits[id].nic_us += WaitUs(item);
    }
}

/* A switch port's departure from queue 'q' (srpt's ports: 0). */
void
PortDeparture(Ptr<const QueueDiscItem> item, int q)
{
    uint32_t id = SenderFlowOf(item);

    if (id != SrptQueueDisc::NO_FLOW && q >= 0) {
        g_waits[id].packets[q]++;
        g_waits[id].us[q] += WaitUs(item);
    }
}

/* Records where the packets of every flow wait, in the hosts' 'nics' and
 * the switches' 'ports'. */
void
RecordWaits(const std::vector<Ptr<QueueDisc>> &ports,
            const std::vector<Ptr<QueueDisc>> &nics)
{
    for (const Ptr<QueueDisc> &q : nics) {
        q->TraceConnectWithoutContext("Departure",
                                      MakeCallback(&NicDeparture));
    }
    for (const Ptr<QueueDisc> &q : ports) {
        q->TraceConnectWithoutContext("Departure",
                                      MakeCallback(&PortDeparture));
    }
}

bool
WriteWaits(const std::string &path, uint32_t queues)
{
    std::ofstream out(path);

    out << "id,nic_packets,nic_wait_us";
    for (uint32_t q = 0; q < queues; q++) {
        out << ",q" << q << "_packets,q" << q << "_wait_us";
    }
    out << "\n";
    for (size_t id = 0; id < g_waits.size(); id++) {
        const FlowWaits &w = g_waits[id];
        char field[64];

        snprintf(field, sizeof field, "%zu,%" PRIu64 ",%.3f", id,
                 w.nic_packets, w.nic_us);
        out << field;
        for (uint32_t q = 0; q < queues; q++) {
            snprintf(field, sizeof field, ",%" PRIu64 ",%.3f", w.packets[q],
                     w.us[q]);
            out << field;
        }
        out << "\n";
    }
    return (bool) out;
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

/* The summary's words on Karuna's types: with them, the deadline flows and
 * those that missed their deadline (or did not complete); with --karuna,
 * the segments with payload that 'discs' (every AWAFS port) placed as each
 * type (deadline, sized, unknown) and those of sized flows past their size,
 * and the known sizes' thresholds of 'disc'; and with the flow table too,
 * the timeouts its ports saw and the messages they aged, summed over the
 * ports (a flow's every port on its path counts it). */
std::string
KarunaSummary(const Options &o, const std::vector<Ptr<AwafsQueueDisc>> &discs,
              Ptr<AwafsQueueDisc> disc)
{
    struct awafs_karuna_stats sum = {{0, 0, 0}, 0};
    uint32_t deadlines = 0, missed = 0, gave_up = 0;
    char words[256];
    std::string s;

    if (o.deadline_share || o.sized_share) {
        for (const Flow &f : g_run.flows) {
            if (f.type == 1) {
                deadlines++;
                missed += f.fct_ms < 0 || f.fct_ms > f.deadline_ms;
                gave_up += f.gave_up;
            }
        }
        snprintf(words, sizeof words, " deadline_flows=%u deadline_missed=%u",
                 deadlines, missed);
        s += words;
        if (o.mcp) {
            s += " deadline_given_up=" + std::to_string(gave_up);
        }
    }
    if (o.karuna) {
        for (const Ptr<AwafsQueueDisc> &d : discs) {
            awafs_karuna_stats_add(&sum, &d->KarunaStats());
        }
        snprintf(words, sizeof words, " karuna_packets=%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 " karuna_oversize=%" PRIu64 " size_thresholds=",
                 sum.type_packets[AWAFS_FLOW_DEADLINE],
                 sum.type_packets[AWAFS_FLOW_SIZED],
                 sum.type_packets[AWAFS_FLOW_UNKNOWN], sum.oversize);
        s += words + JoinThresholds(disc->SizeThresholds());
    }
    if (o.karuna && o.trust != "host") {
        uint64_t timeouts = 0, aged = 0;

        for (const Ptr<AwafsQueueDisc> &d : discs) {
            struct awafs_flowtab_stats fs;

            d->GetFlowtabStats(&fs);
            timeouts += fs.timeouts;
            aged += fs.aged_flows;
        }
        snprintf(words, sizeof words, " aging=%s timeouts=%" PRIu64
                 " aged=%" PRIu64, o.aging ? "on" : "off", timeouts, aged);
        s += words;
    }
    return s;
}

/* The port of one switch as the scheme configures it (testbed/micro.py
 * SCHEMES): 'thresholds' fixed or initial, at 'rate_bps', holding 'buffer'
 * packets; exits with the usage message if the core refuses the
 * configuration. */
Ptr<AwafsQueueDisc>
MakeAwafs(const Options &o, const std::string &thresholds, uint64_t rate_bps,
          uint32_t buffer, uint64_t seed)
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
                                   : DefaultPercentiles(o.queues
                                                        - o.karuna)));
    disc->SetAttribute("Karuna", BooleanValue(o.karuna));
    disc->SetAttribute("SizeThresholds", StringValue(o.size_thresholds));
    disc->SetAttribute("SizePercentiles", StringValue(o.size_percentiles));
    disc->SetAttribute("Objective", StringValue(o.objective));
    disc->SetAttribute("WindowMs", UintegerValue(o.window_ms));
    disc->SetAttribute("IntervalMs", UintegerValue(o.interval_ms));
    disc->SetAttribute("MinSamples", UintegerValue(o.min_samples));
    disc->SetAttribute("WindowType", StringValue(o.window_type));
    disc->SetAttribute("Buffer", UintegerValue(buffer));
    disc->SetAttribute("EcnThreshold", UintegerValue(o.ecn_threshold));
    disc->SetAttribute("EcnPerQueue", BooleanValue(o.ecn_mode == "queue"));
    disc->SetAttribute("FlowTableSize", UintegerValue(o.flow_table_size));
    disc->SetAttribute("LinkRate", DataRateValue(DataRate(rate_bps)));
    disc->SetAttribute("MaxRate", DataRateValue(DataRate(o.max_rate_bps)));
    disc->SetAttribute("Tardy", StringValue(o.tardy));
    disc->SetAttribute("TardyLimit", UintegerValue(o.tardy_limit));
    disc->SetAttribute("Aging", BooleanValue(o.aging));
    disc->SetAttribute("AgingMinTimeouts",
                       UintegerValue(o.aging_min_timeouts));
    disc->SetAttribute("AgingMaxTimeouts",
                       UintegerValue(o.aging_max_timeouts));
    /* What an operator sets rto-min-us to: the senders' least RTO. */
    disc->SetAttribute("RtoMinUs", UintegerValue(llround(o.min_rto_ms * 1e3)));
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
 * --nic-buffer packets, or SRPT with srpt (as pFabric's hosts); with
 * --nic-queue port, each its own instance of the scheme as a switch port
 * (the uplink of a hypervisor's OVS with AWAFS). */
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
        if (m_o.nic_queue == "port" && m_o.scheme != "srpt") {
            /* Keys apart from the ports' (below 2^19 of them). */
            m_nics->push_back(MakeAwafs(
                m_o, m_thresholds, m_o.rate_bps, m_o.nic_buffer,
                (m_o.seed << 20) + (1 << 19) + m_nics->size()));
        } else {
            m_nics->push_back(MakeSrpt(m_o, m_o.scheme == "srpt",
                                       m_o.nic_buffer));
        }
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
            q = MakeAwafs(m_o, m_thresholds, rate, m_o.buffer,
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

    bool typed = o.deadline_share > 0 || o.sized_share > 0;
    /* With Karuna, the queues of the sieve: below the deadline queue. */
    uint32_t sieve = o.queues - o.karuna;

    /* With types, every scheme tags: the senders write alike. */
    g_run.tag_messages = o.trust != "switch" || typed;
    AwafsQueueDisc::SetMarkOf(&MarkOf);
    /* The star's bottleneck, or a fabric host's link. */
    g_run.path_rate_bps = star ? PortRate(o) : o.rate_bps;

    if (!star && n_hosts < 2) {
        Usage("the " + o.topology + " needs two hosts at least");
    }
    /* The scheme as the testbed's micro benchmark configures the port
     * (testbed/micro.py SCHEMES). */
    thresholds = (o.thresholds.empty() ? Repeat("1000000", sieve - 1)
                  : o.thresholds);
    if (o.scheme == "fifo") {
        if (!o.thresholds.empty()) {
            Usage("--thresholds: fifo has none");
        }
        thresholds = Repeat("4294967295", sieve - 1);
    }
    if (!o.percentiles.empty() && o.scheme != "awafs") {
        Usage("--percentiles: only awafs has them");
    }
    if (!o.size_percentiles.empty() && o.scheme != "awafs") {
        Usage("--size-percentiles: only awafs has them");
    }
    if (star) {
        disc = MakeAwafs(o, thresholds, PortRate(o), o.buffer, o.seed);
    }

    RngSeedManager::SetSeed(o.seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(o.transport)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(MicroSeconds(llround(o.delack_ms * 1e3))));
    Config::SetDefault("ns3::TcpSocket::DelAckCount",
                       UintegerValue(o.delack_count));
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
        if (!o.waits_csv.empty()) {
            RecordWaits(ports, nics);
        }
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
    /* Karuna's types from a stream of their own: a seed's flows are the
     * same with types or without. */
    std::mt19937_64 type_gen(o.seed ^ 0x4b6172756e61ull);
    auto draw_type = [&](Flow &f) {
        double u = unit(type_gen);
        uint32_t kb = (uint32_t) std::min<uint64_t>((f.size + 1023) / 1024,
                                                    AWAFS_KARUNA_SIZE_MAX);

        if (u < o.deadline_share) {
            double ms = ceil(f.size * 8e3 / o.deadline_rate_bps);

            f.type = 1;
            f.deadline_ms = (uint32_t) std::min<double>(
                std::max<double>(o.deadline_ms, ms),
                AWAFS_KARUNA_DEADLINE_MAX);
            f.karuna = awafs_karuna_word(f.deadline_ms, kb);
        } else if (u < o.deadline_share + o.sized_share) {
            f.type = 2;
            f.karuna = awafs_karuna_word(0, kb);
        } else {
            f.type = 3;
        }
    };
    auto add = [&](Flow f) {
        f.id = g_run.flows.size();
        f.start_s = t;
        if (typed) {
            draw_type(f);
        }
        g_run.flows.push_back(f);
        Simulator::ScheduleWithContext(g_run.hosts.Get(f.sender)->GetId(),
                                       Seconds(t), &StartFlow, f.id, o.mcp);
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
    if (!o.waits_csv.empty()) {
        g_waits.resize(g_run.flows.size());
    }
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
            << (o.queries ? ",query,tardy" : "")
            << (typed ? ",type,deadline_ms" : "") << "\n";
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
            if (typed) {
                out << "," << (unsigned) f.type << "," << f.deadline_ms;
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
        for (uint32_t i = 1; i < sieve; i++) {
            out << ",thr" << i;
        }
        for (uint32_t i = 1; o.karuna && i < sieve; i++) {
            out << ",sthr" << i;
        }
        out << "\n";
        for (const AwafsRound &r : disc->Rounds()) {
            char line[64];

            snprintf(line, sizeof line, "%.3f,%" PRIu64 ",%u,%.4f", r.time_s,
                     r.thr.version, r.window, r.load);
            out << line << "," << JoinThresholds(r.thr);
            if (o.karuna) {
                out << "," << JoinThresholds(r.beta);
            }
            out << "\n";
        }
        if (!out) {
            fprintf(stderr, "awafs-ns3: cannot write %s\n",
                    o.trace_csv.c_str());
            return 1;
        }
    }

    if (!o.waits_csv.empty() && !WriteWaits(o.waits_csv, o.queues)) {
        fprintf(stderr, "awafs-ns3: cannot write %s\n", o.waits_csv.c_str());
        return 1;
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
               " load=%g buffer=%u ecn_threshold=%ld ecn_mode=%s"
               " delack_count=%u delack_ms=%g seed=%" PRIu64
               " flows=%u/%u short_mean_ms=%.3f long_mean_ms=%.3f "
               "thresholds=%s completions=%" PRIu64 " drops=%" PRIu64
               " marks=%" PRIu64 " queue_marks=%s%s sim_s=%.3f"
               " wall_s=%.3f\n",
               o.scheme.c_str(), o.trust.c_str(), o.transport.c_str(),
               o.hosts, o.rate_bps, o.access_rate_bps, o.max_rate_bps, o.load,
               o.buffer, o.ecn_threshold, o.ecn_mode.c_str(),
               o.delack_count, o.delack_ms, o.seed, g_run.completed, o.flows,
               Mean(short_fct), Mean(long_fct),
               JoinThresholds(disc->Thresholds()).c_str(),
               disc->Completions(), drops, marks, queue_marks.c_str(),
               KarunaSummary(o, {disc}, disc).c_str(), sim_s, wall_s);
    } else {
        uint64_t completions = 0, nic_drops = 0, tardy_packets = 0;
        std::vector<Ptr<AwafsQueueDisc>> discs;
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
                discs.push_back(a);
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
               "ecn_threshold=%ld ecn_mode=%s delack_count=%u delack_ms=%g "
               "seed=%" PRIu64 " flows=%u/%zu "
               "short_mean_ms=%.3f long_mean_ms=%.3f thresholds=%s "
               "completions=%" PRIu64 " drops=%" PRIu64 " marks=%" PRIu64
               " host_drops=%" PRIu64 " ports=%zu spine_packets=%s "
               "multipath_flows=%u",
               o.ecmp.c_str(), o.load, o.buffer, o.ecn_threshold,
               o.ecn_mode.c_str(), o.delack_count, o.delack_ms, o.seed,
               g_run.completed,
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
        printf("%s sim_s=%.3f wall_s=%.3f\n",
               KarunaSummary(o, discs, disc).c_str(), sim_s, wall_s);
    }
    fflush(stdout);
    Simulator::Destroy();
    return g_run.completed == g_run.flows.size() ? 0 : 1;
}
