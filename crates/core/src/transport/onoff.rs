//! On-off "mice" (002 §6.1.3): a source that alternates transfers and silences.
//!
//! Each on period transfers a file whose size is exponentially distributed (mean `mean_size`)
//! over a fresh TCP connection (new congestion controller, slow start); when the last byte is
//! acknowledged the source stays off for an exponentially distributed time (mean `mean_off`).
//! The source begins with an off period, so that many mice started together desynchronise.
//!
//! Departures: file sizes are rounded up to whole packets; successive transfers share one
//! sequence space and one receiver (a "connection" is the congestion state, not the port pair).

use rand_distr::{Distribution, Exp};

use crate::cc::CongestionController;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::transport::tcp::TcpSender;
use crate::transport::{Endpoint, EndpointStats};
use crate::units::{Duration, Time};
use serde::{Deserialize, Serialize};

use crate::cc::reno::Reno;
use crate::cc::vegas::{Vegas, VegasParams};
use crate::params::{FlowContext, ParamError, SchemeParams};
use crate::units::Bytes;

/// Makes the congestion controller of each new transfer.
pub type NewController = Box<dyn Fn() -> Box<dyn CongestionController> + Send>;

/// An on-off source over a TCP sender.
pub struct OnOffSender {
    tcp: TcpSender,
    new_controller: NewController,
    rng: Rng,
    size: Exp<f64>,
    off: Exp<f64>,
    /// When the next transfer starts, while off.
    next_on: Option<Time>,
    transferring: bool,
    stopped: bool,
    transfers_done: u64,
}

impl OnOffSender {
    /// `mean_size` in bytes; `tcp` is a bulk sender that has not started.
    pub fn new(
        tcp: TcpSender,
        new_controller: NewController,
        rng: Rng,
        mean_size: f64,
        mean_off: Duration,
    ) -> OnOffSender {
        OnOffSender {
            tcp,
            new_controller,
            rng,
            size: Exp::new(1.0 / mean_size.max(1.0))
                .unwrap_or(Exp::new(1.0).expect("rate 1 is valid")),
            off: Exp::new(1.0 / mean_off.as_secs_f64().max(1e-9))
                .unwrap_or(Exp::new(1.0).expect("rate 1 is valid")),
            next_on: None,
            transferring: false,
            stopped: false,
            transfers_done: 0,
        }
    }

    /// Transfers completed so far.
    pub fn transfers_done(&self) -> u64 {
        self.transfers_done
    }

    fn schedule_off(&mut self, now: Time) {
        let off = Duration::from_secs_f64(self.off.sample(&mut self.rng));
        self.next_on = (!self.stopped).then_some(now + off);
    }

    fn check_done(&mut self, now: Time) {
        if self.transferring && self.tcp.is_idle() {
            self.transferring = false;
            self.transfers_done += 1;
            self.schedule_off(now);
        }
    }
}

impl Endpoint for OnOffSender {
    fn handle_packet(&mut self, now: Time, pkt: &Packet) {
        self.tcp.handle_packet(now, pkt);
        self.check_done(now);
    }

    fn handle_timeout(&mut self, now: Time) {
        self.tcp.handle_timeout(now);
        if self.next_on.is_some_and(|t| t <= now) {
            self.next_on = None;
            let bytes = self.size.sample(&mut self.rng).ceil() as u64;
            self.tcp.start_transfer(bytes, (self.new_controller)());
            self.transferring = true;
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        self.tcp.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.tcp.poll_timeout(), self.next_on) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_start(&mut self, now: Time) {
        self.schedule_off(now);
    }

    fn handle_stop(&mut self, now: Time) {
        self.stopped = true;
        self.next_on = None;
        self.tcp.handle_stop(now);
    }

    fn stats(&self) -> EndpointStats {
        self.tcp.stats()
    }
}

/// `onoff` parameters (002 §6.1.3).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OnOffParams {
    /// "vegas" or "reno": the transport of each file.
    pub scheme: OnOffScheme,
    /// Mean file size (exponential).
    pub mean_size: Bytes,
    /// Mean off time (exponential).
    pub mean_off: Duration,
    /// Vegas parameters of each transfer when `scheme = "vegas"`; its TCP keys (`min_rto`,
    /// `initial_window`, `delayed_ack`, `sack`, …; not `size`) apply to Reno's transfers too.
    pub vegas: VegasParams,
}

