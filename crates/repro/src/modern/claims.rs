//! modern-comparison's claims, as data: what the theory predicts for Monaco and Vegas, and what
//! each queue is known to do to the others. [`claims`] lists them in the order the report shows
//! them; [`check`] evaluates each against the runs' [`Metrics`].

use crate::checks::Test;
use crate::common::mbps;
use crate::Report;

use super::metrics::{outcome, Metrics, Outcome};
use super::SCHEMES;

/// Which network of a run a claim reads.
#[derive(Clone, Copy, Debug)]
enum Net {
    Dumbbell,
    ParkingLot,
}

/// A quantity of one network in one run, with the theory's and the model tier's values of it
/// where they have one.
#[derive(Clone, Copy, Debug)]
enum Quantity {
    Utilization,
    DelayMeanMs,
    DropPct,
    Jain,
    /// The favoured group's mean throughput over the penalised group's (see `metrics`).
    RttUnfairness,
}

impl Quantity {
    /// What the quantity is, without its unit.
    fn label(self, net: Net) -> &'static str {
        match (net, self) {
            (Net::Dumbbell, Quantity::Utilization) => "dumbbell utilisation",
            (Net::ParkingLot, Quantity::Utilization) => "parking lot utilisation",
            (Net::Dumbbell, Quantity::DelayMeanMs) => "dumbbell mean queueing delay",
            (Net::ParkingLot, Quantity::DelayMeanMs) => "parking lot mean queueing delay",
            (Net::Dumbbell, Quantity::DropPct) => "dumbbell drops",
            (Net::ParkingLot, Quantity::DropPct) => "parking lot drops",
            (Net::Dumbbell, Quantity::Jain) => "dumbbell Jain index",
            (Net::ParkingLot, Quantity::Jain) => "parking lot Jain index",
            (Net::Dumbbell, Quantity::RttUnfairness) => {
                "dumbbell throughput, 24 ms flow over 162 ms flow"
            }
            (Net::ParkingLot, Quantity::RttUnfairness) => "parking lot, cross over long flow",
        }
    }

    /// Its unit as rows show it.
    fn unit(self) -> &'static str {
        match self {
            Quantity::DelayMeanMs => " (ms)",
            Quantity::DropPct => " (%)",
            _ => "",
        }
    }

    fn measured(self, m: &Metrics) -> f64 {
        match self {
            Quantity::Utilization => m.utilization,
            Quantity::DelayMeanMs => m.delay_mean_ms,
            Quantity::DropPct => m.drop_pct,
            Quantity::Jain => m.jain,
            Quantity::RttUnfairness => m.rtt_unfairness,
        }
    }

    fn theory(self, m: &Metrics) -> Option<f64> {
        let t = m.theory.as_ref()?;
        match self {
            Quantity::Utilization => Some(t.utilization),
            Quantity::DelayMeanMs => Some(t.delay_ms),
            Quantity::Jain => Some(t.jain),
            Quantity::RttUnfairness => Some(t.rtt_unfairness),
            Quantity::DropPct => None,
        }
    }

    fn model(self, m: &Metrics) -> Option<f64> {
        let (utilization, unfairness) = m.model?;
        match self {
            Quantity::Utilization => Some(utilization),
            Quantity::RttUnfairness => Some(unfairness),
            _ => None,
        }
    }
}

