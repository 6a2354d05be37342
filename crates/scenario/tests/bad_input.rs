//! Every kind of bad scenario input gives its own error naming the file, the line and the key.

use acclab_scenario::{parse, ScenarioError};

const BASE: &str = r#"name = "t"
duration = "10s"

[[link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "2ms"
queue = { kind = "droptail", limit = "20pkt" }

[[link]]
from = "c"
to = "b"
rate = "10Mbps"
delay = "2ms"

[[flow]]
id = "f"
kind = "reno"
from = "a"
to = "b"
start = "1s"
"#;

/// Parses BASE with `from` replaced by `to` and returns the error.
fn error_with(from: &str, to: &str) -> ScenarioError {
    assert!(
        BASE.contains(from),
        "test edits a line that is not there: {from}"
    );
    let src = BASE.replacen(from, to, 1);
    match parse(&src, "bad.toml") {
        Ok(_) => panic!("accepted a bad scenario:\n{src}"),
        Err(e) => e,
    }
}

fn expect(e: &ScenarioError, line: usize, key: &str, words: &[&str]) {
    let shown = e.to_string();
    assert_eq!(e.file, "bad.toml", "{shown}");
    assert_eq!(e.line, Some(line), "wrong line in: {shown}");
    assert!(e.key.contains(key), "key {key:?} not in: {shown}");
    for w in words {
        assert!(shown.contains(w), "{w:?} not in: {shown}");
    }
}

#[test]
fn the_base_scenario_is_valid() {
    parse(BASE, "ok.toml").unwrap();
}

#[test]
fn unknown_key() {
    let e = error_with("start = \"1s\"", "start = \"1s\"\nstrat = \"2s\"");
    expect(&e, 22, "flow[0].strat", &["strat"]);
}

#[test]
fn unknown_key_in_params() {
    let e = error_with("start = \"1s\"", "start = \"1s\"\nparams = { ecm = true }");
    expect(&e, 22, "flow[0].params.ecm", &["ecm"]);
}

#[test]
fn unknown_queue_kind() {
    let e = error_with("kind = \"droptail\"", "kind = \"droptale\"");
    expect(&e, 8, "queue", &["droptale"]);
}

#[test]
fn bad_rate_unit() {
    let e = error_with("rate = \"10Mbps\"", "rate = \"10Mbs\"");
    expect(&e, 6, "rate", &["Mbs", "unit"]);
}

#[test]
fn duration_without_unit() {
    let e = error_with("delay = \"2ms\"", "delay = 2");
    expect(&e, 7, "delay", &["unit"]);
}

#[test]
fn zero_rate() {
    let e = error_with("rate = \"10Mbps\"", "rate = \"0Mbps\"");
    expect(&e, 6, "rate", &["greater than zero"]);
}

#[test]
fn negative_delay() {
    let e = error_with("delay = \"2ms\"", "delay = \"-2ms\"");
    expect(&e, 7, "delay", &["negative"]);
}

#[test]
fn zero_limit() {
    let e = error_with("limit = \"20pkt\"", "limit = \"0pkt\"");
    // The queue table is one inline value, so the key named is the queue.
    expect(
        &e,
        8,
        "link[0].queue",
        &["limit", "0pkt", "greater than zero"],
    );
}

#[test]
fn unknown_node() {
    let e = error_with("to = \"b\"\nstart", "to = \"z\"\nstart");
    expect(&e, 20, "flow[0].to", &["unknown node", "\"z\""]);
}

#[test]
fn unroutable_flow() {
    // Link c->b is one-way: data can reach b from c, but no ACK can come back.
    let e = error_with(
        "from = \"a\"\nto = \"b\"\nstart",
        "from = \"c\"\nto = \"b\"\nstart",
    );
    // The reverse path is missing: the key is the flow's source, where the ACKs must go.
    expect(
        &e,
        19,
        "flow[0].from",
        &[
            "no route",
            "\"b\" to \"c\" for its acknowledgements",
            "its data has a route",
        ],
    );
}

#[test]
fn explicit_path_over_a_missing_link() {
    let e = error_with(
        "start = \"1s\"",
        "start = \"1s\"\npath = [\"a\", \"c\", \"b\"]",
    );
    expect(&e, 22, "flow[0].path", &["no link a->c"]);
}

#[test]
fn stop_before_start() {
    let e = error_with("start = \"1s\"", "start = \"1s\"\nstop = \"500ms\"");
    expect(&e, 22, "flow[0].stop", &["stops at 500ms", "starts at 1s"]);
}

#[test]
fn start_after_the_end() {
    let e = error_with("start = \"1s\"", "start = \"11s\"");
    expect(&e, 21, "flow[0].start", &["after the end"]);
}

#[test]
fn duplicate_flow_ids() {
    let e = error_with("start = \"1s\"", "start = \"1s\"\ncount = 2");
    expect(&e, 17, "flow[0].id", &["used twice"]);
}

#[test]
fn unknown_link_in_event() {
    let e = error_with(
        "start = \"1s\"",
        "start = \"1s\"\n\n[[event]]\nat = \"5s\"\nset_delay = { link = \"a->z\", delay = \"5ms\" }",
    );
    expect(&e, 25, "event[0].set_delay.link", &["unknown link", "a->z"]);
}

#[test]
fn window_outside_the_run() {
    let e = error_with(
        "start = \"1s\"",
        "start = \"1s\"\n\n[output]\nwindow = [\"5s\", \"20s\"]",
    );
    expect(&e, 24, "output.window", &["from < to <= duration"]);
}

#[test]
fn missing_required_key() {
    let e = error_with(
        "rate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
        "delay = \"2ms\"\nqueue",
    );
    expect(&e, 4, "link", &["rate"]);
}

#[test]
fn syntax_error() {
    let e = error_with("id = \"f\"", "id = \"f");
    // A syntax error has no key path from serde: the table around the line and the key the
    // line writes name it.
    expect(&e, 17, "flow[0].id", &["string"]);
}

#[test]
fn duplicate_table() {
    let src = format!("{BASE}\n[output]\nsample_interval = \"5ms\"\n\n[output]\n");
    let e = parse(&src, "bad.toml").unwrap_err();
    expect(&e, 26, "output", &["duplicate"]);
    let e = error_with(
        "rate = \"10Mbps\"\ndelay",
        "rate = \"10Mbps\"\nrate = \"1Mbps\"\ndelay",
    );
    expect(&e, 7, "link[0].rate", &["duplicate"]);
}

#[test]
fn a_bad_value_inside_a_queue_names_its_own_key() {
    let e = error_with(
        "queue = { kind = \"droptail\", limit = \"20pkt\" }",
        "queue = { kind = \"red\", limit = \"20pkt\", min_th = \"5pkt\", max_th = \"15pkt\", wq = -1 }",
    );
    expect(&e, 8, "link[0].queue.wq", &["(0, 1], not -1"]);
    let e = error_with(
        "queue = { kind = \"droptail\", limit = \"20pkt\" }",
        "queue = { kind = \"bat\", limit = \"20pkt\", classes = [{ name = \"tcp\" }, { name = \"udp\", f_max = \"-1Mbps\" }] }",
    );
    expect(&e, 8, "link[0].queue.classes[1].f_max", &[]);
    let e = error_with(
        "queue = { kind = \"droptail\", limit = \"20pkt\" }",
        "queue = { kind = \"droptail\", limit = \"20pkt\", limt = 3 }",
    );
    expect(&e, 8, "link[0].queue.limt", &["limt"]);
}

#[test]
fn a_validation_error_in_params_names_the_parameter() {
    let e = error_with(
        "kind = \"reno\"",
        "kind = \"monaco\"\nparams = { kappa = -1 }",
    );
    assert_eq!(e.key, "flow[0].params.kappa", "{e}");
    let e = error_with(
        "kind = \"reno\"",
        "kind = \"web\"\nparams = { users = 2, monaco = { weight = 0 } }",
    );
    assert_eq!(e.key, "flow[0].params.monaco.weight", "{e}");
}

#[test]
fn trace_names_what_it_cannot_find() {
    let with = |t: &str| {
        error_with(
            "start = \"1s\"\n",
            &format!("start = \"1s\"\n[output]\n{t}\n"),
        )
    };
    expect(
        &with(r#"trace = { links = ["a->b", "b->z"] }"#),
        23,
        "output.trace.links[1]",
        &["unknown link \"b->z\""],
    );
    expect(
        &with(r#"trace = { flows = ["g"] }"#),
        23,
        "output.trace.flows[0]",
        &["unknown flow \"g\""],
    );
    expect(&with("trace = {}"), 23, "output.trace", &["name the links"]);
    expect(
        &with(r#"trace = { links = ["a->b"], format = "csv", capture = "queue" }"#),
        23,
        "output.trace.capture",
        &["a pcap trace's", "every event"],
    );
    expect(
        &with(r#"trace = { links = ["a->b"], capture = "tap" }"#),
        23,
        "output.trace",
        &["tap", "wire", "queue", "both"],
    );
    expect(
        &with(r#"plot_links = ["a->b", "x->y"]"#),
        23,
        "output.plot_links[1]",
        &["unknown link \"x->y\""],
    );
    expect(
        &with(r#"trace = { links = ["a->b"], format = "pdf" }"#),
        23,
        "output.trace.format",
        &["pcap", "csv"],
    );
    let ok = BASE.replacen(
        "start = \"1s\"\n",
        "start = \"1s\"\n[output]\ntrace = { links = [\"b->a\"], flows = [\"f\"], format = \"csv\" }\n",
        1,
    );
    let t = parse(&ok, "ok.toml").unwrap().output.trace.unwrap();
    assert_eq!(
        (t.links.len(), t.flows, t.format),
        (1, vec![0], acclab_scenario::TraceFormat::Csv)
    );
}

/// Issue 21 §1: values that were accepted and then hung a run, exhausted memory or gave NaN.
/// Each is refused, naming the key and the allowed range.
#[test]
fn out_of_range_values_that_hung_or_poisoned_runs_are_refused() {
    let queue = r#"queue = { kind = "droptail", limit = "20pkt" }"#;
    let reno = "kind = \"reno\"";
    let cases: [(&str, &str, usize, &str, &str); 17] = [
        (queue, r#"queue = { kind = "red", limit = "20pkt", min_th = "5pkt", max_th = "15pkt", max_p = nan }"#, 8, "queue.max_p", "[0, 1], not NaN"),
        (queue, r#"queue = { kind = "red", limit = "20pkt", min_th = "5pkt", max_th = "15pkt", wq = 1e308 }"#, 8, "queue.wq", "(0, 1], not 1e308"),
        (queue, r#"queue = { kind = "rem", limit = "20pkt", phi = nan }"#, 8, "queue.phi", "not NaN"),
        (queue, r#"queue = { kind = "rem", limit = "20pkt", mu = nan }"#, 8, "queue.mu", "not NaN"),
        (queue, r#"queue = { kind = "rem", limit = "20pkt", interval = "1ns" }"#, 8, "queue.interval", "at least 10us"),
        (queue, r#"queue = { kind = "bat", limit = "20pkt", classes = [{ name = "tcp", c = nan }] }"#, 8, "classes[0].c", "[0, 1]"),
        (queue, r#"queue = { kind = "bat", limit = "20pkt", interval = "0s", classes = [{ name = "tcp" }] }"#, 8, "queue.interval", "at least 10us"),
        (queue, r#"queue = { kind = "droptail", limit = "100B" }"#, 8, "queue.limit", "cannot hold one 1000-byte packet"),
        ("rate = \"10Mbps\"", "rate = \"9e18bps\"", 6, "rate", "10000Gbps"),
        (reno, "kind = \"vegas\"\nparams = { alpha = inf, beta = inf, gamma = inf }", 19, "params.alpha", "(0, 1000000], not inf"),
        (reno, "kind = \"reno\"\nparams = { initial_window = 4294967295 }", 19, "params.initial_window", "[1, 1000000]"),
        (reno, "kind = \"monaco\"\nparams = { weight = 1e308 }", 19, "params.weight", "not 1e308"),
        (reno, "kind = \"monaco\"\nparams = { initial_window = \"1e18B\" }", 19, "params.initial_window", "[1, 1073741824]"),
        (reno, "kind = \"web\"\nparams = { users = 4294967295 }", 19, "params.users", "[1, 1000000]"),
        (reno, "kind = \"cbr\"\nparams = { rate = \"9e18bps\" }", 19, "params.rate", "10000Gbps"),
        (reno, "kind = \"cbr\"\nparams = { rate = \"1Mbps\", repeat = \"1ns\" }", 19, "params.repeat", "at least 10us"),
        (reno, "kind = \"cbr\"\nparams = { rate = \"1Mbps\", schedule = [{ at = \"2s\", rate = \"2Mbps\" }, { at = \"1s\" }] }", 19, "params.schedule[1].at", "must increase"),
    ];
    for (from, to, line, key, words) in cases {
        let e = error_with(from, to);
        expect(&e, line, key, &[words]);
    }
    let e = error_with(
        "start = \"1s\"",
        "start = \"1s\"\n[output]\nsample_interval = \"1ns\"",
    );
    expect(&e, 23, "output.sample_interval", &["at least 100us"]);
}

/// Issue 21 §1: `acclab check /dev/zero` read until memory ran out. Files past the bound are
/// refused after reading just past it.
#[test]
fn endless_or_huge_files_are_refused_before_being_read_whole() {
    let e = acclab_scenario::load(std::path::Path::new("/dev/zero")).unwrap_err();
    assert!(e.message.contains("larger than 16 MiB"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(acclab_scenario::file::MAX_FILE_BYTES + 1)
        .unwrap();
    let e = acclab_scenario::load(&big).unwrap_err();
    assert!(e.message.contains("larger than"), "{e}");
}

/// Issue 21 §1: `count = 1000000000` in a group made `acclab check` itself use 3.7 GB.
#[test]
fn groups_too_large_to_hold_are_refused_before_expanding() {
    let e = error_with("id = \"f\"", "count = 4294967295\nid = \"f{i}\"");
    expect(&e, 17, "flow[0].count", &["[0, 2000000]"]);
    let e = error_with(
        "[[flow]]",
        "[[link]]\ncount = 1500000\nbetween = [\"x{i}\", \"b\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\n[[flow]]",
    );
    expect(&e, 17, "link[2].count", &["at most 2000000"]);
}

/// Issue 55 §1: inputs that were accepted and should not be, each refused with its key and the
/// allowed range or the contradiction; and the ones accepted on purpose, accepted.
#[test]
fn inputs_accepted_by_mistake_are_refused() {
    let between = r#"between = ["a", "b"]"#;
    let queue = r#"queue = { kind = "droptail", limit = "20pkt" }"#;
    let reno = "kind = \"reno\"";
    let bat = |classes: &str| {
        format!(r#"queue = {{ kind = "bat", limit = "20pkt", classes = [{classes}] }}"#)
    };
    let cases: Vec<(&str, String, usize, &str, &str)> = vec![
        (between, r#"between = ["a", "b", "c"]"#.into(), 5, "link[0].between", "exactly two nodes"),
        (between, r#"between = ["a", "b", "a", "b"]"#.into(), 5, "link[0].between", "not 4"),
        (between, r#"between = ["a"]"#.into(), 5, "link[0].between", "not 1"),
        (queue, r#"queue = { kind = "step-ecn", limit = "20pkt", threshold = "999B" }"#.into(), 8, "queue.threshold", "at least one 1000-byte packet"),
        (queue, r#"queue = { kind = "step-ecn", limit = "20pkt", threshold = "20pkt" }"#.into(), 8, "queue.threshold", "below the buffer"),
        (queue, bat(r#"{ name = "tcp", f_min = "20Mbps", f_max = "1Mbps" }"#), 8, "queue.classes[0].f_min", "above its f_max"),
        (queue, bat(r#"{ name = "tcp", f_min = "20Mbps" }"#), 8, "queue.classes[0].f_min", "above the link's rate (10Mbps)"),
        (queue, bat(r#"{ name = "tcp", f_min = "6Mbps" }, { name = "udp", f_min = "6Mbps" }"#), 8, "queue.classes[1].f_min", "add up to 12Mbps"),
        (reno, "kind = \"onoff\"\nparams = { vegas = { initial_window = 0 } }".into(), 19, "params.vegas.initial_window", "[1, 1000000]"),
        (reno, "kind = \"onoff\"\nparams = { vegas = { initial_window = 1000000000000 } }".into(), 19, "params.vegas.initial_window", "[1, 1000000]"),
        (reno, "kind = \"vegas\"\nparams = { initial_window = 0 }".into(), 19, "params.initial_window", "[1, 1000000]"),
        (reno, "kind = \"web\"\nparams = { users = 2, initial_window = 0 }".into(), 19, "params.initial_window", "[1, 1000000]"),
        (reno, "kind = \"command\"\nparams = { client = 07:32:00 }".into(), 19, "params.client", "date or time literal"),
        ("start = \"1s\"", "start = 1979-05-27".into(), 21, "flow[0].start", "date or time literal"),
        ("start = \"1s\"", "start = \"1s\"\npath = [\"a\", \"b\", \"a\", \"b\"]".into(), 22, "flow[0].path", "visits \"a\" twice"),
        ("start = \"1s\"", "start = \"1s\"\n[[event]]\nat = \"2s\"\nset_rate = { link = \"a->b\", rate = \"20Tbps\" }".into(), 24, "event[0].set_rate.rate", "not in [1 bps, 10000Gbps]"),
        ("duration = \"10s\"", "duration = \"10s\"\nseed = 9223372036854775808".into(), 3, "seed", "[0, 9223372036854775807]"),
    ];
    for (from, to, line, key, words) in cases {
        let e = error_with(from, &to);
        expect(&e, line, key, &[words]);
    }
    // Accepted on purpose (docs/reference.md, "Units" and the ranges): microseconds written µs or μs, a
    // link at the top rate beside slow ones, the largest seed, a byte threshold of one packet.
    for (from, to) in [
        ("delay = \"2ms\"", "delay = \"10\u{b5}s\""),
        ("delay = \"2ms\"", "delay = \"10\u{3bc}s\""),
        ("rate = \"10Mbps\"", "rate = \"10Tbps\""),
        (
            "duration = \"10s\"",
            "duration = \"10s\"\nseed = 9223372036854775807",
        ),
        (
            queue,
            r#"queue = { kind = "step-ecn", limit = "20pkt", threshold = "1000B" }"#,
        ),
    ] {
        let src = BASE.replacen(from, to, 1);
        assert!(parse(&src, "ok.toml").is_ok(), "refused:\n{src}");
    }
}

/// Issue 55 §6: errors that named the wrong key, no line, or a key where there is none.
#[test]
fn errors_name_the_key_the_user_must_edit() {
    let queue = r#"queue = { kind = "droptail", limit = "20pkt" }"#;
    // A duplicate key inside an inline table: the duplicated key, not its table.
    let e = error_with(
        queue,
        r#"queue = { kind = "droptail", limit = "20pkt", limit = "30pkt" }"#,
    );
    expect(&e, 8, "link[0].queue.limit", &["duplicate"]);
    let e = error_with(
        "kind = \"reno\"",
        "kind = \"vegas\"\nparams = { alpha = 1, beta = 2, alpha = 3 }",
    );
    expect(&e, 19, "flow[0].params.alpha", &["duplicate"]);
    let e = error_with(
        queue,
        r#"queue = { kind = "bat", limit = "20pkt", classes = [{ name = "a" }, { c = 0.1, name = "b", name = "c" }] }"#,
    );
    expect(&e, 8, "link[0].queue.classes[1].name", &["duplicate"]);
    // An unknown variant of a parameter: that parameter, not the queue's kind.
    let e = error_with(
        queue,
        r#"queue = { kind = "avq", limit = "20pkt", avd_stamp = "some" }"#,
    );
    expect(&e, 8, "link[0].queue.avd_stamp", &["some"]);
    assert_eq!(e.key, "link[0].queue.avd_stamp");
    let e = error_with(queue, r#"queue = { kind = "droptale", limit = "20pkt" }"#);
    assert_eq!(e.key, "link[0].queue.kind");

    let dir = tempfile::tempdir().unwrap();
    // Not UTF-8: the line (and column) of the first bad byte; no key.
    let bad = dir.path().join("latin1.toml");
    std::fs::write(&bad, b"name = \"t\"\nduration = \"10s\"\n# caf\xe9\n").unwrap();
    let e = acclab_scenario::load(&bad).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (Some(3), ""), "{e}");
    assert!(
        e.to_string()
            .contains(":3: the file is not UTF-8 text: byte 0xe9 at column 6"),
        "{e}"
    );
    // A missing file: no key to name, and none printed.
    let e = acclab_scenario::load(&dir.path().join("missing.toml")).unwrap_err();
    assert!(e.key.is_empty() && !e.to_string().contains("key"), "{e}");
}

/// Issue 53 §1: a link's capacity trace, loss model and jitter, each refused with its key.
#[test]
fn link_traces_loss_models_and_jitter_name_their_keys() {
    let rate = "rate = \"10Mbps\"\ndelay = \"2ms\"\nqueue";
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.down").display().to_string();
    let e = error_with(
        rate,
        &format!("rate = {{ trace = {missing:?} }}\ndelay = \"2ms\"\nqueue"),
    );
    expect(
        &e,
        6,
        "link[0].rate.trace",
        &["cannot read the capacity trace", "none.down"],
    );
    let bad = dir.path().join("bad.down");
    std::fs::write(&bad, "1\n2\n1\n").unwrap();
    let bad = bad.display().to_string();
    let e = error_with(
        rate,
        &format!("rate = {{ trace = {bad:?} }}\ndelay = \"2ms\"\nqueue"),
    );
    expect(
        &e,
        6,
        "link[0].rate.trace",
        &["line 3", "must not decrease"],
    );
    let e = error_with(rate, "rate = { trace = 3 }\ndelay = \"2ms\"\nqueue");
    expect(&e, 6, "link[0].rate", &[]);
    let e = error_with(rate, "rate = { file = \"x\" }\ndelay = \"2ms\"\nqueue");
    expect(&e, 6, "link[0].rate", &["unknown field `file`"]);
    // Loss: a probability, or Gilbert–Elliott with its four parameters.
    let e = error_with(
        rate,
        "loss = 1.5\nrate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
    );
    expect(&e, 6, "link[0].loss", &["1.5", "[0, 1)"]);
    let e = error_with(
        rate,
        "loss = { model = \"gilbert-elliott\", p = 0.1, r = 2.0 }\nrate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
    );
    expect(&e, 6, "link[0].loss.r", &["2", "[0, 1]"]);
    let e = error_with(
        rate,
        "loss = { model = \"markov\", p = 0.1, r = 0.2 }\nrate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
    );
    expect(&e, 6, "link[0].loss", &["unknown loss model"]);
    let e = error_with(
        rate,
        "jitter = { amount = \"0ms\" }\nrate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
    );
    expect(&e, 6, "link[0].jitter.amount", &["0"]);
    let e = error_with(
        rate,
        "jitter = { amount = \"1ms\", distribution = \"gamma\" }\nrate = \"10Mbps\"\ndelay = \"2ms\"\nqueue",
    );
    expect(&e, 6, "link[0].jitter.distribution", &["gamma"]);
    // An event cannot set the rate of a link that follows a trace.
    let good = dir.path().join("good.down");
    std::fs::write(&good, "1\n").unwrap();
    let good = good.display().to_string();
    let src = BASE.replacen(
        rate,
        &format!("rate = {{ trace = {good:?} }}\ndelay = \"2ms\"\nqueue"),
        1,
    ) + "[[event]]\nat = \"1s\"\nset_rate = { link = \"a->b\", rate = \"5Mbps\" }\n";
    let e = parse(&src, "bad.toml").unwrap_err();
    assert!(e.to_string().contains("follows the capacity trace"), "{e}");
    // A delay trace: its line named; an event cannot set such a link's delay.
    let bad_delay = dir.path().join("bad.delay");
    std::fs::write(&bad_delay, "0 10\n5 x\n").unwrap();
    let bad_delay = bad_delay.display().to_string();
    let e = error_with(
        rate,
        &format!("rate = \"10Mbps\"\ndelay = {{ trace = {bad_delay:?} }}\nqueue"),
    );
    expect(&e, 7, "link[0].delay.trace", &["line 2", "\"x\""]);
    let delays = dir.path().join("good.delay");
    std::fs::write(&delays, "0 10\n500 30\n").unwrap();
    let delays = delays.display().to_string();
    let src = BASE.replacen(
        rate,
        &format!("rate = \"10Mbps\"\ndelay = {{ trace = {delays:?} }}\nqueue"),
        1,
    ) + "[[event]]\nat = \"1s\"\nset_delay = { link = \"a->b\", delay = \"5ms\" }\n";
    let e = parse(&src, "bad.toml").unwrap_err();
    assert!(e.to_string().contains("follows the delay trace"), "{e}");
    // A trace path is relative to the scenario file.
    let sc = BASE.replacen(
        rate,
        "rate = { trace = \"good.down\" }\ndelay = \"2ms\"\nqueue",
        1,
    );
    let file = dir.path().join("s.toml");
    std::fs::write(&file, sc).unwrap();
    let s = acclab_scenario::load(&file).unwrap();
    assert_eq!(s.links[0].rate.bps(), 12_000_000);
    // `between` gives both directions the trace; the other link has none.
    assert!(s.links[1].capacity.is_some() && s.links[2].capacity.is_none());
}
