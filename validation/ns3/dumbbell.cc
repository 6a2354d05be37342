// acclab cross-validation: the ns-3 side of one case (validation/ns3/README.md).
//
// A single-bottleneck dumbbell (`--topology=single`: senders s0..s{n-1} -> r1 -> r2 -> receivers)
// or a two-bottleneck line (`--topology=two`: r1 -> r2 -> r3, half the flows cross both
// bottlenecks, the other half one each), every bottleneck behind one queue discipline, every
// flow a bulk TCP transfer of one congestion control. Written to match the acclab scenario that
// validation/ns3/validate.py generates for the same case: the same rates, delays, buffers, start
// times, segment size, initial window, minimum RTO and loss recovery, ACK per segment.
//
// Output (into --out): summary.json (per-flow goodput over the window; per bottleneck the queue
// sampled every --sample, its mean and 95th percentile, drops and marks in the window) and
// cwnd.csv (every flow's congestion window, sampled every --sample).
//
// Build: g++ -O2 -std=c++17 dumbbell.cc -o dumbbell $(the ns-3 libraries; see validate.py).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Flow
{
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    uint64_t rxAtWindowStart = 0;
    uint64_t rxAtWindowEnd = 0;
    uint32_t cwnd = 0;
    bool traced = false;
    std::string id;
};

struct Bottleneck
{
    std::string id;
    Ptr<QueueDisc> qdisc;
    // The device's own one-packet queue: a packet waits there while another is sent, and
    // acclab counts it in the link's queue.
    Ptr<Queue<Packet>> device;
    std::vector<double> samples; // packets waiting (queue disc + device queue), inside the window
    QueueDisc::Stats atStart;
};

std::vector<Flow> g_flows;
std::vector<Bottleneck> g_bottlenecks;
std::ofstream g_cwnd;
double g_from = 0;
double g_to = 0;

void
CwndChanged(uint32_t i, uint32_t, uint32_t now)
{
    g_flows[i].cwnd = now;
}

// The socket exists once the application has started: hook its congestion window then.
void
TraceCwnd(uint32_t i)
{
    Ptr<Socket> s = g_flows[i].app->GetSocket();
    if (s && !g_flows[i].traced)
    {
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&CwndChanged, i));
        g_flows[i].traced = true;
    }
}

void
Sample(double interval)
{
    double t = Simulator::Now().GetSeconds();
    for (uint32_t i = 0; i < g_flows.size(); ++i)
    {
        if (!g_flows[i].traced)
        {
            TraceCwnd(i);
        }
        g_cwnd << t << "," << g_flows[i].id << "," << g_flows[i].cwnd << "\n";
    }
    if (t > g_from + 1e-9 && t <= g_to + 1e-9)
    {
        for (auto& b : g_bottlenecks)
        {
            b.samples.push_back(b.qdisc->GetNPackets() + b.device->GetNPackets());
        }
    }
    Simulator::Schedule(Seconds(interval), &Sample, interval);
}

void
WindowStart()
{
    for (auto& f : g_flows)
    {
        f.rxAtWindowStart = f.sink->GetTotalRx();
    }
    for (auto& b : g_bottlenecks)
    {
        b.atStart = b.qdisc->GetStats();
    }
}

void
WindowEnd()
{
    for (auto& f : g_flows)
    {
        f.rxAtWindowEnd = f.sink->GetTotalRx();
    }
}

// The root queue discipline of a bottleneck, as validate.py's acclab scenario has it.
TrafficControlHelper
Discipline(const std::string& kind, uint32_t limit, uint32_t stepK)
{
    TrafficControlHelper tch;
    std::string size = std::to_string(limit) + "p";
    if (kind == "droptail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(size));
    }
    else if (kind == "codel")
    {
        // RFC 8289 §4.2-4.4: 5 ms target, 100 ms interval; marks ECN-capable packets.
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize", StringValue(size),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "UseEcn", BooleanValue(true));
    }
    else if (kind == "pie")
    {
        // RFC 8033 §4.2 constants, delay from timestamps (as acclab and Linux).
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", StringValue(size),
                             "A", DoubleValue(0.125),
                             "B", DoubleValue(1.25),
                             "Tupdate", StringValue("15ms"),
                             "QueueDelayReference", StringValue("15ms"),
                             "MaxBurstAllowance", StringValue("150ms"),
                             "UseDequeueRateEstimator", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "MarkEcnThreshold", DoubleValue(0.1));
    }
    else if (kind == "fq-codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", StringValue(size),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "Flows", UintegerValue(1024),
                             "UseEcn", BooleanValue(true));
    }
    else if (kind == "step-ecn")
    {
        // DCTCP's switch (RFC 8257 §3.1) as RED: both thresholds at K, the instantaneous queue
        // (QW = 1), marking instead of dropping, and not Gentle (whose default ramps the
        // marking probability between K and 2K instead of marking every packet above K). RED
        // marks when the queue disc holds K or more; with the packet in the device queue that
        // is acclab's "more than K waiting".
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(size),
                             "MinTh", DoubleValue(stepK),
                             "MaxTh", DoubleValue(stepK),
                             "QW", DoubleValue(1.0),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             "Gentle", BooleanValue(false),
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", StringValue("1Gbps"));
    }
    else
    {
        NS_FATAL_ERROR("unknown queue " << kind);
    }
    return tch;
}

