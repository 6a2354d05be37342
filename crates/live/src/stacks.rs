//! Real stacks in a live run (`--netns`): setting up a scenario's `kernel-tcp` and `command`
//! flows on the testbed, starting them on the run's clock, and ending them.
//!
//! Set-up, before the clock starts: a TUN device in every host that holds such a flow
//! ([`crate::tun`]), with the scenario's packet size as its MTU; `net.ipv4.tcp_ecn = 1` in the
//! hosts of flows that ask for ECN; for a `kernel-tcp` flow, its listening and sending sockets
//! ([`crate::kernel`]); for a `command` flow, its command lines with the placeholders filled
//! in. Start: kernel flows' threads, command flows' servers at once and clients at the flow's
//! start, each program in its own process group with its output in `programs/<flow>-server.log`
//! and `…-client.log` of the run's directory. End: a client still running at its flow's stop
//! (or the run's end) and every server get SIGTERM, and SIGKILL a second later.

use std::collections::HashMap;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use acclab_core::config::SchemeConfig;
use acclab_core::transport::{EndpointSlot, Side};
use acclab_core::Time;
use acclab_scenario::Scenario;

use crate::clock::LiveClock;
use crate::ipflows::{flow_port, metered_stats, FlowMeter, IpFlowSpec};
use crate::kernel::{KernelFlow, Probe};
use crate::netns::NetnsError;
use crate::netns::{in_namespace, Testbed};
use crate::router::StatsSource;

