//! `acclab report DIR` (issue 54 §7): the page of a run, a sweep, a reproduction and a
//! directory of them holds the tables, the outcome of every check, the provenance and every
//! figure it names; a directory without results is refused, a report is never written over.
//! (python/tests/test_report.py loads the pages in headless Chromium.)

mod common;

use std::path::Path;

use common::{failed, ok, two_flows};

/// The page of `dir`'s report, after checking that every image it shows is a file of the
/// report that is an SVG document, and that report.json lists exactly those figures.
fn page(report: &Path) -> String {
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let srcs: Vec<&str> = html
        .split("<img src=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    for src in &srcs {
        let svg =
            std::fs::read_to_string(report.join(src)).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert!(svg.contains("<svg"), "{src} is not an SVG");
    }
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let listed: Vec<&str> = record["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(listed, srcs, "report.json's figures are the page's");
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    assert!(!html.contains("<script"), "the page runs nothing");
    html
}

#[test]
fn a_run_and_a_sweep_are_reported_with_tables_figures_and_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let sc = two_flows(cwd);
    ok(cwd, &["run", &sc, "--out", "run", "-q"]);
    let said = ok(cwd, &["report", "run"]);
    assert!(said.contains("run/report/index.html"), "{said}");
    let html = page(&cwd.join("run/report"));
    for want in [
        "<title>simulation of two</title>",
        "<td>alpha</td>",
        "<td>beta</td>",
        "<th class=\"num\">goodput Mb/s</th>",
        "<td>r-&gt;d</td>",
        "<img src=\"figures/throughput.svg\"",
        "<img src=\"figures/queue.svg\"",
        env!("CARGO_PKG_VERSION"),
        "<dt>command</dt><dd>",
        "two.toml --out run -q",
        "<summary>The scenario (scenario.toml)</summary>",
    ] {
        assert!(html.contains(want), "the run's page lacks {want:?}");
    }
    // A report is never written over, and a second one goes beside it.
    let again = ok(cwd, &["report", "run"]);
    assert!(again.contains("run/report-2/index.html"), "{again}");
    let e = failed(cwd, &["report", "run", "--out", "run/report"]);
    assert!(e.contains("--force"), "{e}");
    ok(
        cwd,
        &["report", "run", "--out", "run/report", "--force", "-q"],
    );

    ok(cwd, &["sweep", &sc, "-q", "--out", "sw"]);
    ok(cwd, &["report", "sw", "--out", "sw-page", "-q"]);
    let html = page(&cwd.join("sw-page"));
    for want in [
        "2 runs of two: 2 points over flow.beta.start × 1 seeds (1)",
        "<th>flow.beta.start</th>",
        "<td>throughput_bps</td>",
        "one seed",
        ".svg\" alt=",
    ] {
        assert!(html.contains(want), "the sweep's page lacks {want:?}");
    }
}

#[test]
fn reproductions_show_every_check_and_a_collection_sums_them_up() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    ok(
        cwd,
        &[
            "reproduce",
            "vegas-fig8",
            "--quick",
            "--out",
            "repro/vegas-fig8",
        ],
    );
    ok(
        cwd,
        &[
            "reproduce",
            "acc-fig2",
            "--quick",
            "--out",
            "repro/acc-fig2",
        ],
    );
    // A reproduction keeps how it was made.
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(cwd.join("repro/acc-fig2/provenance.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["experiment"], "acc-fig2");
    assert_eq!(record["quick"], true);

    ok(cwd, &["report", "repro/acc-fig2", "-q"]);
    let html = page(&cwd.join("repro/acc-fig2/report"));
    let comparison = std::fs::read_to_string(cwd.join("repro/acc-fig2/comparison.csv")).unwrap();
    let checks = comparison.lines().count() - 1;
    assert_eq!(html.matches("<tr class=\"pass\">").count(), checks);
    assert!(html.contains(&format!("PASS</span> {checks} of {checks} checks pass")));

    ok(cwd, &["report", "repro", "-q"]);
    let html = page(&cwd.join("repro/report"));
    for want in [
        "<title>acclab results: repro</title>",
        "2 of 2 reproductions pass",
        "<h2 id=\"acc-fig2\">acc-fig2 (quick): 000 Fig. 2",
        "<h2 id=\"vegas-fig8\">vegas-fig8 (quick)",
        "<tr class=\"unchecked\"><td>Reno retransmissions per flow",
        "information (002 Fig. 8 draws it",
        "<img src=\"figures/vegas-fig8/",
        "<img src=\"figures/acc-fig2/",
    ] {
        assert!(html.contains(want), "the collection's page lacks {want:?}");
    }
}

#[test]
fn a_directory_without_results_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    std::fs::create_dir(cwd.join("empty")).unwrap();
    let e = failed(cwd, &["report", "empty"]);
    assert!(e.contains("neither a run's directory"), "{e}");
    let e = failed(cwd, &["report", "nowhere"]);
    assert!(e.contains("nowhere: no such directory"), "{e}");
    assert!(!cwd.join("empty/report").exists());
}
