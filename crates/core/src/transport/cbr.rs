//! Constant-bit-rate (UDP-like) source and its sink. Not responsive to congestion.
//!
//! The k-th packet after a rate change at time t₀ leaves at t₀ + ⌈k·size·8 / rate⌉ (in ns), so
//! send times never drift however long the run. A schedule of rate changes (`{at, rate}`, `rate`
//! absent = off) may repeat with a period, which gives the square waves of 004 Fig. 9.

use crate::packet::{FlowId, Packet, PacketKind};
use crate::transport::{Endpoint, EndpointStats};
use crate::units::{Duration, Rate, Time};
use serde::{Deserialize, Serialize};

use crate::params::{
    period_at_least, rate_in_range, FlowContext, ParamError, SchemeParams, MIN_PERIOD,
};
use crate::units::Bytes;

/// One step of a CBR schedule: from `at` (since the flow's start) send at `rate`, or pause.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CbrStep {
    pub at: Duration,
    pub rate: Option<Rate>,
}

/// A CBR source.
pub struct CbrSource {
    flow: FlowId,
    packet_size: u32,
    base_rate: Rate,
    schedule: Vec<CbrStep>,
    repeat: Option<Duration>,
    started_at: Option<Time>,
    stopped: bool,
    /// Current rate (None = paused), the time it took effect and packets sent since.
    rate: Option<Rate>,
    epoch: Time,
    sent_in_epoch: u64,
    /// Index of the next schedule step and the start of the current repetition.
    next_step: usize,
    cycle_start: Time,
    seq: u64,
    stats: EndpointStats,
}

impl CbrSource {
    pub fn new(
        flow: FlowId,
        rate: Rate,
        packet_size: u32,
        schedule: Vec<CbrStep>,
        repeat: Option<Duration>,
    ) -> CbrSource {
        CbrSource {
            flow,
            packet_size,
            base_rate: rate,
            schedule,
            repeat: repeat.filter(|d| d.0 > 0),
            started_at: None,
            stopped: false,
            rate: None,
            epoch: Time::ZERO,
            sent_in_epoch: 0,
            next_step: 0,
            cycle_start: Time::ZERO,
            seq: 0,
            stats: EndpointStats::default(),
        }
    }

    fn next_step_time(&self) -> Option<Time> {
        self.schedule
            .get(self.next_step)
            .map(|s| self.cycle_start + s.at)
    }

    fn next_send_time(&self) -> Option<Time> {
        let rate = self.rate?;
        let bits = self.sent_in_epoch as u128 * self.packet_size as u128 * 8 * 1_000_000_000;
        let offset = bits.div_ceil(rate.bps() as u128).min(u64::MAX as u128) as u64;
        Some(self.epoch + Duration(offset))
    }

    fn set_rate(&mut self, at: Time, rate: Option<Rate>) {
        self.rate = rate;
        self.epoch = at;
        self.sent_in_epoch = 0;
    }

    /// Applies every schedule step due by `now`.
    fn advance_schedule(&mut self, now: Time) {
        while let Some(t) = self.next_step_time().filter(|&t| t <= now) {
            let rate = self.schedule[self.next_step].rate;
            self.set_rate(t, rate);
            self.next_step += 1;
            if self.next_step == self.schedule.len() {
                if let Some(period) = self.repeat {
                    self.next_step = 0;
                    self.cycle_start += period;
                }
            }
        }
    }
}

impl Endpoint for CbrSource {
    fn handle_packet(&mut self, _now: Time, _pkt: &Packet) {}