/// Why a scenario's real stacks could not be set up or started.
#[derive(Debug, thiserror::Error)]
pub enum StacksError {
    #[error("flow {flow} is past the last port a real flow's connection can have ({first} + flows < 65536)", first = crate::ipflows::FIRST_PORT, flow = .0)]
    TooManyRealFlows(usize),
    #[error("flow {0:?}: kernel-tcp flows that share a host must agree on `ecn` (it is the host's net.ipv4.tcp_ecn)")]
    EcnDisagrees(String),
    #[error("flow {flow:?}: {error}")]
    RealFlow { flow: String, error: String },
    #[error(transparent)]
    Netns(#[from] NetnsError),
    #[error("cannot set up real stacks' flows: {0}")]
    Io(#[from] std::io::Error),
}

/// How a real flow is measured.
enum Measured {
    Kernel(Arc<Probe>),
    Metered(Arc<FlowMeter>),
}

/// One `command` flow, ready to start.
struct CommandFlow {
    id: String,
    src_ns: String,
    dst_ns: String,
    server: Option<String>,
    client: String,
    realtime: bool,
    start: Time,
    until: Time,
}

/// A scenario's real stacks, set up on a testbed.
pub struct RealStacks {
    /// The hosts' TUN devices and addresses, as [`crate::ipflows::IpFlows::new`] takes them.
    pub tuns: Vec<File>,
    pub addrs: Vec<Ipv4Addr>,
    pub specs: Vec<IpFlowSpec>,
    measured: HashMap<usize, Measured>,
    kernel: Vec<KernelFlow>,
    commands: Vec<CommandFlow>,
    logs: Option<PathBuf>,
}

impl RealStacks {
    /// Sets up every real flow of `scenario` on `testbed`; program output goes under `logs`.
    pub fn set_up(
        scenario: &Scenario,
        testbed: &Testbed,
        logs: Option<&Path>,
    ) -> Result<RealStacks, StacksError> {
        let real: Vec<usize> = (0..scenario.flows.len())
            .filter(|&i| scenario.flows.get(i).scheme.external().is_some())
            .collect();
        check_commands_apart(scenario, &real)?;
        // One device per host of a real flow, in node order.
        let mut nodes: Vec<_> = real
            .iter()
            .flat_map(|&i| [scenario.flows.get(i).src, scenario.flows.get(i).dst])
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut tuns = Vec::with_capacity(nodes.len());
        let mut addrs = Vec::with_capacity(nodes.len());
        for &n in &nodes {
            let host = testbed.host(n);
            tuns.push(testbed.open_tun(host, scenario.packet_size)?);
            addrs.push(host.ip_addr);
        }
        let device = |n| {
            nodes
                .binary_search(&n)
                .expect("every real flow's host has a device")
        };
        let end = Time(scenario.duration.0);
        let mut out = RealStacks {
            tuns,
            addrs,
            specs: Vec::new(),
            measured: HashMap::new(),
            kernel: Vec::new(),
            commands: Vec::new(),
            logs: logs.map(|d| d.join("programs")),
        };
        let mut ecn: HashMap<_, bool> = HashMap::new();
        for &i in &real {
            let f = &scenario.flows.get(i);
            let port = flow_port(i).ok_or(StacksError::TooManyRealFlows(i))?;
            let (src, dst) = (testbed.host(f.src), testbed.host(f.dst));
            let (start, stop) = scenario.flow_times(i);
            let until = stop.unwrap_or(end).min(end);
            let meter = Arc::new(FlowMeter::default());
            match &f.scheme {
                SchemeConfig::KernelTcp(p) => {
                    for h in [f.src, f.dst] {
                        if *ecn.entry(h).or_insert(p.ecn) != p.ecn {
                            return Err(StacksError::EcnDisagrees(f.id.clone()));
                        }
                    }
                    let (dst_addr, cc) = (dst.ip_addr, p.cc.clone());
                    let listener = in_namespace(&dst.namespace, move || {
                        crate::kernel::listen(dst_addr, port)
                    })?;
                    let src_addr = src.ip_addr;
                    let sender = in_namespace(&src.namespace, move || {
                        crate::kernel::sender_socket(src_addr, port, &cc)
                    })
                    .map_err(|e| StacksError::RealFlow {
                        flow: f.id.clone(),
                        error: e.to_string(),
                    })?;
                    let probe = Arc::new(Probe::new(&f.id));
                    out.kernel.push(KernelFlow {
                        listener,
                        sender,
                        dst: SocketAddrV4::new(dst.ip_addr, port),
                        start,
                        stop,
                        end,
                        size: p.size.map(|b| b.0),
                        probe: probe.clone(),
                    });
                    out.measured.insert(i, Measured::Kernel(probe));
                    out.specs.push(IpFlowSpec {
                        flow: i,
                        src: device(f.src),
                        dst: device(f.dst),
                        port: Some(port),
                        meter,
                    });
                }
                SchemeConfig::Command(p) => {
                    let secs = (until.0.saturating_sub(start.0)).div_ceil(1_000_000_000);
                    let fill = |line: &str| {
                        line.replace("{src}", &src.ip_addr.to_string())
                            .replace("{dst}", &dst.ip_addr.to_string())
                            .replace("{port}", &port.to_string())
                            .replace("{duration}", &secs.to_string())
                    };
                    out.commands.push(CommandFlow {
                        id: f.id.clone(),
                        src_ns: src.namespace.clone(),
                        dst_ns: dst.namespace.clone(),
                        server: p.server.as_deref().map(fill),
                        client: fill(&p.client),
                        realtime: p.realtime,
                        start,
                        until,
                    });
                    out.measured.insert(i, Measured::Metered(meter.clone()));
                    out.specs.push(IpFlowSpec {
                        flow: i,
                        src: device(f.src),
                        dst: device(f.dst),
                        port: None,
                        meter,
                    });
                }
                _ => unreachable!("only external schemes are real flows"),
            }
        }
        for (node, on) in ecn {
            if on {
                testbed.sysctl(testbed.host(node), "ipv4/tcp_ecn", "1")?;
            }
        }
        Ok(out)
    }

    /// The statistics of endpoint `slot` if a real stack runs it.
    pub fn stats_source(&self, slot: EndpointSlot) -> Option<StatsSource> {
        let sender = slot.side() == Side::Sender;
        Some(match self.measured.get(&(slot.flow().0 as usize))? {
            Measured::Kernel(p) => {
                let p = p.clone();
                if sender {
                    Box::new(move || p.sender_stats())
                } else {
                    Box::new(move || p.receiver_stats())
                }
            }
            Measured::Metered(m) => {
                let m = m.clone();
                Box::new(move || metered_stats(&m, sender))
            }
        })
    }

    /// Takes the devices and flow specs out for the router.
    pub fn take_network(&mut self) -> (Vec<File>, Vec<Ipv4Addr>, Vec<IpFlowSpec>) {
        (
            std::mem::take(&mut self.tuns),
            std::mem::take(&mut self.addrs),
            std::mem::take(&mut self.specs),
        )
    }

    /// Starts every real flow on `clock`.
    pub fn start(self, clock: LiveClock) -> Result<Running, StacksError> {
        let mut threads = Vec::new();
        let probes = self.kernel.iter().map(|k| k.probe.clone()).collect();
        for k in self.kernel {
            threads.extend(k.spawn(clock));
        }
        if let Some(dir) = &self.logs {
            if !self.commands.is_empty() {
                std::fs::create_dir_all(dir)?;
            }
        }
        let mut servers = Vec::new();
        for c in &self.commands {
            if let Some(line) = &c.server {
                let log = self
                    .logs
                    .as_ref()
                    .map(|d| d.join(format!("{}-server.log", c.id)));
                servers.push(
                    spawn_in(&c.dst_ns, line, c.realtime, log.as_deref()).map_err(|e| {
                        StacksError::RealFlow {
                            flow: c.id.clone(),
                            error: format!("cannot start the server {line:?}: {e}"),
                        }
                    })?,
                );
            }
        }
        for c in self.commands {
            let log = self
                .logs
                .as_ref()
                .map(|d| d.join(format!("{}-client.log", c.id)));
            threads.push(std::thread::spawn(move || {
                std::thread::sleep(
                    clock
                        .instant_of(c.start)
                        .saturating_duration_since(std::time::Instant::now()),
                );
                if clock.now() >= c.until {
                    return;
                }
                let Ok(mut child) = spawn_in(&c.src_ns, &c.client, c.realtime, log.as_deref())
                else {
                    return;
                };
                while clock.now() < c.until {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    std::thread::sleep(crate::kernel::TICK);
                }
                end(&mut child);
            }));
        }
        Ok(Running {
            threads,
            servers,
            probes,
            files: self
                .logs
                .as_ref()
                .and_then(|d| d.parent())
                .map(Path::to_path_buf),
        })
    }
}

/// Real flows under way.
pub struct Running {
    threads: Vec<std::thread::JoinHandle<()>>,
    servers: Vec<Child>,
    /// The kernel flows' probes, for `tcp_info.csv`.
    probes: Vec<Arc<Probe>>,
    /// The run's directory, if it keeps files.
    files: Option<std::path::PathBuf>,
}

impl Running {
    /// Ends the servers, waits for every flow's threads (they see the run's end themselves),
    /// and writes the kernel flows' `TCP_INFO` readings to `tcp_info.csv` in the run's
    /// directory.
    pub fn finish(mut self) -> std::io::Result<()> {
        for s in &mut self.servers {
            end(s);
        }
        for t in self.threads {
            let _ = t.join();
        }
        match &self.files {
            Some(dir) if !self.probes.is_empty() => write_tcp_info(dir, &self.probes),
            _ => Ok(()),
        }
    }
}

/// `tcp_info.csv`: every reading of every kernel flow, written as `….part` and renamed.
fn write_tcp_info(dir: &Path, probes: &[Arc<Probe>]) -> std::io::Result<()> {
    let part = dir.join("tcp_info.csv.part");
    let mut w = csv::Writer::from_path(&part)?;
    for p in probes {
        for r in p.readings() {
            w.serialize(r)?;
        }
    }
    w.flush()?;
    std::fs::rename(part, dir.join("tcp_info.csv"))
}

/// Two command flows between the same two hosts cannot be told apart (their packets carry no
/// port acclab chose).
fn check_commands_apart(scenario: &Scenario, real: &[usize]) -> Result<(), StacksError> {
    let mut seen: HashMap<_, String> = HashMap::new();
    for &i in real {
        let f = scenario.flows.get(i);
        if !matches!(f.scheme, SchemeConfig::Command(_)) {
            continue;
        }
        let pair = (f.src.min(f.dst), f.src.max(f.dst));
        if let Some(other) = seen.insert(pair, f.id.clone()) {
            return Err(StacksError::RealFlow {
                flow: f.id.clone(),
                error: format!(
                    "it joins the same two nodes as command flow {other:?}; acclab tells command flows' packets apart by their hosts only, so give each its own pair of nodes"
                ),
            });
        }
    }
    Ok(())
}

/// Runs `line` with `sh -c` in namespace `ns` (`ip netns exec`, which also applies the
/// namespace's /etc/netns files), in a process group of its own, output to `log`; at the
/// endpoints' real-time priority if `realtime` (inherited by every process it starts).
fn spawn_in(ns: &str, line: &str, realtime: bool, log: Option<&Path>) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let (out, err) = match log {
        Some(p) => {
            let f = File::create(p)?;
            (Stdio::from(f.try_clone()?), Stdio::from(f))
        }
        None => (Stdio::null(), Stdio::null()),
    };
    let mut command = Command::new("ip");
    command
        .args(["netns", "exec", ns, "sh", "-c", line])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    if realtime {
        // SAFETY: between fork and exec the closure makes one system call
        // (sched_setscheduler, async-signal-safe) and touches no memory of the parent's.
        unsafe {
            command.pre_exec(|| {
                crate::priority::raise(crate::priority::ENDPOINTS);
                Ok(())
            });
        }
    }
    command.spawn()
}

/// SIGTERM to the program's process group, SIGKILL a second later if it is still there.
fn end(child: &mut Child) {
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
    for _ in 0..50 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
}
