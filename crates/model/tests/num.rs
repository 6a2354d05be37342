//! On every example and quick reproduction scenario: the model's equilibrium is the theory's
//! (issue 23's first claim: where both the theory (NUM) and the model cover the scenario whole,
//! the model's fixed point gives every flow the NUM rate within 0.5%), and the model conserves
//! what it carries (bytes per flow, capacity per link).

use std::path::PathBuf;

fn scenario_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["scenarios/examples", "scenarios/repro"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // The reproductions' quick variants, and those that have none (they are quick).
            let quick = name.ends_with(".quick.toml")
                || !p
                    .with_file_name(name.replace(".toml", ".quick.toml"))
                    .exists();
            if name.ends_with(".toml") && (dir.ends_with("examples") || quick) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_models_fixed_point_is_the_num_solution() {
    let mut checked = Vec::new();
    for path in scenario_files() {
        let sc = acclab_scenario::load(&path).unwrap();
        let Ok(eq) = acclab_theory::predict(&sc) else {
            continue;
        };
        // Only scenarios the theory covers whole (every flow predicted but inelastic CBR).
        let whole = sc.flows.iter().zip(&eq.flows).all(|(f, p)| {
            p.is_some() || matches!(f.scheme, acclab_core::config::SchemeConfig::Cbr(_))
        });
        if !whole || eq.flows.iter().all(Option::is_none) {
            continue;
        }
        // Vegas flows that take the minimum RTT as baseRTT and start one after another
        // overestimate it (002 §4.2): their equilibrium is Theorem 3's, not the NUM of the true
        // delays — the model shows it (tests/vegas.rs), `predict` does not model it.
        let starts: std::collections::BTreeSet<u64> = sc
            .flows
            .iter()
            .filter(|f| match &f.scheme {
                acclab_core::config::SchemeConfig::Vegas(p) => {
                    p.base_rtt == acclab_core::config::BaseRttParam::Min
                }
                _ => false,
            })
            .map(|f| f.start.0)
            .collect();
        if starts.len() > 1 {
            continue;
        }
        let Ok(fp) = acclab_model::fixed_point(&sc) else {
            continue;
        };
        assert!(fp.settled, "{}: the model did not settle", path.display());
        for (i, p) in eq.flows.iter().enumerate() {
            let Some(p) = p else { continue };
            let x = fp.throughput_bps[i];
            let err = (x - p.throughput_bps).abs() / p.throughput_bps;
            assert!(
                err < 0.005,
                "{}: flow {}: model {:.4} Mb/s, theory {:.4} Mb/s ({:.2}% apart)",
                path.display(),
                p.id,
                x / 1e6,
                p.throughput_bps / 1e6,
                err * 100.0
            );
        }
        checked.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    eprintln!("checked: {}", checked.join(", "));
    assert!(checked.len() >= 5, "too few scenarios checked: {checked:?}");
}

/// The fluid creates no bytes and no capacity (issue 55 §3 reported Monaco flows delivering
/// 0.07–0.09% more than they sent): on every scenario in the model's domain, each flow delivers
/// at most what it sent less what it lost (to a packet, for the summary's rounding), both
/// ACC laws, and no link's utilisation is above 1 in any sample or over the window.
#[test]
fn the_model_creates_no_bytes_and_no_capacity() {
    let mut checked = 0;
    for path in scenario_files() {
        let sc = acclab_scenario::load(&path).unwrap();
        for acc_per_period in [false, true] {
            let settings = acclab_model::Settings {
                acc_per_period,
                ..Default::default()
            };
            let Ok((s, mem)) = acclab_model::run_in_memory(&sc, settings) else {
                continue;
            };
            let packet = u64::from(sc.packet_size);
            for f in &s.flows {
                assert!(
                    f.delivered_bytes + f.lost_packets * packet <= f.sent_bytes + packet,
                    "{} (per period: {acc_per_period}): flow {} delivered {} and lost {} packets \
                     of {} bytes sent",
                    path.display(),
                    f.id,
                    f.delivered_bytes,
                    f.lost_packets,
                    f.sent_bytes
                );
            }
            for l in &s.links {
                assert!(l.utilization <= 1.0 + 1e-9, "{}: {l:?}", path.display());
            }
            for row in &mem.links {
                assert!(
                    row.utilization <= 1.0 + 1e-9,
                    "{}: link {} at {} s: utilisation {}",
                    path.display(),
                    row.link,
                    row.t_s,
                    row.utilization
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} model runs checked");
}
