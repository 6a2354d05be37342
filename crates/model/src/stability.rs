//! The stability of ACC's delayed loop: the largest gain κ at which a network's ACC-P (or ACC-MW)
//! loops still converge to their equilibrium, from the model linearised about its fixed point.
//!
//! 001 proves ACC globally stable on the fluid model *without* feedback delay; with delay, the
//! gain matters. This module gives the boundary for a scenario's own topology, routes and
//! delays, and a closed form for one bottleneck.
//!
//! # The linearised delayed system
//!
//! About the model's fixed point (rates x_i, queues b_l, the rtt τ_i = d_i + Σ_l b_l/c_l each
//! law uses), with deviations written δ, the model (model.rs) reads, in continuous time:
//!
//! - source rate (acc.rs: x = w/srtt, srtt = d + the forward queueing delay as reported):
//!   δx_i(t) = [δw_i(t) − x_i·Σ_l δb_l(t − β_il)/c_l] / τ_i;
//! - a flow's share q_il of a bottleneck's queue (the fluid FIFO serves each flow in proportion
//!   to its share, so its departures are c_l·q_il/b_l):
//!   δq̇_il(t) = δλ_il(t) − (c_l/b_l)·δq_il(t) + (c_l·q_il/b_l²)·δb_l(t), δb_l = Σ_i δq_il,
//!   where the arrivals δλ_il are δx_i at the flow's first bottleneck, delayed by the hops before
//!   it, and at a later one the previous bottleneck's departures, delayed by the hops between;
//! - the window law, ẇ_i = (policy(w_i; â_i) − w_i)/τ_i with â_i = Σ_l q_il(t − β_il)
//!   (000 eq. (1)): at the fixed point â_i = a_i*, so only the derivative in â survives,
//!   δẇ_i(t) = −(g_i/τ_i)·Σ_l δq_il(t − β_il), g_i = −∂policy/∂â (κ for ACC-P, 000 eq. (6);
//!   κ·(d/τ)/w_i for ACC-MW, eq. (5)), taken from the very policy object the sender runs.
//!
//! β_il is the delay from link l back to the source (rest of the forward path, reverse path):
//! the `back` delays of network.rs. Links without a standing queue at the fixed point stay empty
//! under small perturbations and are pure delays. This is a linear retarded delay-differential
//! system ẋ(t) = Σ_j A_j x(t − θ_j) in the windows and shares.
//!
//! # One bottleneck: a closed form
//!
//! n flows with one propagation RTT d through one bottleneck, all with ACC-P gain κ. Summed
//! over the flows (W = Σ w_i; the shares sum to the queue, Σ δq_i = δb) and with τ_f + τ_b = d
//! the delays to and from the queue:
//!
//!   τ·δḃ(t) = δW(t − τ_f) − δb(t − d),    δẆ(t) = −(κ/τ)·δb(t − τ_b).
//!
//! In Laplace terms (sτ)·B = e^{−sτ_f}·W − e^{−sd}·B and s·W = −(κ/τ)·e^{−sτ_b}·B, so with
//! z = sτ and r = d/τ ∈ (0, 1] (the share of the RTT that is propagation):
//!
//!   z² + (z + κ)·e^{−rz} = 0.
//!
//! For small κ the roots are z ≈ −κ (the window mode) and those of z + e^{−rz} = 0 (stable for
//! r < π/2). A pair crosses the imaginary axis at z = iω when κ + iω = ω²·e^{irω}, i.e.
//!
//!   ω·sin(rω) = 1,    κ_max(r) = ω²·cos(rω),
//!
//! ω the smallest positive root. At r = 1 (no standing queue) κ_max = 0.548 at ω = 1.114
//! (a period of 5.6 RTTs); κ_max grows as the standing queue takes a larger share of the RTT
//! (r = 0.76: 0.90; r → 0: ∞, the queue's own integrator then dominates). So 000's default
//! κ = 0.5 is stable on one bottleneck whatever the rates and delays, with little margin when the
//! target accumulation is small beside the bandwidth-delay product. [`kappa_max_one_bottleneck`]
//! computes it; the test `closed_form_matches_the_spectrum` checks it against the numerical
//! method below. Differential modes (Σ δw_i = 0) move the shares but not the queue and see a
//! smaller gain; heterogeneous delays and several bottlenecks are what the numerical method is
//! for.
//!
//! # Numerically, on any network
//!
//! The characteristic roots of the linear delay system are approximated by the eigenvalues of its
//! infinitesimal generator discretised by Chebyshev collocation over [−θ_max, 0] (Breda, Maset and
//! Vermiglio's pseudospectral method [BMV05]): the state on N + 1 Chebyshev nodes; the first block
//! row is the system itself, the delayed values read by Lagrange interpolation on the nodes; the
//! others are the Chebyshev differentiation matrix. The rightmost eigenvalue's real part (the
//! spectral abscissa) says stable (< 0) or not. κ_max is where it crosses zero, found by
//! bisection on a common scale of every ACC flow's gain. The result is computed at two
//! resolutions (N = 24 and 40) and reported with both, so its convergence is visible.
//!
//! Domain: ACC-P and ACC-MW Monaco flows and CBR flows, over FIFO queues (droptail, priority) with
//! the standing queues below their buffers. ACC-AIAD's sign law has no linearisation; 003
//! Algorithm 1's slow start and limit, AQM laws, AVD's stamps and drops are outside (listed).
//!
//! Against the packet level (tests/stability.rs): the packet runs change from steady to
//! oscillating below κ_max — between 0.5 and 0.7 against κ_max = 0.90 on one bottleneck, and
//! near 0.5 where the standing queue is most of the RTT and κ_max grows (acc-fig2 with weight
//! 5: 1.99, a factor of 4). The cause is the delay the paper's model leaves out of the loop: 000
//! eq. (1) shifts each queue by propagation delays only, but what a packet reports of a queue is
//! what it met on arriving there, and it then waits out that queue and every later one before
//! its report leaves the receiver. [`Delays::Measured`] adds those queueing delays (at the fixed
//! point) to each feedback term. On one bottleneck every feedback path then takes the whole RTT
//! τ — the rate's reading of the queueing delay (d + b/c instead of d) and the window's reading
//! of the accumulation (τ_f + τ_b + b/c) — so the closed form is the one above at r = 1,
//! z² + (z + κ)·e^{−z} = 0: κ_max = 0.548 whatever the standing queue (checked against the
//! spectrum in `closed_form_matches_the_spectrum`), where the paper's delays give a boundary
//! that grows without bound as r → 0. With it: 0.55 on the dumbbell (packets change
//! between 0.5 and 0.7), 0.55 on live-dumbbell (between 0.5 and 0.6), 0.43 on acc-fig2 with
//! weight 5 (packets oscillate from 0.5 on, steady at 0.22): the packets change within a factor
//! of 2 of it everywhere, asserted. It is not the policy's once-per-period update: the model
//! with 000 eq. (10) applied per period (`Settings::acc_per_period`) changes where the rate law
//! does. The model tier itself integrates the paper's delays; reading each queue at its
//! state-dependent measured delay in the integrator (tried) makes a read point move back in
//! time while a queue grows faster than real time, and Vegas' slow start then never sees its
//! queue — it would need the packet's arrival time solved along the path, not done.
//!
//! [BMV05]: D. Breda, S. Maset, R. Vermiglio, "Pseudospectral differencing methods for
//! characteristic roots of delay differential equations", SIAM J. Sci. Comput. 27(2), 2005.

