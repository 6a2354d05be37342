//! Checks as data: an experiment declares what it compares — a quantity of a flow or of a set
//! of flows, the paper's value, the test — in a table, and [`FlowCheck::row`] evaluates each
//! entry against a run's summary, reading the measured value, the theory's and the model
//! tier's the same way for every experiment.

use acclab_results::summary::{FlowModel, FlowSummary, FlowTheory, Summary};

use crate::common::{class_of, mbps, mean_of};
use crate::Row;

/// What a quantity's unit depends on in a run.
#[derive(Clone, Copy, Debug)]
pub struct Units {
    /// Bytes per packet (windows in packets).
    pub packet_bytes: f64,
}

/// A flow quantity as a comparison row gives it: its name with its unit, and how it is read
/// from the measured summary, the theory's prediction and the model tier's run (`None`: that
/// tier has no such value).
pub struct FlowQuantity {
    pub name: &'static str,
    pub measured: fn(&FlowSummary, &Units) -> Option<f64>,
    pub theory: fn(&FlowTheory, &Units) -> Option<f64>,
    pub model: fn(&FlowModel, &Units) -> Option<f64>,
}

/// KB/s of a rate in bit/s (1 KB = 1000 B, as 002).
pub fn kbps(bps: f64) -> f64 {
    bps / 8000.0
}

/// Receiver goodput in Mb/s.
pub const THROUGHPUT_MBPS: FlowQuantity = FlowQuantity {
    name: "throughput (Mb/s)",
    measured: |f, _| Some(mbps(f.throughput_bps)),
    theory: |t, _| Some(mbps(t.throughput_bps)),
    model: |m, _| Some(mbps(m.throughput_bps)),
};

/// Receiver goodput in KB/s (002's tables call it the sending rate: at equilibrium they agree).
pub const SENDING_RATE_KBPS: FlowQuantity = FlowQuantity {
    name: "sending rate (KB/s)",
    measured: |f, _| Some(kbps(f.throughput_bps)),
    theory: |t, _| Some(kbps(t.throughput_bps)),
    model: |m, _| Some(kbps(m.throughput_bps)),
};

/// Mean RTT over the window, queueing included, ms.
pub const RTT_MS: FlowQuantity = FlowQuantity {
    name: "RTT with queueing (ms)",
    measured: |f, _| f.mean_rtt_s.map(|r| r * 1e3),
    theory: |t, _| Some(t.rtt_s * 1e3),
    model: |m, _| m.mean_rtt_s.map(|r| r * 1e3),
};

/// Mean congestion window over the window, packets.
pub const WINDOW_PKTS: FlowQuantity = FlowQuantity {
    name: "congestion window (pkts)",
    measured: |f, u| f.mean_cwnd_bytes.map(|c| c / u.packet_bytes),
    theory: |t, u| Some(t.cwnd_bytes / u.packet_bytes),
    model: |m, u| m.mean_cwnd_bytes.map(|c| c / u.packet_bytes),
};

/// The scheme's baseRTT estimate at the end of the run, ms (the model has none).
pub const BASE_RTT_MS: FlowQuantity = FlowQuantity {
    name: "baseRTT (ms)",
    measured: |f, _| f.base_rtt_s.map(|r| r * 1e3),
    theory: |t, _| Some(t.base_rtt_s * 1e3),
    model: |_, _| None,
};

/// How a row passes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Test {
    /// Within this fraction of the theory's value, or of the paper's where the theory has none.
    Close(f64),
    AtMost(f64),
    AtLeast(f64),
}

impl Test {
    /// The comparison row of `measured` under this test.
    pub fn row(
        self,
        label: impl Into<String>,
        paper: Option<f64>,
        theory: Option<f64>,
        measured: f64,
    ) -> Row {
        match self {
            Test::Close(rel) => Row::close(label, paper, theory, measured, rel),
            Test::AtMost(b) => Row::at_most(label, paper, theory, measured, b),
            Test::AtLeast(b) => Row::at_least(label, paper, theory, measured, b),
        }
    }
}

/// Which flows a check is about: one flow by id, or a class (ids `class-n`), meaned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Flows<'a> {
    Id(&'a str),
    Class(&'a str),
}

impl Flows<'_> {
    /// How rows name them.
    pub fn name(&self) -> &str {
        match self {
            Flows::Id(s) | Flows::Class(s) => s,
        }
    }

    fn indices(&self, s: &Summary) -> Vec<usize> {
        (0..s.flows.len())
            .filter(|&i| match self {
                Flows::Id(id) => s.flows[i].id == *id,
                Flows::Class(c) => class_of(&s.flows[i].id) == *c,
            })
            .collect()
    }
}