/// The transport an on-off source uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OnOffScheme {
    Vegas,
    Reno,
}

impl Default for OnOffParams {
    fn default() -> Self {
        OnOffParams {
            scheme: OnOffScheme::Vegas,
            mean_size: Bytes(1_000_000),
            mean_off: Duration::from_secs(3),
            vegas: VegasParams::default(),
        }
    }
}

impl SchemeParams for OnOffParams {
    fn validate(&self) -> Result<(), ParamError> {
        if self.vegas.size.is_some() {
            return Err(ParamError::at(
                "vegas.size",
                "onoff draws its file sizes; `vegas.size` does not apply",
            ));
        }
        self.vegas.validate().map_err(|e| e.within("vegas"))
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let mss = ctx.packet_size as u64;
        let factory: NewController = match self.scheme {
            OnOffScheme::Vegas => {
                let cfg = self.vegas.controller(mss, false);
                Box::new(move || Box::new(Vegas::new(cfg.clone())) as Box<dyn CongestionController>)
            }
            OnOffScheme::Reno => {
                let iw = self.vegas.initial_window;
                Box::new(move || Box::new(Reno::new(mss, iw)) as Box<dyn CongestionController>)
            }
        };
        // Every TCP key of the `vegas` table applies to each file, Reno's too (its `size`
        // is refused: the source draws the files' sizes).
        let tcp = self.vegas.tcp(false);
        let tx = tcp.sender(ctx, factory());
        let rng = crate::rng::stream(ctx.seed, &format!("flow:{}:onoff", ctx.name));
        let src = OnOffSender::new(tx, factory, rng, self.mean_size.0 as f64, self.mean_off);
        (Box::new(src), tcp.receiver(ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::packet::{FlowId, PacketKind};
    use crate::transport::tcp::{TcpReceiver, TcpSettings};

    /// Drives a sender and a receiver over a lossless 10 ms pipe (no queue).
    fn run(src: &mut OnOffSender, until: Time) -> u64 {
        let mut rx = TcpReceiver::new(FlowId(0), 40);
        let mut pipe: Vec<(Time, Packet)> = Vec::new();
        let delay = Duration::from_millis(5);
        let mut now = Time::ZERO;
        src.handle_start(now);
        while now < until {
            while let Some(p) = src.poll_transmit(now) {
                pipe.push((now + delay, p));
            }
            while let Some(a) = rx.poll_transmit(now) {
                pipe.push((now + delay, a));
            }
            pipe.sort_by_key(|e| e.0);
            let next_pkt = pipe.first().map(|e| e.0);
            let next = [next_pkt, src.poll_timeout()].into_iter().flatten().min();
            let Some(t) = next else { break };
            now = t;
            if next_pkt == Some(t) {
                let (_, p) = pipe.remove(0);
                if p.kind == PacketKind::Data {
                    rx.handle_packet(now, &p);
                } else {
                    src.handle_packet(now, &p);
                }
            } else {
                src.handle_timeout(now);
            }
        }
        rx.stats().delivered_bytes
    }

    #[test]
    fn alternates_transfers_and_silences_with_the_configured_means() {
        let cc: Box<dyn CongestionController> = Box::new(Reno::new(1000, 2));
        let tcp = TcpSender::new(FlowId(0), TcpSettings::default(), cc);
        let mut src = OnOffSender::new(
            tcp,
            Box::new(|| Box::new(Reno::new(1000, 2))),
            crate::rng::stream(1, "onoff-test"),
            20_000.0,
            Duration::from_millis(200),
        );
        let delivered = run(&mut src, Time::from_secs_f64(200.0));
        let n = src.transfers_done();
        // Each cycle: ~200 ms off plus a short transfer of ~20 KB over a 10 ms RTT.
        assert!((500..1000).contains(&n), "{n} transfers in 200 s");
        let mean = delivered as f64 / n as f64;
        assert!((mean - 20_000.0).abs() < 4_000.0, "mean transfer {mean} B");
    }
}
