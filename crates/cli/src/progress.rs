//! Progress on a terminal: bars on stderr, never in a pipe or a file.

use std::io::IsTerminal;

/// A run's progress in milliseconds of its scenario time, on stderr when it is a terminal and
/// the run is not quiet.
pub struct TimeBar(Option<indicatif::ProgressBar>);

impl TimeBar {
    pub fn new(sc: &acclab_scenario::Scenario, label: &'static str, quiet: bool) -> TimeBar {
        let bar = if quiet {
            None
        } else {
            progress_bar(sc.duration.0 / 1_000_000)
        };
        if let Some(b) = &bar {
            b.set_message(label);
        }
        TimeBar(bar)
    }

    pub fn at(&mut self, t: acclab_core::Time) {
        if let Some(b) = &self.0 {
            b.set_position(t.0 / 1_000_000);
        }
    }

    pub fn finish(self) {
        if let Some(b) = self.0 {
            b.finish_and_clear();
        }
    }
}

/// A progress bar on stderr when it is a terminal.
pub fn progress_bar(len: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::new(len.max(1));
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len}, {elapsed} elapsed",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    Some(b)
}