/// What a claim reads.
#[derive(Clone, Copy, Debug)]
enum Of {
    /// Every flow of the dumbbell and the parking lot's long flows, each a row: its throughput
    /// against the theory's.
    FlowThroughputs,
    /// A quantity of one network.
    Network(Net, Quantity),
    /// The ratio of a network's quantity under this claim's queue to the same under `over`.
    RatioOver(&'static str, Net, Quantity),
    /// The lowest utilisation of every network in every run.
    LowestUtilization,
}

/// One claim: a (scheme, queue) run, what it reads, how it passes.
#[derive(Clone, Copy, Debug)]
struct Claim {
    scheme: &'static str,
    queue: &'static str,
    of: Of,
    test: Test,
}

const fn claim(scheme: &'static str, queue: &'static str, of: Of, test: Test) -> Claim {
    Claim {
        scheme,
        queue,
        of,
        test,
    }
}

/// The claims, in report order.
fn claims() -> Vec<Claim> {
    use Net::*;
    use Of::*;
    use Quantity::*;
    let mut c = vec![
        // ACC and Vegas reach the proportionally fair allocation whatever the round trips
        // (000 §III, 002 Theorem 1): every flow within 10% (ACC) and 15% (Vegas) of it.
        claim("monaco", "droptail", FlowThroughputs, Test::Close(0.10)),
        claim("monaco", "avd", FlowThroughputs, Test::Close(0.10)),
        claim("vegas", "droptail", FlowThroughputs, Test::Close(0.15)),
        // AVD moves Monaco's accumulation out of the buffer into the virtual delay (000 §IV-D):
        // the link stays at its virtual capacity, the queue at less than half tail drop's.
        claim(
            "monaco",
            "avd",
            Network(Dumbbell, Utilization),
            Test::Close(0.02),
        ),
        claim(
            "monaco",
            "avd",
            RatioOver("droptail", Dumbbell, DelayMeanMs),
            Test::AtMost(0.5),
        ),
        // Loss-based TCP over tail drop fills the buffer and favours short round trips.
        claim(
            "reno",
            "droptail",
            Network(Dumbbell, RttUnfairness),
            Test::AtLeast(1.5),
        ),
    ];
    // CoDel holds the standing queue of loss-based senders near its 5 ms target (RFC 8289 §4.4)
    // where tail drop lets them fill the buffer.
    for s in ["reno", "cubic"] {
        c.push(claim(
            s,
            "codel",
            Network(Dumbbell, DelayMeanMs),
            Test::AtMost(10.0),
        ));
        c.push(claim(
            s,
            "droptail",
            Network(Dumbbell, DelayMeanMs),
            Test::AtLeast(30.0),
        ));
    }
    // DCTCP under marking AQMs loses nothing: ECN carries all its congestion signal.
    for q in ["codel", "fq-codel"] {
        c.push(claim(
            "dctcp",
            q,
            Network(Dumbbell, DropPct),
            Test::AtMost(0.0),
        ));
    }
    // FQ-CoDel's round robin shares each link equally, whatever the scheme and round trip
    // (RFC 8290 §1.3): Jain ≥ 0.95 on the dumbbell, and per-link max-min on the parking lot
    // (cross over long flow ≤ 1.5, where proportional fairness gives 3). Not Monaco: FQ-CoDel
    // has no priority band, so its out-of-band and in-band control packets wait in the same
    // flow queue, the estimator sees no accumulation and the loop is driven by CoDel's drops
    // (a note, not a claim; see `check`).
    for s in SCHEMES.into_iter().filter(|&s| s != "monaco") {
        c.push(claim(
            s,
            "fq-codel",
            Network(Dumbbell, Jain),
            Test::AtLeast(0.95),
        ));
        c.push(claim(
            s,
            "fq-codel",
            Network(ParkingLot, RttUnfairness),
            Test::AtMost(1.5),
        ));
    }
    // Every scheme keeps every bottleneck busy.
    c.push(claim("", "", LowestUtilization, Test::AtLeast(0.9)));
    c
}

fn network(o: &Outcome, net: Net) -> &Metrics {
    match net {
        Net::Dumbbell => &o.dumbbell,
        Net::ParkingLot => &o.parking_lot,
    }
}

/// Every claim's rows, and the note on Monaco over FQ-CoDel.
pub(super) fn check(
    outcomes: &[Outcome],
    db_flows: &[usize],
    pl_long: &[usize],
    report: &mut Report,
) {
    for c in claims() {
        let (s, q) = (c.scheme, c.queue);
        match c.of {
            Of::FlowThroughputs => {
                let o = outcome(outcomes, q, s);
                for &i in db_flows.iter().chain(pl_long) {
                    let f = &o.flows[i];
                    let label = format!("{s} over {q}: {} throughput (Mb/s)", f.id);
                    let row = c
                        .test
                        .row(label, None, f.theory.map(mbps), mbps(f.measured));
                    report.rows.push(row.with_model(f.model.map(mbps)));
                }
            }
            Of::Network(net, x) => {
                let m = network(outcome(outcomes, q, s), net);
                let label = format!("{s} over {q}: {}{}", x.label(net), x.unit());
                // The theory prices a FIFO link (000 §III, 002 §3); FQ-CoDel's per-flow round
                // robin is outside it, so no prediction beside those rows.
                let theory = x.theory(m).filter(|_| q != "fq-codel");
                let row = c.test.row(label, None, theory, x.measured(m));
                report.rows.push(row.with_model(x.model(m)));
            }
            Of::RatioOver(under, net, x) => {
                let num = x.measured(network(outcome(outcomes, q, s), net));
                let den = x.measured(network(outcome(outcomes, under, s), net));
                let label = format!("{s}: {}, {q} over {under}", x.label(net));
                report.rows.push(c.test.row(label, None, None, num / den));
            }
            Of::LowestUtilization => {
                let lowest = outcomes
                    .iter()
                    .flat_map(|o| [o.dumbbell.utilization, o.parking_lot.utilization])
                    .fold(f64::INFINITY, f64::min);
                let label = "lowest bottleneck utilisation of all runs";
                report.rows.push(c.test.row(label, None, None, lowest));
            }
        }
    }
    let m = &outcome(outcomes, "fq-codel", "monaco");
    report.notes.push(format!(
        "monaco over fq-codel (no priority band for its control packets): dumbbell utilisation {:.3}, Jain {:.3}, 24 ms over 162 ms {:.2}; parking lot cross over long {:.2} (theory 3, max-min 1)",
        m.dumbbell.utilization, m.dumbbell.jain, m.dumbbell.rtt_unfairness, m.parking_lot.rtt_unfairness
    ));
}

#[cfg(test)]
mod tests {
    use super::super::QUEUES;
    use super::*;

    /// Every claim reads a run that exists: a misspelt scheme or queue would otherwise surface
    /// only as a panic at the end of a 2-minute reproduction.
    #[test]
    fn every_claim_names_a_case_that_runs() {
        for c in claims() {
            if let Of::LowestUtilization = c.of {
                continue;
            }
            assert!(SCHEMES.contains(&c.scheme), "{c:?}");
            assert!(QUEUES.contains(&c.queue), "{c:?}");
            if let Of::RatioOver(under, ..) = c.of {
                assert!(QUEUES.contains(&under), "{c:?}");
            }
        }
    }
}
