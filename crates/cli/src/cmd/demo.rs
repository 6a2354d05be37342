//! `acclab demo` (and `acclab` alone): the built-in demo scenario.

use std::path::PathBuf;

use anyhow::Result;

use acclab_scenario as scenario;

use crate::cmd::run::simulate;
use crate::load::output_dir;

const DEMO: &str = include_str!("../../../../scenarios/examples/demo.toml");

pub fn demo(out: Option<PathBuf>) -> Result<()> {
    let sc = scenario::parse(DEMO, "<built-in demo>")?;
    let def = scenario::parse_spec(DEMO, "<built-in demo>")?;
    let provenance = crate::load::provenance_of(&def, Some(sc.seed), None, &[]);
    println!("acclab demo: 3 Reno flows (RTT 24, 42, 82 ms) and a 20 Mb/s CBR flow over a 100 Mb/s bottleneck, 20 s simulated.");
    let dir = output_dir(out, &sc.name, false)?;
    simulate(
        sc,
        dir,
        Some(Default::default()),
        false,
        false,
        Some(provenance),
        (1, false),
    )?;
    // Started by `cargo run` (which sets CARGO), `acclab` is not on the PATH yet: say the
    // command that works from here.
    let acclab = if std::env::var_os("CARGO").is_some() {
        "cargo run --release -p acclab-cli --"
    } else {
        "acclab"
    };
    println!(
        "\nNext: {acclab} run scenarios/examples/dumbbell-reno.toml --plots   (see docs/tutorial.md)"
    );
    Ok(())
}
