//! Flows whose endpoints are not acclab's: a kernel TCP connection (`kernel-tcp`) or unmodified
//! programs (`command`), which live mode runs in the network namespaces of
//! `acclab live run --netns` with their IP packets crossing the emulated links and queues
//! (issue 25; the machinery is in the live crate's `ip`, `tun` and `external` modules).
//!
//! Only the parameters are here, beside every other scheme's, so that a scenario names them the
//! same way and `acclab params` documents them. Nothing in this crate can run such a flow: the
//! endpoints [`SchemeParams::build`] returns are inert ([`Outside`]), and the simulator and the
//! loopback live mode refuse a scenario that has one ([`SchemeParams::external`]).

use serde::{Deserialize, Serialize};

use crate::packet::Packet;
use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::transport::{Endpoint, EndpointStats};
use crate::units::{Bytes, Time};

/// The longest congestion control name Linux accepts (`TCP_CA_NAME_MAX` is 16, with the NUL).
pub const MAX_CC_NAME: usize = 15;

/// `kernel-tcp` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KernelTcpParams {
    /// The kernel's congestion control for the connection (`TCP_CONGESTION`): any this machine's
    /// kernel allows, e.g. "reno", "cubic", "bbr" (`sysctl net.ipv4.tcp_available_congestion_control`).
    #[serde(default = "default_cc")]
    pub cc: String,
    /// Bytes to send; absent = bulk data until the flow stops or the run ends.
    pub size: Option<Bytes>,
    /// ECN (RFC 3168) on the connection: `net.ipv4.tcp_ecn = 1` in the namespaces of both of
    /// its hosts, so its packets are ECN-capable and the queues that mark, mark them. Every
    /// kernel-tcp flow of a host must agree (the setting belongs to the namespace).
    #[serde(default)]
    pub ecn: bool,
}

fn default_cc() -> String {
    "cubic".into()
}

impl Default for KernelTcpParams {
    fn default() -> Self {
        KernelTcpParams {
            cc: default_cc(),
            size: None,
            ecn: false,
        }
    }
}

impl SchemeParams for KernelTcpParams {
    fn validate(&self) -> Result<(), ParamError> {
        let ok = !self.cc.is_empty()
            && self.cc.len() <= MAX_CC_NAME
            && self
                .cc
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(ParamError::at(
                "cc",
                format!(
                    "{:?} is not a congestion control name: 1 to {MAX_CC_NAME} characters of a-z, 0-9 and _",
                    self.cc
                ),
            ));
        }
        if self.size == Some(Bytes(0)) {
            return Err(ParamError::at("size", "must be at least 1 byte, not 0"));
        }
        Ok(())
    }
    fn build(&self, _ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (Box::new(Outside), Box::new(Outside))
    }
    fn external(&self) -> Option<&'static str> {
        Some("a kernel TCP connection")
    }
}

/// `command` parameters. In both command lines `{src}` and `{dst}` stand for the flow's source
/// and destination host addresses, `{port}` for a TCP/UDP port of the flow's own, and
/// `{duration}` for the flow's length in whole seconds (rounded up; until the run's end when it
/// has no stop time).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandParams {
    /// Run in the destination's namespace when the run starts (e.g. "iperf3 -s -p {port}"), and
    /// ended when the run ends; absent = nothing.
    pub server: Option<String>,
    /// Run in the source's namespace at the flow's start (e.g.
    /// "iperf3 -c {dst} -p {port} -t {duration}"), and ended at its stop or the run's end if it
    /// has not exited.
    pub client: String,
    /// Run both programs at the real-time priority of acclab's own endpoints and kernel-tcp
    /// flows (`SCHED_FIFO` 10, where the system allows it: Linux as root), so that other work
    /// on the machine cannot hold them off a core — a program held off while its socket is
    /// locked leaves the packets that arrive for it unacknowledged until it runs again, which
    /// the emulated network then sees as a burst. Set false for a program that busy-polls: at
    /// that priority it would keep a core from every ordinary process.
    #[serde(default = "yes")]
    pub realtime: bool,
}

fn yes() -> bool {
    true
}

/// The placeholders a command line may use.
pub const COMMAND_PLACEHOLDERS: [&str; 4] = ["src", "dst", "port", "duration"];

impl CommandParams {
    /// Checks one command line: not empty, every `{…}` a known placeholder, braces balanced.
    fn check_line(key: &str, line: &str) -> Result<(), ParamError> {
        if line.split_whitespace().next().is_none() {
            return Err(ParamError::at(key, "must name a program, not be empty"));
        }
        let mut rest = line;
        while let Some(open) = rest.find(['{', '}']) {
            if rest.as_bytes()[open] == b'}' {
                return Err(ParamError::at(key, format!("unmatched `}}` in {line:?}")));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(ParamError::at(key, format!("unmatched `{{` in {line:?}")));
            };
            let name = &rest[open + 1..open + close];
            if !COMMAND_PLACEHOLDERS.contains(&name) {
                return Err(ParamError::at(
                    key,
                    format!(
                        "unknown placeholder {{{name}}} in {line:?}; known: {}",
                        COMMAND_PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                    ),
                ));
            }
            rest = &rest[open + close + 1..];
        }
        Ok(())
    }
}

impl SchemeParams for CommandParams {
    fn validate(&self) -> Result<(), ParamError> {
        if let Some(s) = &self.server {
            Self::check_line("server", s)?;
        }
        Self::check_line("client", &self.client)
    }
    fn build(&self, _ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        (Box::new(Outside), Box::new(Outside))
    }
    fn external(&self) -> Option<&'static str> {
        Some("programs run in network namespaces")
    }
}

/// The endpoint of a flow that runs outside acclab: sends nothing, counts nothing. Live mode
/// replaces it with a stand-in that measures the real flow.
pub struct Outside;

impl Endpoint for Outside {
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet) {}
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn stats(&self) -> EndpointStats {
        EndpointStats::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_control_names_are_checked_for_form() {
        for ok in ["reno", "cubic", "bbr", "bbr2", "dctcp", "h_tcp"] {
            let p = KernelTcpParams {
                cc: ok.into(),
                ..Default::default()
            };
            assert!(p.validate().is_ok(), "{ok}");
        }
        for bad in ["", "Cubic", "cu bic", "../x", "a_name_of_16_chr"] {
            let p = KernelTcpParams {
                cc: bad.into(),
                ..Default::default()
            };
            let e = p.validate().unwrap_err();
            assert_eq!(e.key, "cc", "{bad}");
        }
        let p = KernelTcpParams {
            size: Some(Bytes(0)),
            ..Default::default()
        };
        assert_eq!(p.validate().unwrap_err().key, "size");
    }

    #[test]
    fn command_lines_may_use_only_known_placeholders() {
        let p = |server: Option<&str>, client: &str| CommandParams {
            server: server.map(String::from),
            client: client.into(),
            realtime: true,
        };
        assert!(p(
            Some("iperf3 -s -p {port}"),
            "iperf3 -c {dst} -p {port} -t {duration}"
        )
        .validate()
        .is_ok());
        assert!(p(None, "ping -c 3 {dst}").validate().is_ok());
        for (server, client, key, says) in [
            (None, "  ", "client", "must name a program"),
            (Some(""), "x", "server", "must name a program"),
            (None, "x {host}", "client", "unknown placeholder {host}"),
            (None, "x {dst", "client", "unmatched `{`"),
            (None, "x dst}", "client", "unmatched `}`"),
        ] {
            let e = p(server, client).validate().unwrap_err();
            assert!(e.key == key && e.message.contains(says), "{e}");
        }
    }
}
