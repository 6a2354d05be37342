//! One step of the integrator: scheduled changes, a history row recorded, what each source
//! sees, each link served (early drops or marks, service, overflow), each source's law advanced.

use super::{
    accumulation_of, window_of, Layout, Model, ABSENT, DEP, DROPPED, MARKED, MARK_PROB, QDELAY,
    QUEUED, STAMP,
};
use crate::network::{Change, LinkLaw, Source};
use acclab_core::config::AvqMode;

use crate::feedback::Seen;

impl Model<'_> {
    pub(super) fn apply_events(&mut self, t: f64) {
        while let Some(&(at, change)) = self.net.events.get(self.next_event) {
            if at > t + 1e-12 {
                break;
            }
            match change {
                Change::Rate { link, capacity } => {
                    let since = self.last_sample_s;
                    let (offered, from) = self.rate_changed[link].unwrap_or((0.0, since));
                    self.rate_changed[link] = Some((offered + self.capacity[link] * (t - from), t));
                    self.capacity[link] = capacity;
                    self.net.links[link].capacity = capacity;
                }
                Change::Delay { link, delay } => {
                    // The network's delays hold the current value: shift by the difference.
                    self.net.shift_delay(link, delay - self.link_delay[link]);
                    self.link_delay[link] = delay;
                    self.compute_lags();
                }
            }
            self.next_event += 1;
        }
    }

    pub(super) fn record(&mut self) {
        let hops = self.hop_flow.len();
        let Layout { hop, link } = self.layout;
        let row = self.hist.next_row();
        for (s, v) in [
            (DEP, &self.served),
            (QUEUED, &self.queued),
            (DROPPED, &self.dropped),
            (MARKED, &self.marked),
        ] {
            if hop[s] != ABSENT {
                row[hop[s]..hop[s] + hops].copy_from_slice(v);
            }
        }
        for (j, &l) in self.live_links.iter().enumerate() {
            row[link[QDELAY] + j] = self.backlog[l] / self.capacity[l].max(f64::MIN_POSITIVE);
        }
        for (s, v) in [(MARK_PROB, &self.mark_prob), (STAMP, &self.stamp)] {
            if link[s] != ABSENT {
                for (j, &l) in self.live_links.iter().enumerate() {
                    row[link[s] + j] = v[l];
                }
            }
        }
        self.hist.commit();
    }

    /// What flow `i` sees now.
    pub(super) fn look(&self, i: usize) -> Seen {
        let f = &self.net.flows[i];
        let lags = &self.lags[i];
        let mut s = Seen {
            prop_delay: f.prop_delay,
            ..Seen::default()
        };
        let mut unmarked = 1.0;
        for r in &lags.back {
            let rows = self.hist.rows(r.lag);
            s.forward_queueing += rows.at(r.qdelay);
            s.accumulation += rows.at(r.queued);
            if let Some(stamp) = r.stamp {
                s.virtual_delay += rows.at(stamp);
            }
            if let Some((dropped, overflows)) = r.dropped {
                let dropped = rows.at(dropped);
                if overflows {
                    s.overflows += dropped;
                } else {
                    s.losses += dropped;
                }
            }
            if let Some((marks, prob)) = r.marks {
                s.marks += rows.at(marks);
                unmarked *= 1.0 - rows.at(prob);
            }
        }
        s.mark_probability = 1.0 - unmarked;
        for &(series, lag) in &lags.reverse {
            s.reverse_queueing += self.hist.at(series, lag);
        }
        if let Some((series, lag)) = lags.egress {
            s.egress_rate = self.hist.at(series, lag);
        }
        s
    }

    /// Whether flow `i` sends at time `t`.
    pub(super) fn active(&self, i: usize, t: f64) -> bool {
        match &self.frozen {
            Some(a) => a[i],
            None => t >= self.net.flows[i].start && t < self.net.flows[i].stop,
        }
    }

    /// One step of h.
    pub(super) fn step(&mut self, in_window: bool) {
        let t = self.now();
        let h = self.h;
        self.apply_events(t);
        self.record();
        // Sources: what they see, and their rates.
        for r in 0..self.reps.len() {
            let i = self.reps[r];
            let active = self.active(i, t);
            let f = &self.net.flows[i];
            let seen = self.look(i);
            self.rate[i] = if !active {
                0.0
            } else {
                match &f.source {
                    Source::Acc(a) => a.rate(&seen),
                    Source::Vegas(v) => v.rate(&seen),
                    Source::Reno(r) => r.rate(&seen),
                    Source::Cbr(c) => c.rate(t - f.start),
                }
            };
            self.seen[i] = seen;
        }
        // Arrivals at every hop: the source's rate at the first, what the hop before served
        // at the others; and what passes the links that cannot queue.
        for &i in &self.reps {
            let route = &self.route_hop[self.first[i]..];
            let lags = &self.lags[i];
            if lags.egress.is_some() {
                self.arrivals[route[0]] = self.rate[i];
            }
            for (&hop, &(series, lag)) in route.iter().skip(1).zip(&lags.input) {
                self.arrivals[hop] = self.hist.at(series, lag);
            }
            for &(l, series, lag, mult) in &lags.through {
                self.through[l] += mult * self.hist.at(series, lag) * h;
            }
        }
        // Links.
        for j in 0..self.live_links.len() {
            self.serve(self.live_links[j], h, in_window);
        }
        for &l in &self.pure_links {
            let out = std::mem::take(&mut self.through[l]);
            let tot = &mut self.link_totals[l];
            tot.served += out;
            if in_window {
                tot.busy_in_window += out / self.capacity[l].max(f64::MIN_POSITIVE);
            }
        }
        // Source laws, and the totals (of each flow's own state after its step).
        for r in 0..self.reps.len() {
            let i = self.reps[r];
            let active = self.active(i, t);
            let f = &mut self.net.flows[i];
            let seen = &self.seen[i];
            if active {
                match &mut f.source {
                    Source::Acc(a) => a.step(seen, h),
                    Source::Vegas(v) => v.step(seen, h),
                    Source::Reno(r) => r.step(seen, h),
                    Source::Cbr(_) => {}
                }
            }
            let tot = &mut self.flow_totals[i];
            let x = self.rate[i];
            tot.sent += x * h;
            let received = match self.lags[i].receiver {
                Some((series, lag)) => self.hist.at(series, lag),
                None => x,
            };
            tot.delivered += received * h;
            if in_window {
                tot.delivered_in_window += received * h;
                if active {
                    tot.active_in_window += h;
                    tot.rtt_area += seen.rtt() * h;
                    tot.cwnd_area += window_of(&f.source).unwrap_or(0.0) * h;
                    tot.accumulation_area += accumulation_of(&f.source).unwrap_or(0.0) * h;
                }
            }
        }
        self.steps += 1;
    }

    /// Link `l` over one step: early drops or marks, service, overflow.
    pub(super) fn serve(&mut self, l: usize, h: f64, in_window: bool) {
        let c = self.capacity[l];
        let b = self.backlog[l];
        let hops = self.link_hops[l].clone();
        // A class's hop counts once per member at a shared link (classes.rs); all shares are
        // per member.
        let mult = &self.hop_mult[hops.clone()];
        let arrivals = &mut self.arrivals[hops.clone()];
        let dropped_rate = &mut self.dropped[hops.clone()];
        let marked_rate = &mut self.marked[hops.clone()];
        let link = &mut self.net.links[l];
        let buffer = link.buffer;
        let fifo = matches!(link.law, LinkLaw::Fifo);
        // The arrival rate (REM's and AVQ's input) and the admitted volume.
        let (mut y, mut accepted) = (0.0, 0.0);
        if fifo {
            // A FIFO drops nothing early and marks nothing: every arrival is admitted (the
            // loop below with p = 0 gives the same bits).
            for (a, m) in arrivals.iter_mut().zip(mult) {
                *a *= h; // now the admitted volume
                accepted += m * *a;
            }
            dropped_rate.fill(0.0);
        } else {
            y = mult.iter().zip(&*arrivals).map(|(m, a)| m * a).sum();
            // The law's probability for arrivals now, and whether it marks ECN-capable packets.
            let (p, marks_ecn) = match &mut link.law {
                LinkLaw::Fifo => (0.0, false),
                LinkLaw::Red(r) => (r.probability(), r.ecn),
                LinkLaw::Rem(r) => (r.probability(), true),
                LinkLaw::Avq(a) => {
                    let over = a.step(y, c, h);
                    (over, a.mode == AvqMode::Mark)
                }
            };
            self.mark_prob[l] = if marks_ecn { p } else { 0.0 };
            for k in 0..arrivals.len() {
                let marking = marks_ecn && self.hop_ecn[hops.start + k];
                let a = arrivals[k] * h;
                let (take, mark) = if marking {
                    (a, a * p)
                } else {
                    (a * (1.0 - p), 0.0)
                };
                dropped_rate[k] = (a - take) / h;
                marked_rate[k] = mark / h;
                arrivals[k] = take; // now the admitted volume
                accepted += mult[k] * take;
            }
        }
        let out = (c * h).min(b + accepted);
        let excess = (b + accepted - out - buffer).max(0.0);
        let stock = b + accepted - excess;
        let queued = &mut self.queued[hops.clone()];
        let served = &mut self.served[hops.clone()];
        let flows = &self.hop_flow[hops.clone()];
        let (mut total, mut dropped, mut marked) = (0.0, 0.0, 0.0);
        if fifo && excess == 0.0 {
            // Nothing dropped or marked: the loop below with keep = 1 (its drop and mark sums
            // add zeros).
            for k in 0..arrivals.len() {
                let share = if stock > 0.0 {
                    out * (queued[k] + arrivals[k]) / stock
                } else {
                    0.0
                };
                served[k] = share / h;
                queued[k] = (queued[k] + arrivals[k] - share).max(0.0);
                total += mult[k] * queued[k];
            }
        } else {
            let keep = if accepted > 0.0 {
                1.0 - excess / accepted
            } else {
                1.0
            };
            for k in 0..arrivals.len() {
                let admitted = arrivals[k] * keep;
                dropped_rate[k] += (arrivals[k] - admitted) / h;
                let share = if stock > 0.0 {
                    out * (queued[k] + admitted) / stock
                } else {
                    0.0
                };
                served[k] = share / h;
                queued[k] = (queued[k] + admitted - share).max(0.0);
                total += mult[k] * queued[k];
                dropped += mult[k] * dropped_rate[k] * h;
                marked += mult[k] * marked_rate[k] * h;
                self.flow_totals[flows[k]].lost += dropped_rate[k] * h;
            }
        }
        self.backlog[l] = total;
        // The law's state after the step.
        let link = &mut self.net.links[l];
        match &mut link.law {
            LinkLaw::Fifo | LinkLaw::Avq(_) => {}
            LinkLaw::Red(r) => r.step(total, c, h),
            LinkLaw::Rem(r) => r.step(b, y, c, h),
        }
        self.stamp[l] = match &link.law {
            LinkLaw::Avq(a) => a.stamp(total / c.max(f64::MIN_POSITIVE)),
            _ => 0.0,
        };
        let tot = &mut self.link_totals[l];
        tot.served += out;
        tot.dropped += dropped;
        tot.marked += marked;
        if in_window {
            tot.busy_in_window += out / c.max(f64::MIN_POSITIVE);
            tot.queue_area_in_window += total * h;
            tot.dropped_in_window += dropped;
            tot.marked_in_window += marked;
            tot.max_queue_in_window = tot.max_queue_in_window.max(total);
        }
    }
}