use std::f64::consts::PI;

use acclab_core::cc::acc::{apply, Feedback};
use acclab_core::config::{AccPolicyName, SchemeConfig};
use acclab_core::Duration;
use acclab_scenario::Scenario;
use nalgebra::DMatrix;

use crate::network::{LinkLaw, Network, Outside, Source};

/// One term of the linear system: d(state `row`)/dt += coef · state `col` at t − `delay`;
/// `gain` terms scale with the ACC gains.
#[derive(Clone, Copy, Debug)]
struct Term {
    row: usize,
    col: usize,
    delay: f64,
    coef: f64,
    gain: bool,
}

/// The ACC loops of a scenario linearised about the model's fixed point.
#[derive(Clone, Debug)]
pub struct Linearised {
    /// States: the ACC flows' windows, then the flows' shares of each standing queue.
    pub states: usize,
    terms: Vec<Term>,
    longest: f64,
    /// Links with a standing queue at the fixed point.
    pub bottlenecks: Vec<usize>,
    /// The κ every ACC flow has, when they share one.
    pub kappa: Option<f64>,
    /// The shortest and longest equilibrium RTT among the ACC flows, s.
    pub rtt_range: (f64, f64),
}

/// The stability of a scenario's ACC loops.
#[derive(Clone, Debug, PartialEq)]
pub struct Stability {
    /// The largest factor by which every ACC flow's κ can be multiplied with the loop still
    /// stable (∞ when no gain up to 10⁴ times the scenario's destabilises it).
    pub scale_max: f64,
    /// scale_max × κ when the ACC flows share one κ.
    pub kappa_max: Option<f64>,
    /// The same with the feedback delays a packet sender measures with ([`Delays::Measured`]):
    /// where the packet runs change (module header).
    pub scale_max_measured: f64,
    pub kappa_max_measured: Option<f64>,
    /// The rightmost characteristic root at the scenario's own gains: real part (1/s; < 0:
    /// stable) and the frequency of its oscillation, Hz.
    pub abscissa: f64,
    pub frequency_hz: f64,
    /// The oscillation's frequency at the boundary, Hz.
    pub boundary_frequency_hz: f64,
    /// scale_max at the lower resolution (N = 24) beside the reported one (N = 40).
    pub scale_max_coarse: f64,
    /// Links with a standing queue at the fixed point (names).
    pub bottlenecks: Vec<String>,
}

