//! What a model run writes: samples in the simulator's shapes, its names and AQM columns.

use super::{accumulation_of, window_of, FlowRow, LinkRow, Model, Sink};
use crate::network::LinkLaw;
use acclab_core::config::AvqMode;
use acclab_results::samples::Names;

impl Model<'_> {
    /// What its files call its flows, links and AQM columns (the simulator's names).
    pub fn names(&self) -> Names {
        Names {
            flows: Box::new(
                self.net
                    .flows
                    .iter()
                    .map(|f| f.id.clone())
                    .collect::<Vec<_>>(),
            ),
            links: self.net.links.iter().map(|l| l.name.clone()).collect(),
            aqm_columns: self.columns.clone(),
            // The simulator's columns, empty: the fluid sources keep no such state.
            cc_columns: self.sc.cc_columns(),
        }
    }

    /// The AQM columns of links.csv, as the packet queues name them.
    pub fn aqm_columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = Vec::new();
        for l in &self.net.links {
            for (name, _) in aqm_state(l, 0.0) {
                if !cols.iter().any(|c| c == name) {
                    cols.push(name.to_string());
                }
            }
        }
        cols
    }

    pub(super) fn sample(&mut self, t_s: f64, interval: f64, sink: &mut Sink) {
        let bits = 8.0 * self.net.packet_size;
        // Every flow and link, from the state that stands for it (classes.rs).
        for i in 0..self.net.flows.len() {
            let r = self.classes.rep[i];
            let f = &self.net.flows[r];
            let tot = &self.flow_totals[r];
            let (sent0, del0) = self.last_sample.0[i];
            let window = window_of(&f.source);
            let active = t_s > f.start && t_s - interval < f.stop;
            sink.flow(&FlowRow {
                t_s,
                flow: i as u32,
                throughput_bps: (tot.delivered - del0) * bits / interval,
                // A fluid is delivered as it arrives: no holes, no duplicates.
                received_bps: (tot.delivered - del0) * bits / interval,
                send_rate_bps: (tot.sent - sent0) * bits / interval,
                cwnd_bytes: window.map(|w| w * self.net.packet_size),
                srtt_s: (active && window.is_some()).then(|| self.seen[r].rtt()),
                accumulation_bytes: accumulation_of(&f.source).map(|a| a * self.net.packet_size),
                lost_packets: tot.lost,
                cc: Vec::new(), // the fluid sources keep no controller state of a packet sender
            });
            self.last_sample.0[i] = (tot.sent, tot.delivered);
        }
        let columns = &self.columns;
        for l in 0..self.net.links.len() {
            let lr = self.classes.link_rep[l];
            let tot = &self.link_totals[lr];
            let served = tot.served - self.last_sample.1[l];
            let state = aqm_state(&self.net.links[lr], self.net.packet_size);
            sink.link(&LinkRow {
                t_s,
                link: l as u32,
                queue_pkts: self.backlog[lr],
                queue_bytes: self.backlog[lr] * self.net.packet_size,
                utilization: served / self.offered(lr, t_s, interval).max(f64::MIN_POSITIVE),
                drops: tot.dropped,
                marks: tot.marked,
                aqm: columns
                    .iter()
                    .map(|c| state.iter().find(|(n, _)| n == c).map(|(_, v)| *v))
                    .collect(),
            });
            self.last_sample.1[l] = tot.served;
        }
        self.rate_changed.iter_mut().for_each(|c| *c = None);
        self.last_sample_s = t_s;
    }

    /// What link `l` could serve (packets) over the sample ending at `t_s`: its capacity over
    /// the interval, or, if its rate changed inside it, over each rate's part.
    pub(super) fn offered(&self, l: usize, t_s: f64, interval: f64) -> f64 {
        match self.rate_changed[l] {
            None => self.capacity[l] * interval,
            Some((before, from)) => before + self.capacity[l] * (t_s - from),
        }
    }
}

/// A queue law's state with the packet queue's column names, in bytes and bit/s where those
/// are (`packet` bytes per packet). A priority-capable queue's high band holds Monaco's
/// control packets, which the model has none of: 0.
fn aqm_state(link: &crate::network::Link, packet: f64) -> Vec<(&'static str, f64)> {
    let mut v = match &link.law {
        LinkLaw::Fifo => vec![],
        LinkLaw::Red(r) => vec![("red_avg", r.avg), ("red_prob", r.base_probability())],
        LinkLaw::Rem(r) => vec![("rem_price", r.price), ("rem_mark_prob", r.probability())],
        LinkLaw::Avq(a) => {
            let mut v = vec![
                (
                    "avq_virtual_capacity_bps",
                    a.virtual_capacity * 8.0 * packet,
                ),
                ("avq_virtual_queue_bytes", a.virtual_queue * packet),
            ];
            if a.mode == AvqMode::Delay {
                v.push(("avd_virtual_delay_s", a.virtual_delay()));
            }
            v
        }
    };
    if link.priority {
        v.push(("high_queue_pkts", 0.0));
    }
    v
}
