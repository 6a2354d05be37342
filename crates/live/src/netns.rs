//! Network namespaces for `acclab live run --netns`: a small testbed on one Linux machine.
//!
//! The router emulator gets a namespace of its own, and so does every scenario node that hosts a
//! sender or a receiver (a *host*: all endpoints of one node share it, as on a real machine).
//! Each host is joined to the router's namespace by a veth pair on a /30 of its own:
//!
//! ```text
//!   host k namespace                       router namespace
//!   eth0 10.200.x.(4k+2)/30  <== veth ==>  h<k> 10.200.x.(4k+1)/30   router socket 0.0.0.0:P
//! ```
//!
//! so every datagram between an endpoint and the router crosses a network stack boundary — a
//! real interface, real routing, the kernel's UDP path — instead of loopback. The namespaces
//! exist only inside the router's and hosts' private address plan; nothing is added to the
//! namespace acclab was started in.
//!
//! Namespaces are named `acclab-<pid>-<run>-r` (router) and `acclab-<pid>-<run>-h<k>` and are
//! deleted when the [`Testbed`] is dropped, or on SIGINT and SIGTERM (the process then ends with
//! status 130 or 143). A run killed otherwise (SIGKILL) leaves them behind; the next testbed
//! deletes every `acclab-<pid>-…` namespace whose process no longer exists.
//!
//! Sockets are put into a namespace by a short-lived thread that joins it (`setns(2)`) and binds
//! them: a socket belongs to the namespace it was created in, whichever thread uses it later.
//! Setting up needs root (CAP_SYS_ADMIN) and iproute2's `ip` command.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use acclab_scenario::NodeId;
use acclab_scenario::Scenario;

/// Where namespaces are named (`ip netns add` creates the file).
const NETNS_DIR: &str = "/run/netns";
/// Every namespace of every testbed starts with this.
const PREFIX: &str = "acclab-";
/// The hosts' address plan: /30s carved out of 10.200.0.0/16.
const PLAN_BASE: u32 = u32::from_be_bytes([10, 200, 0, 0]);
/// Real stacks' address plan ([`crate::tun`]): host k is 10.201.0.0 + k + 1 on a /16.
const IP_PLAN_BASE: u32 = u32::from_be_bytes([10, 201, 0, 0]);
const MAX_HOSTS: usize = 1 << 14;
/// The veth MTU: above any packet size a scenario uses, so no datagram is fragmented.
const VETH_MTU: u32 = 65_000;

/// Why a testbed could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error("network namespaces need iproute2's `ip` command, which was not found")]
    NoIp,
    #[error(
        "cannot set up the network namespaces: `ip {command}` failed: {stderr} (namespaces need \
         root, or CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    )]
    Command { command: String, stderr: String },
    #[error("the scenario has {0} endpoint hosts; a namespace testbed holds at most {MAX_HOSTS}")]
    TooManyHosts(usize),
    #[error("cannot set up a socket or device in network namespace {ns}: {error}")]
    Socket { ns: String, error: std::io::Error },
    #[error("network namespaces exist only on Linux")]
    Unsupported,
}

/// One endpoint host: a scenario node in a namespace of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// The scenario node.
    pub node: NodeId,
    /// The namespace's name.
    pub namespace: String,
    /// The host's address (its end of the veth pair).
    pub addr: Ipv4Addr,
    /// The router's address on this host's veth pair: where the host sends its datagrams.
    pub gateway: Ipv4Addr,
    /// The host's address for real stacks: its TUN device's, if it has one ([`Testbed::open_tun`]).
    pub ip_addr: Ipv4Addr,
}

/// The router's namespace and one namespace per endpoint host, deleted on drop.
#[derive(Debug)]
pub struct Testbed {
    router_ns: String,
    hosts: Vec<Host>,
}

/// Tells testbeds of one process apart.
static RUNS: AtomicU32 = AtomicU32::new(0);

impl Testbed {
    /// Creates the namespaces and veth pairs for `scenario`'s endpoint hosts.
    pub fn create(scenario: &Scenario) -> Result<Testbed, NetnsError> {
        if !cfg!(target_os = "linux") {
            return Err(NetnsError::Unsupported);
        }
        remove_stale();
        remove_on_signal();
        let prefix = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        let hosts = plan(&prefix, &endpoint_nodes(scenario))?;
        // The testbed exists (and is cleaned up on drop) from the first namespace on.
        let testbed = Testbed {
            router_ns: format!("{prefix}-r"),
            hosts,
        };
        ip_batch(None, testbed.namespace_commands("add"), false)?;
        ip_batch(Some(&testbed.router_ns), testbed.router_commands(), false)?;
        for h in &testbed.hosts {
            ip_batch(Some(&h.namespace), h.commands(), false)?;
        }
        Ok(testbed)
    }

    /// The endpoint hosts, by node id.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The host of scenario node `node`.
    pub fn host(&self, node: NodeId) -> &Host {
        let i = self.hosts.binary_search_by_key(&node, |h| h.node);
        &self.hosts[i.expect("every endpoint node has a host")]
    }