impl Stability {
    /// Whether the scenario's own gains are stable.
    pub fn stable(&self) -> bool {
        self.abscissa < 0.0
    }
}

/// κ_max of n ACC-P flows of one propagation RTT through one bottleneck, where r = d/τ is the
/// propagation share of the equilibrium RTT (module header: ω·sin(rω) = 1, κ = ω²·cos(rω)).
pub fn kappa_max_one_bottleneck(r: f64) -> f64 {
    assert!(r > 0.0 && r <= 1.0, "r = d/τ must be in (0, 1], not {r}");
    // ω·sin(rω) rises from 0 to π/(2r) at ω = π/(2r) ≥ π/2 > 1, so the smallest root lies in
    // (0, π/(2r)): bisection.
    let f = |w: f64| w * (r * w).sin() - 1.0;
    let (mut lo, mut hi) = (0.0, PI / (2.0 * r));
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let w = 0.5 * (lo + hi);
    w * w * (r * w).cos()
}

/// Which feedback delays the linearisation has (module header, "Against the packet level").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delays {
    /// 000 eq. (1)'s: each queue read back by the propagation delay from it to the source, as
    /// the model tier integrates.
    Propagation,
    /// Those plus the queueing delays the reporting packet waits out after the queue it reports
    /// on (that queue and every later one on the path), at the fixed point: what Monaco's
    /// sender measures a queue with.
    Measured,
}

