//! `acclab plot DIR` and the figure options (issue 54 §4): a run's and a sweep's figures drawn
//! again from their files equal the originals; paper presets, PDF, a time range, chosen flows
//! and links, the measurement window shaded, the buffer drawn; bad choices refused.

mod common;

use common::{acclab, failed, ok, text, two_flows as scenario};

const RUN_FIGURES: [&str; 4] = ["throughput", "cwnd", "queue", "utilization"];

#[test]
fn a_run_drawn_again_equals_its_figures_and_takes_paper_options() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let sc = scenario(cwd);
    ok(cwd, &["run", &sc, "--plots", "-q", "--out", "run"]);
    let said = ok(cwd, &["plot", "run"]);
    assert!(said.contains("run/figures/"), "{said}");
    for stem in RUN_FIGURES {
        let name = format!("{stem}.svg");
        let (a, b) = (
            std::fs::read(cwd.join("run").join(&name)).unwrap(),
            std::fs::read(cwd.join("run/figures").join(&name)).unwrap(),
        );
        assert!(a == b, "{name} drawn again differs from the run's");
    }
    // What the figures show: the measurement window shaded, the buffer's limit.
    let queue = std::fs::read_to_string(cwd.join("run/queue.svg")).unwrap();
    assert!(queue.contains("buffer: 50 packets"), "no buffer line");
    assert!(queue.contains("shaded: the measurement window"));
    assert!(
        queue.contains("queue (packets)"),
        "the quantity, not only the unit"
    );
    // The same directory again is refused (never overwritten), then --force replaces it.
    let again = failed(cwd, &["plot", "run", "--out", "run/figures"]);
    assert!(again.contains("already holds results"), "{again}");
    ok(cwd, &["plot", "run", "--out", "run/figures", "--force"]);

    // A paper column as PDF only, one flow, a time range.
    ok(
        cwd,
        &[
            "plot",
            "run",
            "--out",
            "col",
            "--preset",
            "column",
            "--formats",
            "pdf",
            "--flows",
            "beta",
            "--range",
            "1..3",
        ],
    );
    for stem in RUN_FIGURES {
        let pdf = std::fs::read(cwd.join(format!("col/{stem}.pdf"))).unwrap();
        assert!(pdf.starts_with(b"%PDF-"), "{stem}.pdf is not a PDF");
        // 3.5 in wide: 252 pt.
        let text = String::from_utf8_lossy(&pdf);
        assert!(
            text.contains("/MediaBox [0 0 252 "),
            "{stem}.pdf is not a column wide"
        );
        assert!(!cwd.join(format!("col/{stem}.svg")).exists());
    }
    ok(
        cwd,
        &[
            "plot", "run", "--out", "pick", "--flows", "beta", "--range", "1..3", "--log-y",
        ],
    );
    let svg = std::fs::read_to_string(cwd.join("pick/throughput.svg")).unwrap();
    assert!(
        svg.contains("\nbeta\n") && !svg.contains("alpha"),
        "only the chosen flow"
    );
    let record = std::fs::read_to_string(cwd.join("pick/figures.json")).unwrap();
    assert!(record.contains("--log-y") && record.contains("\"kind\": \"run\""));

    // Bad choices name what there is.
    let e = failed(cwd, &["plot", "run", "--flows", "gamma"]);
    assert!(
        e.contains("no flow gamma") && e.contains("alpha, beta"),
        "{e}"
    );
    let e = failed(cwd, &["plot", "run", "--links", "x->y"]);
    assert!(e.contains("no link x->y"), "{e}");
    let e = acclab(cwd, &["plot", "run", "--range", "3..1"]);
    assert!(!e.status.success() && text(&e).contains("end after it starts"));
    let e = failed(cwd, &["plot", "."]);
    assert!(e.contains("neither a run's directory"), "{e}");
    // A run's own figure options are checked before it simulates.
    let e = failed(
        cwd,
        &["run", &sc, "--plots", "--flows", "gamma", "--out", "r2"],
    );
    assert!(e.contains("no flow gamma"), "{e}");
    assert!(!cwd.join("r2/summary.json").exists());
}

#[test]
fn a_sweep_drawn_again_equals_its_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let sc = scenario(cwd);
    ok(cwd, &["sweep", &sc, "-q", "--out", "sw"]);
    ok(cwd, &["plot", "sw", "--out", "again"]);
    let charts: Vec<String> = std::fs::read_dir(cwd.join("sw"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    assert!(!charts.is_empty());
    for name in &charts {
        let (a, b) = (
            std::fs::read(cwd.join("sw").join(name)).unwrap(),
            std::fs::read(cwd.join("again").join(name)).unwrap(),
        );
        assert!(a == b, "{name} drawn again differs from the sweep's");
    }
    let e = failed(cwd, &["plot", "sw", "--range", "1..2"]);
    assert!(e.contains("is a sweep: --range"), "{e}");
}
