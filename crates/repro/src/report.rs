//! Comparison tables: quantity, paper value, theory value, measured value, tolerance, pass/fail.

use std::path::Path;

use acclab_results::table::{Align, Mark, Table};
use serde::{Deserialize, Serialize};

/// One line of a comparison.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub quantity: String,
    pub paper: Option<f64>,
    pub theory: Option<f64>,
    /// The model tier's value of the same quantity, where the experiment has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<f64>,
    pub measured: f64,
    /// The check, in words ("±3% of theory", "≤ 0", …).
    pub tolerance: String,
    pub pass: bool,
    /// Why this (quick) run cannot establish the row: it is reported, not checked, and the full
    /// run checks it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_run_only: Option<String>,
    /// A value reported beside the checks, not a check: what it shows, and why there is nothing
    /// to check it against (the paper draws it without a number, or the claim is another row).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information: Option<String>,
}

impl Row {
    /// A checked row: the paper's and the theory's values, what was measured, the check in
    /// words and its outcome (no model value, not left to the full run, not information).
    fn of(
        quantity: String,
        (paper, theory): (Option<f64>, Option<f64>),
        measured: f64,
        tolerance: String,
        pass: bool,
    ) -> Row {
        Row {
            quantity,
            paper,
            theory,
            model: None,
            full_run_only: None,
            information: None,
            measured,
            tolerance,
            pass,
        }
    }

    /// Measured within `rel` (relative) of the theory value, or of the paper's when the theory
    /// has none.
    pub fn close(
        quantity: impl Into<String>,
        paper: Option<f64>,
        theory: Option<f64>,
        measured: f64,
        rel: f64,
    ) -> Row {
        let (reference, name) = match (theory, paper) {
            (Some(t), _) => (t, "theory"),
            (None, Some(p)) => (p, "paper"),
            (None, None) => (f64::NAN, "nothing"),
        };
        let pass = measured.is_finite() && (measured - reference).abs() <= rel * reference.abs();
        Row::of(
            quantity.into(),
            (paper, theory),
            measured,
            format!("±{}% of {name}", rel * 100.0),
            pass,
        )
    }

    /// Measured within `rel` (relative) of `reference`, a value of the experiment's own (another
    /// of its runs, `name`), which the tolerance quotes.
    pub fn close_to(
        quantity: impl Into<String>,
        name: &str,
        reference: f64,
        measured: f64,
        rel: f64,
    ) -> Row {
        let pass = measured.is_finite() && (measured - reference).abs() <= rel * reference.abs();
        let tolerance = format!("±{}% of {name} {}", rel * 100.0, fmt_num(reference));
        Row::of(quantity.into(), (None, None), measured, tolerance, pass)
    }

    /// In a quick run (`quick`), the row is reported but not checked, for `reason`: what only
    /// the full run's length or size can establish.
    pub fn full_run_only(mut self, quick: bool, reason: &str) -> Row {
        if quick {
            self.full_run_only = Some(reason.into());
        }
        self
    }

    /// A value reported beside the checks and not checked, for `why` (what it shows; what
    /// the claim about it is, if another row checks one).
    pub fn information(
        quantity: impl Into<String>,
        paper: Option<f64>,
        theory: Option<f64>,
        measured: f64,
        why: &str,
    ) -> Row {
        Row {
            information: Some(why.into()),
            ..Row::of(
                quantity.into(),
                (paper, theory),
                measured,
                String::new(),
                true,
            )
        }
    }

    /// The bound said with the claim it checks and where the claim comes from, when neither
    /// the paper nor the theory gives the row a value: "≥ 1: Reno keeps retransmitting at every
    /// buffer size (002 Fig. 8)".
    pub fn because(mut self, claim: &str) -> Row {
        self.tolerance = format!("{}: {claim}", self.tolerance);
        self
    }

    /// Whether the row counts: it was checked (not left to the full run, not information) and
    /// held.
    pub fn checked(&self) -> bool {
        self.full_run_only.is_none() && self.information.is_none()
    }

    /// The result column: pass, FAIL, full run only (why), or information (what it shows).
    pub fn verdict(&self) -> String {
        match (&self.information, &self.full_run_only, self.pass) {
            (Some(why), _, _) => format!("information ({why})"),
            (None, Some(why), _) => format!("full run only ({why})"),
            (None, None, true) => "pass".into(),
            (None, None, false) => "FAIL".into(),
        }
    }

    /// The same row with the model tier's value beside (the check is unchanged).
    pub fn with_model(mut self, model: Option<f64>) -> Row {
        self.model = model;
        self
    }

    /// Measured at most `bound`.
    pub fn at_most(
        quantity: impl Into<String>,
        paper: Option<f64>,
        theory: Option<f64>,
        measured: f64,
        bound: f64,
    ) -> Row {
        let pass = measured <= bound;
        Row::of(
            quantity.into(),
            (paper, theory),
            measured,
            format!("≤ {bound}"),
            pass,
        )
    }

    /// Measured at least `bound`.
    pub fn at_least(
        quantity: impl Into<String>,
        paper: Option<f64>,
        theory: Option<f64>,
        measured: f64,
        bound: f64,
    ) -> Row {
        let pass = measured >= bound;
        Row::of(
            quantity.into(),
            (paper, theory),
            measured,
            format!("≥ {bound}"),
            pass,
        )
    }
}

/// The outcome of one reproduction.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub id: String,
    pub title: String,
    pub quick: bool,
    pub rows: Vec<Row>,
    /// Files written (relative to the output directory).
    pub files: Vec<String>,
    pub notes: Vec<String>,
    pub wall_time_s: f64,
}