/// The scenario's stability: linearised about the model's fixed point, analysed as the module
/// header says — with the model's feedback delays, and with the packets' measured ones.
pub fn analyse(sc: &Scenario) -> Result<Stability, Outside> {
    let fp = crate::fixed_point(sc)?;
    let lin = Linearised::about(sc, &fp, Delays::Propagation)?;
    let coarse = lin.scale_max(24);
    let (scale_max, boundary) = lin.scale_max(40);
    let (abscissa, im) = lin.rightmost(1.0, 40);
    let measured = Linearised::about(sc, &fp, Delays::Measured)?
        .scale_max(40)
        .0;
    Ok(Stability {
        scale_max,
        kappa_max: lin.kappa.map(|k| k * scale_max),
        scale_max_measured: measured,
        kappa_max_measured: lin.kappa.map(|k| k * measured),
        abscissa,
        frequency_hz: im.abs() / (2.0 * PI),
        boundary_frequency_hz: boundary.abs() / (2.0 * PI),
        scale_max_coarse: coarse.0,
        bottlenecks: lin
            .bottlenecks
            .iter()
            .map(|&l| sc.links[l].name.clone()) // the network's links are the scenario's, in order
            .collect(),
    })
}

impl Linearised {
    /// Linearises `sc`'s ACC loops about the model's fixed point, or says what is outside.
    pub fn of(sc: &Scenario, delays: Delays) -> Result<Linearised, Outside> {
        Linearised::about(sc, &crate::fixed_point(sc)?, delays)
    }