std::string
TcpTypeId(const std::string& cc)
{
    if (cc == "newreno")
        return "ns3::TcpNewReno";
    if (cc == "cubic")
        return "ns3::TcpCubic";
    if (cc == "cubic")
    {
        // acclab's CUBIC runs without HyStart by default (its `hystart` option is HyStart++,
        // RFC 9406, not the Linux HyStart ns-3 models).
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    }
    if (cc == "bbr")
        return "ns3::TcpBbr";
    if (cc == "dctcp")
        return "ns3::TcpDctcp";
    NS_FATAL_ERROR("unknown congestion control " << cc);
    return "";
}

double
Percentile95(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t rank = static_cast<size_t>(std::ceil(0.95 * v.size()));
    return v[std::max<size_t>(rank, 1) - 1];
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string topology = "single";
    std::string cc = "newreno";
    std::string queue = "droptail";
    std::string out = ".";
    std::string rate = "100Mbps";
    uint32_t flows = 4;
    uint32_t limit = 300;
    uint32_t stepK = 65;
    double duration = 60;
    double from = 20;
    double sample = 0.01;
    double bottleneckDelayMs = 10;
    uint32_t segment = 1448;
    uint32_t initialCwnd = 10;
    bool sack = true;
    double startStep = 0.1;
    bool ecn = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("topology", "single or two", topology);
    cmd.AddValue("cc", "newreno, cubic, bbr or dctcp", cc);
    cmd.AddValue("queue", "droptail, codel, pie, fq-codel or step-ecn", queue);
    cmd.AddValue("out", "directory for summary.json and cwnd.csv", out);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("flows", "number of flows", flows);
    cmd.AddValue("limit", "bottleneck buffer, packets", limit);
    cmd.AddValue("stepK", "step-ecn threshold K, packets", stepK);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("from", "start of the measurement window, s (it ends at duration)", from);
    cmd.AddValue("sample", "sampling interval, s", sample);
    cmd.AddValue("bottleneckDelayMs", "bottleneck one-way delay, ms", bottleneckDelayMs);
    cmd.AddValue("segment", "TCP segment size, bytes", segment);
    cmd.AddValue("initialCwnd", "initial window, segments", initialCwnd);
    cmd.AddValue("sack", "SACK on", sack);
    cmd.AddValue("startStep", "flow i starts at i times this, s", startStep);
    cmd.AddValue("ecn", "ECN (RFC 3168) for NewReno and CUBIC too", ecn);
    cmd.Parse(argc, argv);
    g_from = from;
    g_to = duration;

    // TCP as the acclab scenario has it (validation/ns3/README.md lists each setting).
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(TcpTypeId(cc)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    if (cc == "dctcp" || ecn)
    {
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }
    if (cc == "cubic")
    {
        // acclab's CUBIC runs without HyStart by default (its `hystart` option is HyStart++,
        // RFC 9406, not the Linux HyStart ns-3 models).
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
    }
    if (cc == "bbr")
    {
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    // The device queue holds one packet: the queue discipline above it does the queueing.
    Config::SetDefault("ns3::DropTailQueue<Packet>::MaxSize", StringValue("1p"));

    bool two = topology == "two";
    uint32_t nRouters = two ? 3 : 2;
    NodeContainer routers;
    routers.Create(nRouters);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    PointToPointHelper core;
    core.SetDeviceAttribute("DataRate", StringValue(rate));
    core.SetChannelAttribute("Delay", TimeValue(MilliSeconds(bottleneckDelayMs)));

    Ipv4AddressHelper addr;
    uint32_t subnet = 0;
    auto assign = [&](NetDeviceContainer& d) {
        std::string base = "10." + std::to_string(subnet / 256) + "." +
                           std::to_string(subnet % 256) + ".0";
        ++subnet;
        addr.SetBase(base.c_str(), "255.255.255.0");
        return addr.Assign(d);
    };

    // Bottlenecks: queue disciplines installed before the addresses, so that ns-3 does not put
    // its default one there.
    for (uint32_t r = 0; r + 1 < nRouters; ++r)
    {
        NetDeviceContainer d = core.Install(routers.Get(r), routers.Get(r + 1));
        TrafficControlHelper tch = Discipline(queue, limit, stepK);
        QueueDiscContainer q = tch.Install(d);
        Bottleneck b;
        b.id = "r" + std::to_string(r + 1) + "->r" + std::to_string(r + 2);
        b.qdisc = q.Get(0);
        b.device = DynamicCast<PointToPointNetDevice>(d.Get(0))->GetQueue();
        g_bottlenecks.push_back(b);
        assign(d);
    }

    // Flow i: access delay (1 + 4i mod 16) ms at the sender, 1 ms at the receiver; on the
    // two-bottleneck line even flows cross both links, odd flows alternate between them.
    std::vector<Ipv4Address> sinkAddr(flows);
    for (uint32_t i = 0; i < flows; ++i)
    {
        uint32_t in = 0;
        uint32_t outR = nRouters - 1;
        if (two && i % 2 == 1)
        {
            in = (i / 2) % 2;
            outR = in + 1;
        }
        access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1 + (4 * i) % 16)));
        NetDeviceContainer a = access.Install(senders.Get(i), routers.Get(in));
        assign(a);
        access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1)));
        NetDeviceContainer b = access.Install(routers.Get(outR), receivers.Get(i));
        Ipv4InterfaceContainer ifs = assign(b);
        sinkAddr[i] = ifs.GetAddress(1);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 5000;
    for (uint32_t i = 0; i < flows; ++i)
    {
        Flow f;
        f.id = "f" + std::to_string(i);
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port + i));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(i));
        s.Start(Seconds(0));
        f.sink = DynamicCast<PacketSink>(s.Get(0));
        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinkAddr[i], port + i));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(segment));
        ApplicationContainer a = source.Install(senders.Get(i));
        double start = startStep * i;
        a.Start(Seconds(start));
        f.app = DynamicCast<BulkSendApplication>(a.Get(0));
        g_flows.push_back(f);
        Simulator::Schedule(Seconds(start + 1e-6), &TraceCwnd, i);
    }

    g_cwnd.open(out + "/cwnd.csv");
    g_cwnd << "time_s,flow,cwnd_bytes\n";
    Simulator::Schedule(Seconds(sample), &Sample, sample);
    Simulator::Schedule(Seconds(from), &WindowStart);
    Simulator::Schedule(Seconds(duration) - NanoSeconds(1), &WindowEnd);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    std::ofstream s(out + "/summary.json");
    double window = duration - from;
    s << "{\n  \"segment\": " << segment << ",\n  \"window_s\": " << window
      << ",\n  \"flows\": [\n";
    for (size_t i = 0; i < g_flows.size(); ++i)
    {
        const Flow& f = g_flows[i];
        double goodput = 8.0 * (f.rxAtWindowEnd - f.rxAtWindowStart) / window;
        s << "    {\"id\": \"" << f.id << "\", \"goodput_bps\": " << goodput << "}"
          << (i + 1 < g_flows.size() ? "," : "") << "\n";
    }
    s << "  ],\n  \"bottlenecks\": [\n";
    for (size_t i = 0; i < g_bottlenecks.size(); ++i)
    {
        Bottleneck& b = g_bottlenecks[i];
        QueueDisc::Stats end = b.qdisc->GetStats();
        double mean = 0;
        for (double x : b.samples)
            mean += x;
        mean /= std::max<size_t>(b.samples.size(), 1);
        s << "    {\"id\": \"" << b.id << "\", \"mean_queue_pkts\": " << mean
          << ", \"p95_queue_pkts\": " << Percentile95(b.samples)
          << ", \"drops\": " << end.nTotalDroppedPackets - b.atStart.nTotalDroppedPackets
          << ", \"marks\": " << end.nTotalMarkedPackets - b.atStart.nTotalMarkedPackets << "}"
          << (i + 1 < g_bottlenecks.size() ? "," : "") << "\n";
    }
    s << "  ]\n}\n";
    Simulator::Destroy();
    return 0;
}
