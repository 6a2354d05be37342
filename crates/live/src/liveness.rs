//! Is the other process of a split run still there? Heartbeats, and the silence that ends a run
//! (issue 55 §4).
//!
//! `acclab live router` and `acclab live endpoints` meet only through their sockets. Data alone
//! cannot tell a peer that has gone from one with nothing to say (a TCP sender waits out a
//! retransmission timeout of up to 60 s in silence; a flow that has not started sends nothing),
//! so each side sends the other a [heartbeat](crate::wire::Datagram::Heartbeat) every
//! `interval` — the router to every endpoint, every endpoint's socket to the router — and counts
//! every authentic datagram it hears from a peer. The last heartbeat a process sends, as its
//! run ends, says so: the peer stops waiting for it (the two clocks start when each process
//! does, so one ends before the other). A peer heard from and then silent for
//! `silence` is gone, and so is one never heard within [`STARTUP`] of this process's start (the
//! two are started by hand or by a script, not at the same instant): the run stops with an
//! error naming it and publishes nothing, where it used to exit 0 with results that hid the
//! missing half.
//!
//! `silence` is five of the scenario's shortest unloaded round trips in wall time (scenario
//! time divided by the time scale), but never less than [`FLOOR`]: a process that the machine
//! holds up for a while (a busy core, a virtual machine's stolen time) must not be taken for
//! one that has gone. Heartbeats go five to a `silence`, so four may be lost in a row.

use std::time::{Duration, Instant};

use acclab_scenario::Scenario;

/// The least silence taken for a peer that has gone, wall time.
pub const FLOOR: Duration = Duration::from_millis(500);
/// How long a peer may take to be heard from first, wall time from this process's start.
pub const STARTUP: Duration = Duration::from_secs(10);
/// Round trips of silence that make a peer gone.
const RTTS: u32 = 5;
/// Heartbeats per `silence`.
const BEATS: u32 = 5;

/// How often to send heartbeats, and how long a silence ends a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub interval: Duration,
    pub silence: Duration,
}

impl Limits {
    /// The limits of `scenario` run at `time_scale` (scenario time = wall time × scale).
    pub fn of(scenario: &Scenario, time_scale: f64) -> Limits {
        let rtt = (0..scenario.flows.len())
            .map(|i| scenario.base_rtt(i))
            .min()
            .unwrap_or_default();
        let wall = Duration::from_secs_f64((rtt.0 as f64 / 1e9 / time_scale).min(1e6));
        let silence = (wall * RTTS).max(FLOOR);
        Limits {
            interval: silence / BEATS,
            silence,
        }
    }
}

/// What one process has heard from its peers (the router: every endpoint; an endpoint: the
/// router), and when its next heartbeat is due.
pub struct Liveness {
    limits: Limits,
    started: Instant,
    peers: Vec<Peer>,
    next_beat: Instant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    NotYetHeard,
    HeardAt(Instant),
    /// Its run is over: it is no longer waited for.
    Finished,
}

/// A peer that has gone silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Silent {
    pub peer: usize,
    /// Whether it was ever heard from (if not: not within [`STARTUP`]).
    pub was_heard: bool,
    /// How long it has been silent (since this process started, if never heard).
    pub for_: Duration,
}

