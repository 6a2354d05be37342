//! The state history a delayed system reads: a ring of rows, one row per integration step,
//! each row holding every recorded series at that step.
//!
//! A read at time t − τ interpolates linearly between the two recorded steps around it, so
//! delays need not be multiples of the step. Before the first recorded step a read gives the
//! first row (the system was at rest before t = 0: every series starts at its initial value).

/// A ring of `len` rows of `width` values.
#[derive(Clone, Debug)]
pub struct History {
    width: usize,
    len: usize,
    data: Vec<f64>,
    /// The ring position of the newest row (meaningless before the first).
    newest: usize,
    /// Whether a row has been recorded (and copied into every row).
    started: bool,
}

/// Where a delay falls between two recorded steps: `steps` back from the newest (whole part) and
/// the fraction of the way to the step before that.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lag {
    pub steps: usize,
    pub frac: f64,
}

impl Lag {
    /// The lag of a delay of `tau` seconds at step `h` seconds.
    pub fn of(tau: f64, h: f64) -> Lag {
        let x = (tau / h).max(0.0);
        let steps = x.floor();
        Lag {
            steps: steps as usize,
            frac: x - steps,
        }
    }
}

impl History {
    /// Room for delays up to `longest` seconds at step `h`.
    pub fn new(width: usize, longest: f64, h: f64) -> History {
        let len = (longest / h).ceil() as usize + 3;
        History {
            width,
            len,
            data: vec![0.0; width * len],
            newest: len - 1,
            started: false,
        }
    }

    /// The row to fill for the next step; call [`History::commit`] after filling it.
    pub fn next_row(&mut self) -> &mut [f64] {
        let r = if self.newest + 1 == self.len {
            0
        } else {
            self.newest + 1
        };
        &mut self.data[r * self.width..(r + 1) * self.width]
    }

    pub fn commit(&mut self) {
        self.newest = if self.newest + 1 == self.len {
            0
        } else {
            self.newest + 1
        };
        if !self.started && self.width > 0 {
            // Before the first step the system was at rest in its first state: every row holds
            // the first, so that a read needs no check of how many rows there are.
            let (first, rest) = self.data.split_at_mut(self.width);
            for row in rest.chunks_exact_mut(self.width) {
                row.copy_from_slice(first);
            }
            self.started = true;
        }
    }

    /// The offset of the row `back` steps before the newest.
    #[inline]
    fn row(&self, back: usize) -> usize {
        let r = if self.newest >= back {
            self.newest - back
        } else {
            self.newest + self.len - back
        };
        r * self.width
    }

    /// Series `s` at `lag` before the newest row.
    #[inline]
    pub fn at(&self, s: usize, lag: Lag) -> f64 {
        self.rows(lag).at(s)
    }

    /// The two rows around `lag` before the newest, to read several series at that lag.
    #[inline]
    pub fn rows(&self, lag: Lag) -> Rows<'_> {
        debug_assert!(lag.steps + 1 < self.len, "lag beyond the history's room");
        let a = self.row(lag.steps);
        let b = if lag.frac == 0.0 {
            a
        } else {
            self.row(lag.steps + 1)
        };
        Rows {
            a: &self.data[a..a + self.width],
            b: &self.data[b..b + self.width],
            frac: lag.frac,
        }
    }
}

/// The rows around one lag ([`History::rows`]).
pub struct Rows<'h> {
    a: &'h [f64],
    b: &'h [f64],
    frac: f64,
}

impl Rows<'_> {
    /// Series `s`, interpolated between the two rows.
    #[inline]
    pub fn at(&self, s: usize) -> f64 {
        let a = self.a[s];
        if self.frac == 0.0 {
            return a;
        }
        a + (self.b[s] - a) * self.frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_interpolate_between_steps_and_hold_the_first_row() {
        let mut h = History::new(2, 1.0, 0.1);
        for n in 0..30 {
            let row = h.next_row();
            row[0] = n as f64;
            row[1] = -(n as f64);
            h.commit();
        }
        // Newest is step 29; 0.35 s back at 0.1 s steps is 3.5 steps: 25.5.
        let lag = Lag::of(0.35, 0.1);
        assert!((h.at(0, lag) - 25.5).abs() < 1e-9);
        assert!((h.at(1, lag) + 25.5).abs() < 1e-9);
        assert_eq!(h.at(0, Lag::of(0.0, 0.1)), 29.0);
        // Before the first step: the first row.
        let mut early = History::new(1, 1.0, 0.1);
        early.next_row()[0] = 7.0;
        early.commit();
        assert_eq!(early.at(0, Lag::of(0.5, 0.1)), 7.0);
    }
}