    /// A non-blocking socket in the router's namespace, on every address, at a free port.
    pub fn router_socket(&self) -> Result<UdpSocket, NetnsError> {
        let any = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        bind_in(&self.router_ns, any)
    }

    /// A non-blocking socket on `host`'s address, at a free port.
    pub fn host_socket(&self, host: &Host) -> Result<UdpSocket, NetnsError> {
        bind_in(
            &host.namespace,
            SocketAddr::V4(SocketAddrV4::new(host.addr, 0)),
        )
    }

    /// A TUN device in `host`'s namespace ([`crate::tun`]), with MTU `mtu`, the host's
    /// [`Host::ip_addr`] on 10.201.0.0/16, and no IPv6 link-local address (so the kernel sends
    /// no neighbour discovery into the emulated network). Returns its non-blocking descriptor;
    /// the device goes when the descriptor closes.
    pub fn open_tun(&self, host: &Host, mtu: u32) -> Result<std::fs::File, NetnsError> {
        let tun = in_namespace(&host.namespace, crate::tun::open)?;
        let dev = crate::tun::DEVICE;
        ip_batch(
            Some(&host.namespace),
            [
                format!("link set {dev} addrgenmode none"),
                format!("link set {dev} mtu {mtu}"),
                format!("addr add {}/16 dev {dev}", host.ip_addr),
                format!("link set {dev} up"),
            ],
            false,
        )?;
        Ok(tun)
    }

    /// Sets `net.<key>` (a path under /proc/sys/net, e.g. "ipv4/tcp_ecn") to `value` in
    /// `host`'s namespace only.
    pub fn sysctl(&self, host: &Host, key: &str, value: &str) -> Result<(), NetnsError> {
        let path = format!("/proc/sys/net/{key}");
        let value = value.to_string();
        in_namespace(&host.namespace, move || std::fs::write(path, value))
    }

    /// `netns <verb> NAME` for the router's namespace and every host's.
    fn namespace_commands(&self, verb: &str) -> Vec<String> {
        std::iter::once(&self.router_ns)
            .chain(self.hosts.iter().map(|h| &h.namespace))
            .map(|n| format!("netns {verb} {n}"))
            .collect()
    }

    /// The router namespace's side: loopback up, one veth pair per host, addressed and up.
    fn router_commands(&self) -> Vec<String> {
        let mut cmds = vec!["link set lo up".to_string()];
        for (k, h) in self.hosts.iter().enumerate() {
            cmds.extend([
                format!(
                    "link add h{k} mtu {VETH_MTU} type veth peer name eth0 mtu {VETH_MTU} netns {}",
                    h.namespace
                ),
                format!("addr add {}/30 dev h{k}", h.gateway),
                format!("link set h{k} up"),
            ]);
        }
        cmds
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth ends in it. Failures are left to the next
        // testbed's stale-namespace sweep.
        let _ = ip_batch(None, self.namespace_commands("del"), true);
    }
}

impl Host {
    /// The host's side, run inside its namespace: its end of the veth pair addressed and up.
    fn commands(&self) -> Vec<String> {
        vec![
            format!("addr add {}/30 dev eth0", self.addr),
            "link set eth0 up".into(),
            "link set lo up".into(),
        ]
    }
}

/// The scenario nodes that hold a sender or a receiver, in node order.
fn endpoint_nodes(scenario: &Scenario) -> Vec<NodeId> {
    let mut nodes: Vec<NodeId> = scenario.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// Names and addresses for the hosts of `nodes`: host k gets the k-th /30 of the plan.
fn plan(prefix: &str, nodes: &[NodeId]) -> Result<Vec<Host>, NetnsError> {
    if nodes.len() > MAX_HOSTS {
        return Err(NetnsError::TooManyHosts(nodes.len()));
    }
    Ok(nodes
        .iter()
        .enumerate()
        .map(|(k, &node)| {
            let net = PLAN_BASE + 4 * k as u32;
            Host {
                node,
                namespace: format!("{prefix}-h{k}"),
                addr: Ipv4Addr::from(net + 2),
                gateway: Ipv4Addr::from(net + 1),
                ip_addr: Ipv4Addr::from(IP_PLAN_BASE + k as u32 + 1),
            }
        })
        .collect())
}

/// The process id in a testbed namespace's name, if it is one.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Deletes the namespaces of testbeds whose process has gone (killed before it could clean up).
fn remove_stale() {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return;
    };
    let stale: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            owner_pid(n).is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        })
        .collect();
    if !stale.is_empty() {
        let _ = ip_batch(None, stale.iter().map(|n| format!("netns del {n}")), true);
    }
}

/// Deletes every namespace this process made (its testbeds' names start `acclab-<pid>-`).
fn remove_own() {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return;
    };
    let me = std::process::id();
    let own: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| owner_pid(n) == Some(me))
        .collect();
    if !own.is_empty() {
        let _ = ip_batch(None, own.iter().map(|n| format!("netns del {n}")), true);
    }
}

