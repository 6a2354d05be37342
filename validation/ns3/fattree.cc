// acclab cross-validation: the ns-3 side of the fat-tree case (validation/ns3/README.md).
//
// A k-ary fat-tree (Al-Fares et al. 2008) built in acclab's order — hosts h0, h1, … in pod order,
// k/2 per edge switch; edge switch e of a pod linked to every aggregation switch of its pod;
// aggregation switch a of every pod linked to core switches a·k/2 … a·k/2 + k/2 − 1 — every link
// at one rate and delay, every output (hosts' too) behind step ECN marking at K (RED with
// MinTh = MaxTh = K, QW = 1, as dumbbell.cc). Packets are sprayed: at every switch a uniformly
// random equal-cost next hop per packet (Ipv4GlobalRouting::RandomEcmpRouting), as acclab's
// `ecmp = "packet"`. Flows come from a traffic file in the HPCC simulator's format (a count
// line, then `src dst priority dport size start_s`) — the one acclab writes for its own run —
// each a DCTCP BulkSend of its size.
//
// A flow's completion time runs from the moment its connection is established (acclab has no
// handshake: its first data packet leaves at the flow's start) to the first ACK that covers its
// last byte, as acclab's. Sizes are acclab's wire bytes: a flow of S bytes is n = ⌈S/1500⌉
// packets in acclab, so ns-3 sends S − 52·n bytes of payload, the same n packets of the same
// wire sizes (52 B of IP, TCP and timestamp headers on each).
//
// Output (into --out): fct.csv — index (line of the traffic file, from 0), size_bytes, start_s,
// fct_s (empty if unfinished at --end); links.csv — every output queue (named as acclab names
// the link) with its packets sent, dropped and marked.
//
// Build: g++ -O2 -std=c++17 fattree.cc -o fattree $(the ns-3 libraries; see fattree.py).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// ns-3.37's TcpDctcp cuts the window to (1 − α/2)·cwnd with no floor (tcp-dctcp.cc,
// GetSsThresh): a short flow marked a few times in a row falls below one segment, cannot send,
// and waits out its RTO with nothing in flight. Linux (tcp_dctcp.c, dctcp_ssthresh) and acclab
// floor the cut at two segments; so does this subclass, and nothing else changes.
class TcpDctcpFloored : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::AcclabTcpDctcpFloored")
                                .SetParent<TcpDctcp>()
                                .SetGroupName("Internet")
                                .AddConstructor<TcpDctcpFloored>();
        return tid;
    }

    TcpDctcpFloored() = default;

    TcpDctcpFloored(const TcpDctcpFloored& other)
        : TcpDctcp(other)
    {
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(TcpDctcp::GetSsThresh(tcb, bytesInFlight), 2 * tcb->m_segmentSize);
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpDctcpFloored>(this);
    }
};

NS_OBJECT_ENSURE_REGISTERED(TcpDctcpFloored);

struct Flow
{
    uint32_t src = 0;
    uint32_t dst = 0;
    uint64_t size = 0;    // acclab's wire bytes
    uint64_t payload = 0; // ns-3's bytes to send
    double start = 0;
    double established = -1;
    double done = -1;
    Ptr<BulkSendApplication> app;
};

std::vector<Flow> g_flows;
std::vector<std::pair<std::string, Ptr<QueueDisc>>> g_queues;

void
StateChanged(uint32_t i, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    if (now == TcpSocket::ESTABLISHED && g_flows[i].established < 0)
    {
        g_flows[i].established = Simulator::Now().GetSeconds();
    }
}

void
AckAdvanced(uint32_t i, SequenceNumber32, SequenceNumber32 now)
{
    Flow& f = g_flows[i];
    // The SYN takes sequence number 0: the last byte is acknowledged at payload + 1.
    if (f.done < 0 && now.GetValue() >= f.payload + 1)
    {
        f.done = Simulator::Now().GetSeconds();
    }
}

// The socket exists once the application has started (a nanosecond before this runs).
void
Hook(uint32_t i)
{
    Ptr<Socket> s = g_flows[i].app->GetSocket();
    NS_ABORT_MSG_IF(!s, "flow " << i << " has no socket");
    s->TraceConnectWithoutContext("State", MakeBoundCallback(&StateChanged, i));
    s->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&AckAdvanced, i));
}

std::string
Edge(uint32_t pod, uint32_t i)
{
    return "edge" + std::to_string(pod) + "_" + std::to_string(i);
}