    /// Linearises `sc`'s ACC loops about the fixed point `fp` (of the same scenario).
    pub fn about(
        sc: &Scenario,
        fp: &crate::FixedPoint,
        delays: Delays,
    ) -> Result<Linearised, Outside> {
        let net = Network::of(sc)?;
        let packet = net.packet_size;
        let rate: Vec<f64> = fp
            .throughput_bps
            .iter()
            .map(|b| b / (8.0 * packet))
            .collect();
        let mut outside = Vec::new();
        if !fp.settled {
            outside.push((
                "the fixed point".to_string(),
                "did not settle (no equilibrium to linearise about)".to_string(),
            ));
        }
        // The ACC flows' gains per unit of their own κ, and which flows take part.
        let active: Vec<bool> = rate.iter().map(|x| *x > 0.0).collect();
        let mut kappas = Vec::new();
        for (i, f) in net.flows.iter().enumerate() {
            if !active[i] {
                continue;
            }
            match (&f.source, &sc.flows.get(i).scheme) {
                (Source::Cbr(_), _) => {}
                (Source::Acc(_), SchemeConfig::Monaco(p))
                    if matches!(p.policy, AccPolicyName::AccP | AccPolicyName::AccMw)
                        && !p.is_expected_rate_service() =>
                {
                    kappas.push(p.kappa())
                }
                (Source::Acc(_), _) => outside.push((
                    format!("flow {}", f.id),
                    "ACC-AIAD's sign law and 003 Algorithm 1 have no linearisation here (ACC-P and ACC-MW do)".to_string(),
                )),
                _ => outside.push((
                    format!("flow {}", f.id),
                    format!("{} is not an ACC loop", f.kind),
                )),
            }
            for &l in &f.hops {
                if !matches!(net.links[l].law, LinkLaw::Fifo) {
                    outside.push((
                        format!("link {}", net.links[l].name),
                        "the stability analysis covers FIFO queues (droptail, priority) only"
                            .to_string(),
                    ));
                }
            }
        }
        let backlog = &fp.queue_pkts;
        for (l, link) in net.links.iter().enumerate() {
            if backlog[l] >= link.buffer - 0.5 {
                outside.push((
                    format!("link {}", link.name),
                    "its queue is at the buffer at the fixed point (drops are outside the linearisation)".to_string(),
                ));
            }
        }
        outside.sort();
        outside.dedup();
        if !outside.is_empty() {
            return Err(Outside(outside));
        }
        // Standing queues, and each link's load at the fixed point.
        let bottleneck: Vec<bool> = backlog.iter().map(|b| *b > 1e-3).collect();
        let mut load = vec![0.0; net.links.len()];
        for (i, f) in net.flows.iter().enumerate() {
            for &l in &f.hops {
                load[l] += rate[i] * f.packet_scale;
            }
        }
        // State indices: ACC windows, then the shares of standing queues.
        let mut window = vec![None; net.flows.len()];
        let mut states = 0;
        for (i, f) in net.flows.iter().enumerate() {
            if active[i] && matches!(f.source, Source::Acc(_)) {
                window[i] = Some(states);
                states += 1;
            }
        }
        let mut share: Vec<Vec<Option<usize>>> = Vec::new();
        let mut at_link: Vec<Vec<(usize, f64)>> = vec![Vec::new(); net.links.len()];
        for (i, f) in net.flows.iter().enumerate() {
            let mut row = Vec::new();
            for &l in &f.hops {
                if active[i] && bottleneck[l] {
                    // The fluid FIFO's equilibrium share: q = b·λ/y.
                    let q = backlog[l] * rate[i] * f.packet_scale / load[l];
                    at_link[l].push((states, q));
                    row.push(Some(states));
                    states += 1;
                } else {
                    row.push(None);
                }
            }
            share.push(row);
        }
        let mut terms = Vec::new();
        // Departures of a share s at link l (rate c·q/b), times `f`, into `row` at `delay`.
        let departures =
            |terms: &mut Vec<Term>, row: usize, s: usize, q: f64, l: usize, f: f64, delay: f64| {
                let (c, b) = (net.links[l].capacity, backlog[l]);
                terms.push(Term {
                    row,
                    col: s,
                    delay,
                    coef: f * c / b,
                    gain: false,
                });
                for &(s2, _) in &at_link[l] {
                    terms.push(Term {
                        row,
                        col: s2,
                        delay,
                        coef: -f * c * q / (b * b),
                        gain: false,
                    });
                }
            };
        let mut rtts = Vec::new();
        for (i, f) in net.flows.iter().enumerate() {
            if !active[i] {
                continue;
            }
            let tau = f.prop_delay
                + f.hops
                    .iter()
                    .map(|&l| backlog[l] / net.links[l].capacity)
                    .sum::<f64>();
            // Each queue read back by its propagation delay to the source; measured, also by
            // the queueing the reporting packet met there and at every later hop (an ACC flow's
            // reverse packets skip the reverse queues).
            let back: Vec<f64> = (0..f.hops.len())
                .map(|k| match delays {
                    Delays::Propagation => f.back[k],
                    Delays::Measured => {
                        f.back[k]
                            + f.hops[k..]
                                .iter()
                                .map(|&l| backlog[l] / net.links[l].capacity)
                                .sum::<f64>()
                    }
                })
                .collect();
            // The source's rate into `row` at `delay` (ACC flows; a CBR rate does not move).
            let source = |terms: &mut Vec<Term>, row: usize, delay: f64| {
                let Some(w) = window[i] else { return };
                terms.push(Term {
                    row,
                    col: w,
                    delay,
                    coef: 1.0 / tau,
                    gain: false,
                });
                for (k, &l) in f.hops.iter().enumerate() {
                    if share[i][k].is_none() {
                        continue;
                    }
                    for &(s2, _) in &at_link[l] {
                        terms.push(Term {
                            row,
                            col: s2,
                            delay: delay + back[k],
                            coef: -rate[i] / (tau * net.links[l].capacity),
                            gain: false,
                        });
                    }
                }
            };
            // Along the path: what reaches each standing queue, and what leaves it.
            let mut upstream: Option<(usize, f64, usize)> = None; // (share, q, link)
            let mut delay = 0.0;
            for (k, &l) in f.hops.iter().enumerate() {
                if let Some(s) = share[i][k] {
                    match upstream {
                        None => source(&mut terms, s, delay),
                        Some((s0, q0, l0)) => departures(&mut terms, s, s0, q0, l0, 1.0, delay),
                    }
                    let q = at_link[l].iter().find(|(x, _)| *x == s).unwrap().1;
                    departures(&mut terms, s, s, q, l, -1.0, 0.0);
                    upstream = Some((s, q, l));
                    delay = 0.0;
                }
                delay += f.hop_delay[k];
            }
            // The window law.
            if let (Some(w), SchemeConfig::Monaco(p)) = (window[i], &sc.flows.get(i).scheme) {
                rtts.push(tau);
                let g = policy_slope(p, rate[i] * tau, tau, f.prop_delay, packet);
                for (k, s) in share[i].iter().enumerate() {
                    if let Some(s) = *s {
                        terms.push(Term {
                            row: w,
                            col: s,
                            delay: back[k],
                            coef: -g / tau,
                            gain: true,
                        });
                    }
                }
            }
        }
        let longest = terms.iter().map(|t| t.delay).fold(0.0, f64::max);
        let kappa = kappas
            .first()
            .copied()
            .filter(|k| kappas.iter().all(|x| x == k));
        Ok(Linearised {
            states,
            terms,
            longest,
            bottlenecks: (0..net.links.len()).filter(|&l| bottleneck[l]).collect(),
            kappa,
            rtt_range: (
                rtts.iter().cloned().fold(f64::INFINITY, f64::min),
                rtts.iter().cloned().fold(0.0, f64::max),
            ),
        })
    }