impl Report {
    pub fn new(id: &str, title: &str, quick: bool) -> Report {
        Report {
            id: id.into(),
            title: title.into(),
            quick,
            rows: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
            wall_time_s: 0.0,
        }
    }

    /// Every checked row passes (rows left to the full run do not count).
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.pass || !r.checked())
    }

    /// Checked rows that pass, and checked rows.
    pub fn score(&self) -> (usize, usize) {
        let checked = self.rows.iter().filter(|r| r.checked());
        let n = checked.clone().count();
        (checked.filter(|r| r.pass).count(), n)
    }

    /// Rows left to the full run.
    pub fn left_to_full_run(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.full_run_only.is_some())
            .count()
    }

    /// Writes `comparison.csv` and `comparison.json` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let mut w = csv::Writer::from_path(dir.join("comparison.csv"))?;
        // A model column only where some row has the model tier's value.
        let model = self.rows.iter().any(|r| r.model.is_some());
        let mut header = vec!["quantity", "paper", "theory"];
        if model {
            header.push("model");
        }
        header.extend(["measured", "tolerance", "pass"]);
        w.write_record(&header)?;
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
        for r in &self.rows {
            let mut row = vec![r.quantity.clone(), opt(r.paper), opt(r.theory)];
            if model {
                row.push(opt(r.model));
            }
            row.extend([
                r.measured.to_string(),
                r.tolerance.clone(),
                match r.checked() {
                    false => r.verdict(),
                    true => r.pass.to_string(),
                },
            ]);
            w.write_record(&row)?;
        }
        w.flush()?;
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join("comparison.json"), json + "\n")
    }

    /// The comparison as a text table.
    pub fn table(&self) -> String {
        self.comparison().text(usize::MAX)
    }

    /// The comparison: quantity, paper, theory, model (where a row has one), measured,
    /// tolerance and result, each row marked with its outcome.
    pub fn comparison(&self) -> Table {
        let num = |x: Option<f64>| x.map_or("-".to_string(), fmt_num);
        let model = self.rows.iter().any(|r| r.model.is_some());
        let mut columns = vec!["quantity", "paper", "theory"];
        if model {
            columns.push("model");
        }
        columns.extend(["measured", "tolerance", "result"]);
        let n = columns.len();
        let mut t = Table::new(columns)
            .align(n - 2, Align::Left)
            .align(n - 1, Align::Left);
        for r in &self.rows {
            let mut cells = vec![r.quantity.clone(), num(r.paper), num(r.theory)];
            if model {
                cells.push(num(r.model));
            }
            cells.extend([fmt_num(r.measured), r.tolerance.clone(), r.verdict()]);
            let mark = match (r.checked(), r.pass) {
                (false, _) => Mark::Unchecked,
                (true, true) => Mark::Pass,
                (true, false) => Mark::Fail,
            };
            t.push_marked(cells, Some(mark));
        }
        t
    }
}

/// Four significant digits, without exponent for ordinary magnitudes.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let digits = if a >= 1000.0 {
            0
        } else if a >= 100.0 {
            1
        } else if a >= 1.0 {
            3
        } else {
            4
        };
        format!("{x:.digits$}")
    } else {
        format!("{x:.3e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn information_is_reported_and_never_counted() {
        let mut r = Report::new("x", "x", true);
        r.rows
            .push(Row::at_least("a", None, None, 2.0, 1.0).because("a claim (000 Fig. 1)"));
        r.rows
            .push(Row::information("b", None, None, 0.0, "drawn, no value"));
        assert_eq!(r.rows[0].tolerance, "≥ 1: a claim (000 Fig. 1)");
        assert_eq!(r.score(), (1, 1));
        assert_eq!(r.left_to_full_run(), 0);
        assert_eq!(r.rows[1].verdict(), "information (drawn, no value)");
        assert!(r.table().contains("information (drawn, no value)"));
    }

    #[test]
    fn rows_check_against_theory_first() {
        assert!(Row::close("x", Some(100.0), Some(50.0), 51.0, 0.03).pass);
        assert!(!Row::close("x", Some(51.0), Some(100.0), 51.0, 0.03).pass);
        assert!(Row::close("x", Some(100.0), None, 102.0, 0.03).pass);
        assert!(!Row::close("x", None, None, 1.0, 0.03).pass);
        assert!(Row::at_most("x", None, None, 0.0, 0.0).pass);
        assert!(!Row::at_least("x", None, None, 0.0, 1.0).pass);
        assert!(!Row::close("x", None, Some(1.0), f64::NAN, 0.5).pass);
    }

    #[test]
    fn rows_left_to_the_full_run_are_shown_not_counted() {
        let mut r = Report::new("x", "x", true);
        r.rows.push(Row::at_most("a", None, None, 1.0, 2.0));
        r.rows
            .push(Row::at_most("b", None, None, 3.0, 2.0).full_run_only(true, "needs 600 s"));
        r.rows
            .push(Row::at_most("c", None, None, 1.0, 2.0).full_run_only(false, "needs 600 s"));
        assert!(r.passed());
        assert_eq!((r.score(), r.left_to_full_run()), ((2, 2), 1));
        assert_eq!(r.rows[1].verdict(), "full run only (needs 600 s)");
        assert!(r.table().contains("full run only (needs 600 s)"));
        // The full run checks it.
        r.rows[1].full_run_only = None;
        assert!(!r.passed());
    }
}