std::string
Agg(uint32_t pod, uint32_t i)
{
    return "agg" + std::to_string(pod) + "_" + std::to_string(i);
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t k = 4;
    std::string rate = "10Gbps";
    std::string delay = "1us";
    uint32_t limit = 200;
    uint32_t stepK = 20;
    std::string flowsFile;
    std::string out = ".";
    double end = 1.0;
    double minRtoMs = 5;
    uint32_t seed = 1;
    bool floor = true;

    CommandLine cmd(__FILE__);
    cmd.AddValue("k", "fat-tree arity (even)", k);
    cmd.AddValue("rate", "every link's rate", rate);
    cmd.AddValue("delay", "every link's delay", delay);
    cmd.AddValue("limit", "every output queue's buffer, packets", limit);
    cmd.AddValue("stepK", "step-ecn threshold K, packets", stepK);
    cmd.AddValue("flows", "traffic file (HPCC format)", flowsFile);
    cmd.AddValue("out", "directory for fct.csv", out);
    cmd.AddValue("end", "simulated seconds", end);
    cmd.AddValue("minRtoMs", "minimum RTO, ms", minRtoMs);
    cmd.AddValue("seed", "ns-3 run number (the ECMP choices)", seed);
    cmd.AddValue("floor", "floor DCTCP's cut at two segments, as Linux and acclab do", floor);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(k < 2 || k % 2 != 0, "k must be even");
    RngSeedManager::SetRun(seed);

    // TCP as the acclab scenario has it (validation/ns3/README.md lists each setting).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       StringValue(floor ? "ns3::AcclabTcpDctcpFloored" : "ns3::TcpDctcp"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));

    uint32_t half = k / 2;
    uint32_t nHosts = k * half * half;
    NodeContainer hosts, edges, aggs, cores;
    hosts.Create(nHosts);
    edges.Create(k * half);
    aggs.Create(k * half);
    cores.Create(half * half);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", StringValue(std::to_string(limit) + "p"),
                         "MinTh", DoubleValue(stepK),
                         "MaxTh", DoubleValue(stepK),
                         "QW", DoubleValue(1.0),
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "Gentle", BooleanValue(false),
                         "MeanPktSize", UintegerValue(1500),
                         "LinkBandwidth", StringValue(rate));
    Ipv4AddressHelper ip;
    ip.SetBase("10.0.0.0", "255.255.255.252");
    std::vector<Ipv4Address> hostAddr(nHosts);
    auto connect = [&](Ptr<Node> a, Ptr<Node> b, const std::string& an, const std::string& bn) {
        NetDeviceContainer d = p2p.Install(a, b);
        QueueDiscContainer q = tch.Install(d);
        g_queues.emplace_back(an + "->" + bn, q.Get(0));
        g_queues.emplace_back(bn + "->" + an, q.Get(1));
        Ipv4InterfaceContainer i = ip.Assign(d);
        ip.NewNetwork();
        return i;
    };
    for (uint32_t pod = 0; pod < k; pod++)
    {
        for (uint32_t e = 0; e < half; e++)
        {
            for (uint32_t j = 0; j < half; j++)
            {
                uint32_t h = (pod * half + e) * half + j;
                hostAddr[h] = connect(hosts.Get(h),
                                      edges.Get(pod * half + e),
                                      "h" + std::to_string(h),
                                      Edge(pod, e))
                                  .GetAddress(0);
            }
        }
    }
    for (uint32_t pod = 0; pod < k; pod++)
    {
        for (uint32_t e = 0; e < half; e++)
        {
            for (uint32_t a = 0; a < half; a++)
            {
                connect(edges.Get(pod * half + e), aggs.Get(pod * half + a), Edge(pod, e), Agg(pod, a));
            }
        }
    }
    for (uint32_t pod = 0; pod < k; pod++)
    {
        for (uint32_t a = 0; a < half; a++)
        {
            for (uint32_t c = 0; c < half; c++)
            {
                connect(aggs.Get(pod * half + a),
                        cores.Get(a * half + c),
                        Agg(pod, a),
                        "core" + std::to_string(a * half + c));
            }
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    std::ifstream in(flowsFile);
    NS_ABORT_MSG_IF(!in, "cannot read " << flowsFile);
    uint64_t count = 0;
    in >> count;
    for (uint64_t n = 0; n < count; n++)
    {
        Flow f;
        uint32_t priority, dport;
        in >> f.src >> f.dst >> priority >> dport >> f.size >> f.start;
        NS_ABORT_MSG_IF(!in, "traffic file line " << n + 2 << " unreadable");
        NS_ABORT_MSG_IF(f.src >= nHosts || f.dst >= nHosts, "flow " << n << ": no such host");
        uint64_t packets = (f.size + 1499) / 1500;
        f.payload = f.size > 52 * packets ? f.size - 52 * packets : 1;
        g_flows.push_back(f);
    }
    uint16_t port = 1000;
    for (uint32_t i = 0; i < g_flows.size(); i++)
    {
        Flow& f = g_flows[i];
        // One port per flow on its receiver (ports repeat only past 64,000 flows per host).
        uint16_t p = static_cast<uint16_t>(port + i % 64000);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), p));
        ApplicationContainer s = sink.Install(hosts.Get(f.dst));
        s.Start(Seconds(0));
        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[f.dst], p));
        source.SetAttribute("MaxBytes", UintegerValue(f.payload));
        source.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer a = source.Install(hosts.Get(f.src));
        a.Start(Seconds(f.start));
        f.app = DynamicCast<BulkSendApplication>(a.Get(0));
        Simulator::Schedule(Seconds(f.start) + NanoSeconds(1), &Hook, i);
    }

    Simulator::Stop(Seconds(end));
    Simulator::Run();

    std::ofstream o(out + "/fct.csv");
    o << "index,size_bytes,start_s,fct_s\n";
    o.precision(12);
    for (uint32_t i = 0; i < g_flows.size(); i++)
    {
        const Flow& f = g_flows[i];
        o << i << "," << f.size << "," << f.start << ",";
        if (f.done >= 0 && f.established >= 0)
        {
            o << f.done - f.established;
        }
        o << "\n";
    }
    // Every output queue's drops and marks, named as acclab names its links.
    std::ofstream l(out + "/links.csv");
    l << "id,transmitted_packets,drops,marks\n";
    for (auto& [name, q] : g_queues)
    {
        QueueDisc::Stats st = q->GetStats();
        l << name << "," << st.nTotalSentPackets << "," << st.nTotalDroppedPackets << ","
          << st.nTotalMarkedPackets << "\n";
    }
    Simulator::Destroy();
    return 0;
}