    /// The discretised generator (module header) with every ACC gain times `scale`, on n + 1
    /// Chebyshev nodes.
    fn generator(&self, scale: f64, n: usize) -> DMatrix<f64> {
        let m = self.states;
        let span = self.longest.max(1e-9);
        let u: Vec<f64> = (0..=n).map(|j| (PI * j as f64 / n as f64).cos()).collect();
        let size = m * (n + 1);
        let mut a = DMatrix::zeros(size, size);
        for t in &self.terms {
            let coef = if t.gain { t.coef * scale } else { t.coef };
            // θ = (span/2)(u − 1): the node for −delay.
            let weights = lagrange(&u, 1.0 - 2.0 * t.delay / span);
            for (j, wj) in weights.iter().enumerate() {
                a[(t.row, j * m + t.col)] += coef * wj;
            }
        }
        let d = chebyshev_differentiation(&u);
        for i in 1..=n {
            for j in 0..=n {
                let v = d[(i, j)] * 2.0 / span;
                for r in 0..m {
                    a[(i * m + r, j * m + r)] = v;
                }
            }
        }
        a
    }

    /// The rightmost characteristic root with every ACC gain times `scale`: (real part,
    /// imaginary part), 1/s.
    pub fn rightmost(&self, scale: f64, n: usize) -> (f64, f64) {
        let a = self.generator(scale, n);
        let eig = nalgebra::linalg::Schur::try_new(a, 1e-13, 100_000)
            .expect("the Schur iteration converges on the generator")
            .complex_eigenvalues();
        eig.iter()
            .map(|z| (z.re, z.im))
            .fold((f64::NEG_INFINITY, 0.0), |best, z| {
                if z.0 > best.0 {
                    z
                } else {
                    best
                }
            })
    }

    /// The largest common scale of the ACC gains with a stable loop, and the imaginary part of
    /// the crossing root there (∞ if no scale up to 10⁴ destabilises it).
    pub fn scale_max(&self, n: usize) -> (f64, f64) {
        // Bracket: stable at `lo`, unstable at `hi`.
        let (mut lo, mut hi) = (1.0, 1.0);
        if self.rightmost(1.0, n).0 < 0.0 {
            while self.rightmost(hi, n).0 < 0.0 {
                lo = hi;
                hi *= 2.0;
                if hi > 1e4 {
                    return (f64::INFINITY, 0.0);
                }
            }
        } else {
            while self.rightmost(lo, n).0 >= 0.0 {
                hi = lo;
                lo /= 2.0;
                if lo < 1e-6 {
                    return (0.0, 0.0);
                }
            }
        }
        while hi - lo > 1e-4 * hi {
            let mid = 0.5 * (lo + hi);
            if self.rightmost(mid, n).0 < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi), self.rightmost(hi, n).1)
    }
}