impl Liveness {
    /// `peers` peers, none heard yet; the first heartbeat is due at once.
    pub fn new(limits: Limits, peers: usize, now: Instant) -> Liveness {
        Liveness {
            limits,
            started: now,
            peers: vec![Peer::NotYetHeard; peers],
            next_beat: now,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Peer `peer` was heard from at `now`.
    pub fn heard(&mut self, peer: usize, now: Instant) {
        if let Some(p) = self.peers.get_mut(peer).filter(|p| **p != Peer::Finished) {
            *p = Peer::HeardAt(now);
        }
    }

    /// Whether peer `peer` has been heard from at all.
    pub fn heard_from(&self, peer: usize) -> bool {
        self.peers
            .get(peer)
            .is_some_and(|p| *p != Peer::NotYetHeard)
    }

    /// Peer `peer` says that its run is over: it is not waited for any more.
    pub fn finished(&mut self, peer: usize) {
        if let Some(p) = self.peers.get_mut(peer) {
            *p = Peer::Finished;
        }
    }

    /// When the next heartbeat is due.
    pub fn next_beat(&self) -> Instant {
        self.next_beat
    }

    /// Whether a heartbeat is due at `now`; if so the one after is due an interval after `now`
    /// (a process held up past several sends one, not a burst).
    pub fn beat_due(&mut self, now: Instant) -> bool {
        if now < self.next_beat {
            return false;
        }
        self.next_beat = now + self.limits.interval;
        true
    }

    /// The first peer that has gone silent at `now`, if any.
    pub fn silent(&self, now: Instant) -> Option<Silent> {
        self.peers.iter().enumerate().find_map(|(peer, p)| {
            let (since, limit) = match p {
                Peer::HeardAt(t) => (*t, self.limits.silence),
                Peer::NotYetHeard => (self.started, STARTUP.max(self.limits.silence)),
                Peer::Finished => return None,
            };
            let for_ = now.saturating_duration_since(since);
            (for_ > limit).then_some(Silent {
                peer,
                was_heard: matches!(p, Peer::HeardAt(_)),
                for_,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell(delay: &str) -> Scenario {
        let src = format!(
            "name = \"d\"\nduration = \"10s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrate = \"10Mbps\"\n\
             delay = \"{delay}\"\n[[flow]]\nid = \"f\"\nkind = \"reno\"\nfrom = \"a\"\nto = \"b\"\n"
        );
        acclab_scenario::parse(&src, "d.toml").unwrap()
    }

    #[test]
    fn silence_is_five_round_trips_of_wall_time_with_a_floor() {
        // RTT 2 × 200 ms (+ transmissions): 2 s at scale 1, 4 s at half speed, 0.2 s at 10 —
        // floored at 0.5 s.
        let sc = dumbbell("200ms");
        let at = |scale| Limits::of(&sc, scale).silence.as_secs_f64();
        assert!((at(1.0) - 2.0).abs() < 0.01, "{}", at(1.0));
        assert!((at(0.5) - 4.0).abs() < 0.02, "{}", at(0.5));
        assert_eq!(Limits::of(&sc, 10.0).silence, FLOOR);
        assert_eq!(Limits::of(&dumbbell("1ms"), 1.0).silence, FLOOR);
        let l = Limits::of(&sc, 1.0);
        assert_eq!(l.interval * BEATS, l.silence);
    }

    #[test]
    fn a_peer_is_silent_after_the_limit_and_one_never_heard_after_startup() {
        let limits = Limits {
            interval: Duration::from_millis(100),
            silence: Duration::from_millis(500),
        };
        let t0 = Instant::now();
        let ms = |m| t0 + Duration::from_millis(m);
        let mut l = Liveness::new(limits, 2, t0);
        l.heard(0, ms(100));
        assert_eq!(l.silent(ms(600)), None);
        // Peer 0 silent 501 ms; peer 1 never heard, but within the startup allowance.
        assert_eq!(
            l.silent(ms(601)),
            Some(Silent {
                peer: 0,
                was_heard: true,
                for_: Duration::from_millis(501)
            })
        );
        l.heard(0, ms(9_800));
        assert_eq!(l.silent(ms(9_900)), None);
        let s = l.silent(ms(10_001)).unwrap();
        assert_eq!((s.peer, s.was_heard), (1, false));
        // A peer whose run is over is not waited for, whatever it sends after.
        l.finished(1);
        l.heard(1, ms(10_002));
        l.heard(0, ms(10_050));
        assert_eq!(l.silent(ms(10_100)), None);
        assert_eq!(l.silent(ms(10_551)).map(|s| s.peer), Some(0));
    }

    #[test]
    fn heartbeats_are_due_once_an_interval_and_do_not_pile_up() {
        let limits = Limits {
            interval: Duration::from_millis(100),
            silence: Duration::from_millis(500),
        };
        let t0 = Instant::now();
        let ms = |m| t0 + Duration::from_millis(m);
        let mut l = Liveness::new(limits, 1, t0);
        assert!(l.beat_due(t0));
        assert!(!l.beat_due(ms(99)));
        assert!(l.beat_due(ms(100)));
        // Held up for a second: one heartbeat, the next an interval later.
        assert!(l.beat_due(ms(1_100)));
        assert!(!l.beat_due(ms(1_150)));
        assert_eq!(l.next_beat(), ms(1_200));
    }
}