    fn handle_timeout(&mut self, now: Time) {
        if self.started_at.is_some() && !self.stopped {
            self.advance_schedule(now);
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.started_at.is_none() || self.stopped {
            return None;
        }
        self.advance_schedule(now);
        if self.next_send_time()? > now {
            return None;
        }
        let mut p = Packet::new(self.flow, PacketKind::Data, self.packet_size);
        p.seq = self.seq;
        p.sent_at = now;
        self.seq += 1;
        self.sent_in_epoch += 1;
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += p.size as u64;
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.started_at.is_none() || self.stopped {
            return None;
        }
        match (self.next_send_time(), self.next_step_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_start(&mut self, now: Time) {
        self.started_at = Some(now);
        self.cycle_start = now;
        self.set_rate(now, Some(self.base_rate));
        self.advance_schedule(now);
    }

    fn handle_stop(&mut self, _now: Time) {
        self.stopped = true;
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// Receives a CBR (or any unreliable) flow: counts bytes and sequence gaps.
pub struct CbrSink {
    next_seq: u64,
    stats: EndpointStats,
}

impl CbrSink {
    pub fn new() -> CbrSink {
        CbrSink {
            next_seq: 0,
            stats: EndpointStats::default(),
        }
    }
}

impl Default for CbrSink {
    fn default() -> Self {
        Self::new()
    }
}

impl Endpoint for CbrSink {
    fn handle_packet(&mut self, _now: Time, pkt: &Packet) {
        if pkt.kind != PacketKind::Data {
            return;
        }
        self.stats.delivered_bytes += pkt.size as u64;
        if pkt.seq >= self.next_seq {
            self.stats.detected_losses += pkt.seq - self.next_seq;
            self.next_seq = pkt.seq + 1;
        }
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn stats(&self) -> EndpointStats {
        self.stats
    }
}

/// `cbr` parameters.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CbrParams {
    /// Sending rate (the first step's, when `schedule` changes it over time).
    pub rate: Rate,
    /// Packet size; absent = the scenario's default packet size.
    pub packet_size: Option<Bytes>,
    /// Rate changes relative to the flow's start: `{ at = "5s", rate = "120Mbps" }`; an entry
    /// without `rate` pauses the source.
    #[serde(default)]
    pub schedule: Vec<CbrStep>,
    /// Repeat the schedule with this period (square waves).
    pub repeat: Option<Duration>,
}

impl CbrParams {
    /// The highest rate the source sends at, over its schedule.
    pub fn peak_rate(&self) -> Rate {
        self.schedule
            .iter()
            .filter_map(|s| s.rate)
            .fold(self.rate, Rate::max)
    }
}

impl SchemeParams for CbrParams {
    fn validate(&self) -> Result<(), ParamError> {
        rate_in_range("rate", self.rate)?;
        let mut last: Option<Duration> = None;
        for (i, step) in self.schedule.iter().enumerate() {
            if let Some(r) = step.rate {
                rate_in_range(&format!("schedule[{i}].rate"), r)?;
            }
            if last.is_some_and(|l| step.at <= l) {
                return Err(ParamError::at(
                    format!("schedule[{i}].at"),
                    format!(
                        "cbr schedule times must increase: {} comes after {}",
                        step.at,
                        last.unwrap_or(Duration::ZERO)
                    ),
                ));
            }
            last = Some(step.at);
        }
        if let Some(period) = self.repeat {
            period_at_least("repeat", period, MIN_PERIOD)?;
            if let Some(l) = last.filter(|&l| l >= period) {
                return Err(ParamError::at(
                    "repeat",
                    format!("cbr `repeat` ({period}) must exceed the schedule's last time ({l})"),
                ));
            }
        }
        Ok(())
    }

    fn build(&self, ctx: &FlowContext) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let size = self.packet_size.map_or(ctx.packet_size, |b| b.0 as u32);
        (
            Box::new(CbrSource::new(
                ctx.flow,
                self.rate,
                size,
                self.schedule.clone(),
                self.repeat,
            )),
            Box::new(CbrSink::new()),
        )
    }

    fn default_class(&self) -> &'static str {
        "udp"
    }

    fn sends_feedback(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(src: &mut CbrSource, until: Time) -> Vec<Time> {
        let mut out = vec![];
        while let Some(t) = src.poll_timeout().filter(|&t| t <= until) {
            src.handle_timeout(t);
            while let Some(p) = src.poll_transmit(t) {
                out.push(p.sent_at);
            }
        }
        out
    }

    #[test]
    fn sends_at_exact_rate_without_drift() {
        // 1000 B at 3 Mb/s: one packet every 2.666… ms; 3000 packets in 8 s exactly.
        let mut s = CbrSource::new(FlowId(0), Rate::from_mbps(3), 1000, vec![], None);
        s.handle_start(Time::ZERO);
        let sent = drain(&mut s, Time(8_000_000_000 - 1));
        assert_eq!(sent.len(), 3000);
        assert_eq!(sent[3], Time(8_000_000));
    }

    #[test]
    fn square_wave_schedule_repeats() {
        let sched = vec![
            CbrStep {
                at: Duration::ZERO,
                rate: Some(Rate::from_mbps(8)),
            },
            CbrStep {
                at: Duration::from_secs(1),
                rate: None,
            },
        ];
        let mut s = CbrSource::new(
            FlowId(0),
            Rate::from_mbps(1),
            1000,
            sched,
            Some(Duration::from_secs(2)),
        );
        s.handle_start(Time::ZERO);
        let sent = drain(&mut s, Time(4_000_000_000));
        // 1000 packets per second on, none off: two on-seconds in [0, 4 s].
        // … plus the first packet of the third on-period, at exactly t = 4 s.
        assert_eq!(sent.len(), 2001);
    }

    #[test]
    fn sink_counts_gaps_as_losses() {
        let mut k = CbrSink::new();
        for seq in [0, 1, 4, 5] {
            let mut p = Packet::new(FlowId(0), PacketKind::Data, 100);
            p.seq = seq;
            k.handle_packet(Time::ZERO, &p);
        }
        assert_eq!(k.stats().detected_losses, 2);
        assert_eq!(k.stats().delivered_bytes, 400);
    }
}