/// −∂(next window)/∂â of a Monaco flow's own policy at κ = its own, about the equilibrium
/// (â = a*, window `w` packets, rtt `tau`): κ for ACC-P, κ·(d/τ)/w for ACC-MW.
fn policy_slope(
    p: &acclab_core::config::MonacoParams,
    w: f64,
    tau: f64,
    d: f64,
    packet: f64,
) -> f64 {
    let target = p.target_bytes();
    let eps = 1e-3 * packet;
    let next = |a: f64| {
        let fb = Feedback {
            accumulation: a,
            target,
            rtt: Duration::from_secs_f64(tau),
            rtt_p: Duration::from_secs_f64(d),
            mss: packet,
            sent: w * packet,
            allowed: w * packet,
        };
        apply(p.policy().as_mut(), w * packet, &fb, p.increase_cap).window
    };
    (next(target - eps) - next(target + eps)) / (2.0 * eps)
}

/// The Lagrange basis on the nodes `u` evaluated at `x` (barycentric form, Chebyshev weights).
fn lagrange(u: &[f64], x: f64) -> Vec<f64> {
    let n = u.len() - 1;
    if let Some(j) = u.iter().position(|&uj| (x - uj).abs() < 1e-14) {
        let mut e = vec![0.0; n + 1];
        e[j] = 1.0;
        return e;
    }
    let v: Vec<f64> = (0..=n)
        .map(|j| {
            let s = if j.is_multiple_of(2) { 1.0 } else { -1.0 };
            if j == 0 || j == n {
                0.5 * s
            } else {
                s
            }
        })
        .collect();
    let terms: Vec<f64> = (0..=n).map(|j| v[j] / (x - u[j])).collect();
    let sum: f64 = terms.iter().sum();
    terms.iter().map(|t| t / sum).collect()
}

/// The Chebyshev differentiation matrix on the nodes u_j = cos(jπ/n) (Trefethen, Spectral
/// Methods in MATLAB, ch. 6), d/du.
fn chebyshev_differentiation(u: &[f64]) -> DMatrix<f64> {
    let n = u.len() - 1;
    let c = |j: usize| {
        let s = if j.is_multiple_of(2) { 1.0 } else { -1.0 };
        if j == 0 || j == n {
            2.0 * s
        } else {
            s
        }
    };
    let mut d = DMatrix::zeros(n + 1, n + 1);
    for i in 0..=n {
        for j in 0..=n {
            if i != j {
                d[(i, j)] = c(i) / c(j) / (u[i] - u[j]);
            }
        }
    }
    for i in 0..=n {
        let s: f64 = (0..=n).filter(|&j| j != i).map(|j| d[(i, j)]).sum();
        d[(i, i)] = -s;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_at_no_standing_queue() {
        // r = 1: ω sin ω = 1 at ω = 1.1142, κ = ω² cos ω = 0.5482.
        let k = kappa_max_one_bottleneck(1.0);
        assert!((k - 0.5482).abs() < 1e-3, "{k}");
        // It grows as the queue takes more of the RTT.
        assert!(kappa_max_one_bottleneck(0.5) > kappa_max_one_bottleneck(0.76));
        assert!(kappa_max_one_bottleneck(0.76) > k);
    }

    #[test]
    fn the_discretised_generator_finds_a_known_root() {
        // ẋ(t) = −x(t − 1): the rightmost roots are −0.3181 ± 1.3372i (Lambert W).
        let lin = Linearised {
            states: 1,
            terms: vec![Term {
                row: 0,
                col: 0,
                delay: 1.0,
                coef: -1.0,
                gain: true,
            }],
            longest: 1.0,
            bottlenecks: vec![],
            kappa: Some(1.0),
            rtt_range: (1.0, 1.0),
        };
        let (re, im) = lin.rightmost(1.0, 24);
        assert!(
            (re + 0.3181).abs() < 1e-3 && (im.abs() - 1.3372).abs() < 1e-3,
            "{re} {im}"
        );
        // Stable up to the gain π/2.
        let (s, _) = lin.scale_max(24);
        assert!((s - PI / 2.0).abs() < 1e-3, "{s}");
    }
}