/// One entry of an experiment's table: a quantity of some flows (their mean), the paper's
/// value, the test.
pub struct FlowCheck<'a> {
    pub flows: Flows<'a>,
    pub quantity: &'a FlowQuantity,
    pub paper: Option<f64>,
    pub test: Test,
}

impl FlowCheck<'_> {
    /// The comparison row of this check on the run summarised by `s`: "`prefix`FLOWS QUANTITY",
    /// the measured mean (NaN where no flow has a value: the row fails), the theory's and the
    /// model tier's means beside it.
    pub fn row(&self, prefix: &str, s: &Summary, units: &Units) -> Row {
        let idx = self.flows.indices(s);
        let q = self.quantity;
        let measured = mean_of(s, &idx, |f| (q.measured)(f, units)).unwrap_or(f64::NAN);
        let theory = mean_of(s, &idx, |f| {
            f.theory.as_ref().and_then(|t| (q.theory)(t, units))
        });
        let model = mean_of(s, &idx, |f| {
            f.model.as_ref().and_then(|m| (q.model)(m, units))
        });
        let label = format!("{prefix}{} {}", self.flows.name(), q.name);
        self.test
            .row(label, self.paper, theory, measured)
            .with_model(model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acclab_results::summary::{Fairness, WindowSummary};

    fn flow(id: &str, bps: f64, theory: Option<f64>) -> FlowSummary {
        FlowSummary {
            id: id.into(),
            kind: "vegas".into(),
            src: "s".into(),
            dst: "d".into(),
            throughput_bps: bps,
            received_bps: bps,
            sent_bytes: 0,
            delivered_bytes: 0,
            lost_packets: 0,
            mean_rtt_s: Some(0.02),
            mean_cwnd_bytes: None,
            mean_accumulation_bytes: None,
            base_rtt_s: None,
            retransmits: 0,
            retransmits_in_window: 0,
            retransmits_in_avoidance: 0,
            timeouts: 0,
            active_in_window_s: 1.0,
            completed_s: None,
            one_way_delay: None,
            theory: theory.map(|x| {
                Box::new(FlowTheory {
                    throughput_bps: x,
                    rtt_s: 0.02,
                    cwnd_bytes: 1e4,
                    queueing_delay_s: 0.0,
                    base_rtt_s: 0.01,
                })
            }),
            model: None,
        }
    }

    fn summary(flows: Vec<FlowSummary>) -> Summary {
        Summary {
            scenario: "t".into(),
            mode: "simulation".into(),
            seed: 1,
            sim_time_s: 1.0,
            wall_time_s: 0.0,
            events: 0,
            packet_hops: 0,
            window: WindowSummary {
                from_s: 0.0,
                to_s: 1.0,
            },
            flows,
            unlisted_flows: 0,
            links: Vec::new(),
            shared_buffers: Vec::new(),
            fairness: Fairness {
                jain: None,
                weighted_max_min: None,
            },
            theory: None,
            live: None,
            fct: None,
            provenance: None,
        }
    }

    #[test]
    fn a_class_check_means_its_members_and_tests_against_the_theory() {
        let s = summary(vec![
            flow("c1-0", 1.0e6, Some(1.0e6)),
            flow("c1-1", 1.2e6, Some(1.0e6)),
            flow("c2-0", 9.0e6, None),
        ]);
        let units = Units {
            packet_bytes: 1000.0,
        };
        let check = FlowCheck {
            flows: Flows::Class("c1"),
            quantity: &THROUGHPUT_MBPS,
            paper: Some(2.0),
            test: Test::Close(0.15),
        };
        let row = check.row("run: ", &s, &units);
        assert_eq!(row.quantity, "run: c1 throughput (Mb/s)");
        assert!((row.measured - 1.1).abs() < 1e-12);
        assert_eq!(row.theory, Some(1.0));
        assert!(row.pass, "1.1 is within 15% of the theory's 1.0");
        let tight = FlowCheck {
            test: Test::Close(0.05),
            ..check
        };
        assert!(!tight.row("", &s, &units).pass);
        // No theory: the paper's value is the reference.
        let other = FlowCheck {
            flows: Flows::Id("c2-0"),
            quantity: &THROUGHPUT_MBPS,
            paper: Some(9.5),
            test: Test::Close(0.1),
        };
        let row = other.row("", &s, &units);
        assert!(row.pass && row.tolerance.contains("paper"));
        // Nothing to measure: NaN, and the row fails.
        let none = FlowCheck {
            flows: Flows::Class("c9"),
            quantity: &THROUGHPUT_MBPS,
            paper: Some(1.0),
            test: Test::AtLeast(0.0),
        };
        let row = none.row("", &s, &units);
        assert!(row.measured.is_nan() && !row.pass);
    }
}