/// On the first testbed, installs handlers for SIGINT and SIGTERM that delete this process's
/// namespaces and then end it as the signal would have (exit status 128 + the signal's number).
/// Without them an interrupted run would leave its namespaces until the next run swept them.
fn remove_on_signal() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                remove_own();
                let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                eprintln!("acclab: {name}: removed this run's network namespaces; stopping");
                std::process::exit(128 + sig);
            }
        });
    });
}

/// Runs `commands` through one `ip -batch -`, inside namespace `ns` if given. With `force`, ip
/// goes on past a failing command.
fn ip_batch(
    ns: Option<&str>,
    commands: impl IntoIterator<Item = String>,
    force: bool,
) -> Result<(), NetnsError> {
    let script: String = commands.into_iter().map(|c| c + "\n").collect();
    let mut args: Vec<&str> = Vec::new();
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    if force {
        args.push("-force");
    }
    args.extend(["-batch", "-"]);
    let failed = |stderr: String| NetnsError::Command {
        command: format!(
            "{} ({})",
            args.join(" "),
            script.trim_end().replace('\n', "; ")
        ),
        stderr: stderr.trim().replace('\n', "; "),
    };
    let mut child = Command::new("ip")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => NetnsError::NoIp,
            _ => failed(e.to_string()),
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .map_err(|e| failed(e.to_string()))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| failed(e.to_string()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(failed(String::from_utf8_lossy(&out.stderr).into_owned()))
    }
}

/// Binds a non-blocking UDP socket to `addr` inside namespace `ns` (the socket stays in it).
fn bind_in(ns: &str, addr: SocketAddr) -> Result<UdpSocket, NetnsError> {
    in_namespace(ns, move || {
        let s = UdpSocket::bind(addr)?;
        s.set_nonblocking(true)?;
        Ok(s)
    })
}

/// Runs `f` on a thread that has joined namespace `ns` (a name under /run/netns) and ends with
/// it: sockets and devices `f` creates belong to `ns`, whichever thread uses them later.
pub fn in_namespace<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, NetnsError> {
    let path = format!("{NETNS_DIR}/{ns}");
    let socket_err = |error| NetnsError::Socket {
        ns: ns.to_string(),
        error,
    };
    std::thread::spawn(move || -> std::io::Result<T> {
        join_namespace(&path)?;
        f()
    })
    .join()
    .map_err(|_| socket_err(std::io::Error::other("the namespace's thread panicked")))?
    .map_err(socket_err)
}

/// Joins namespace `ns` for the rest of the calling thread's life (for threads that live in a
/// host, such as a kernel TCP flow's sender).
pub fn enter(ns: &str) -> std::io::Result<()> {
    join_namespace(&format!("{NETNS_DIR}/{ns}"))
}

#[cfg(target_os = "linux")]
fn join_namespace(path: &str) -> std::io::Result<()> {
    let file = std::fs::File::open(path)?;
    nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn join_namespace(_path: &str) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "network namespaces exist only on Linux",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_gives_each_host_its_own_slash_30() {
        let hosts = plan("acclab-1-0", &[NodeId(0), NodeId(3), NodeId(7)]).unwrap();
        let addrs: Vec<_> = hosts.iter().map(|h| (h.gateway, h.addr)).collect();
        assert_eq!(
            addrs,
            [
                (Ipv4Addr::new(10, 200, 0, 1), Ipv4Addr::new(10, 200, 0, 2)),
                (Ipv4Addr::new(10, 200, 0, 5), Ipv4Addr::new(10, 200, 0, 6)),
                (Ipv4Addr::new(10, 200, 0, 9), Ipv4Addr::new(10, 200, 0, 10)),
            ]
        );
        assert_eq!(hosts[1].namespace, "acclab-1-0-h1");
        assert_eq!(hosts[2].ip_addr, Ipv4Addr::new(10, 201, 0, 3));
        assert_eq!(hosts[2].node, NodeId(7));
        // The last host of a full plan is still inside 10.200.0.0/16.
        let last = plan("p", &vec![NodeId(0); MAX_HOSTS])
            .unwrap()
            .pop()
            .unwrap();
        assert_eq!(last.addr, Ipv4Addr::new(10, 200, 255, 254));
        assert_eq!(last.ip_addr, Ipv4Addr::new(10, 201, 64, 0));
        assert!(matches!(
            plan("p", &vec![NodeId(0); MAX_HOSTS + 1]),
            Err(NetnsError::TooManyHosts(_))
        ));
    }

    #[test]
    fn only_testbed_names_have_an_owner() {
        assert_eq!(owner_pid("acclab-4242-0-r"), Some(4242));
        assert_eq!(owner_pid("acclab-4242-3-h12"), Some(4242));
        assert_eq!(owner_pid("acclab-x-0-r"), None);
        assert_eq!(owner_pid("mynet"), None);
    }
}
