"""The Python package against the command line: scenarios, errors, runs, sweeps."""

import json
import pickle
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import acclab
from conftest import ROOT, SMALL

# A k = 4 fat-tree without traffic, and with one flow across it.
FABRIC_TOPOLOGY = """
name = "ft"
duration = "5ms"
[routing]
ecmp = "flow"
[topology]
kind = "fat-tree"
k = 4
link_rate = "10Gbps"
link_delay = "1us"
"""
FABRIC = (
    FABRIC_TOPOLOGY
    + """[[flow]]
id = "f"
kind = "dctcp"
from = "h0"
to = "h15"
"""
)


def test_load_set_and_round_trip(small_file: Path):
    sc = acclab.load(small_file)
    assert sc.name == "small" and sc.flows == ["a", "b"] and "r->d" in sc.links
    sc.set('link."r->d".rate', "10Mbps")
    sc.set("flow.a.params.initial_window", 4)
    text = sc.to_toml()
    assert 'rate = "10Mbps"' in text and "initial_window = 4" in text
    again = acclab.parse(text)
    assert again.to_toml() == text
    # A Scenario pickles (it goes to Dask workers and subprocesses as its text).
    assert pickle.loads(pickle.dumps(sc)).to_toml() == text
    sc.update({"duration": "1s", "output.window": ["0.2s", "1s"]})
    assert sc.duration_s == 1.0


def test_errors_carry_file_line_and_key(small_file: Path, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.replace('limit = "50pkt"', 'limit = "-5pkt"'))
    with pytest.raises(acclab.ScenarioError) as e:
        acclab.load(bad)
    assert e.value.file == str(bad) and e.value.line == 16
    assert e.value.key == "link[1].queue.limit", e.value
    sc = acclab.load(small_file)
    before = sc.to_toml()
    with pytest.raises(acclab.ScenarioError) as e:
        sc.set("flow.a.params.initial_window", 0)
    assert e.value.key == "flow.a.params.initial_window" and e.value.line is None
    assert "[1, 1000000]" in e.value.message
    assert sc.to_toml() == before, "a refused value changed the scenario"
    with pytest.raises(acclab.ScenarioError, match="no flow"):
        sc.set("flow.nope.start", "1s")
    with pytest.raises(TypeError):
        sc.set("duration", object())
    # The error is a ValueError and pickles with its fields (Dask sends errors back).
    err = pickle.loads(pickle.dumps(e.value))
    assert isinstance(err, ValueError) and err.key == "flow.a.params.initial_window"


def test_builder_mirrors_the_file():
    built = (
        acclab.Builder("small", "2s")
        .seed(7)
        .duplex("s", "r", "100Mbps", "1ms")
        .duplex("r", "d", "20Mbps", "10ms", {"kind": "droptail", "limit": "50pkt"}, loss=0.0005)
        .flow("a", "reno", "s", "d", start_jitter="200ms")
        .flow("b", "reno", "s", "d", start_jitter="200ms")
        .window("0.5s", "2s")
        .build()
    )
    assert built.to_toml() == acclab.parse(SMALL).to_toml()
    with pytest.raises(ValueError, match="unknown"):
        acclab.Builder("x", "1s").flow("f", "no-such-scheme", "a", "b")
    with pytest.raises(acclab.ScenarioError, match="unknown node|no link"):
        acclab.Builder("x", "1s").duplex("a", "b", "1Mbps", "1ms").flow("f", "reno", "a", "zz").build()


def test_run_gives_the_command_lines_numbers(small_file: Path, tmp_path: Path, acclab_bin: str):
    sc = acclab.load(small_file)
    r = acclab.run(sc, seed=3, progress=False)
    out = tmp_path / "cli"
    subprocess.run([acclab_bin, "run", str(small_file), "--seed", "3", "--out", str(out), "--quiet"], check=True)
    cli = json.loads((out / "summary.json").read_text())
    ours = r.summary_json
    for k in ("events", "packet_hops", "flows", "links", "fairness"):
        assert ours[k] == cli[k], k
    pd.testing.assert_frame_equal(r.flows, pd.read_csv(out / "flows.csv"))
    pd.testing.assert_frame_equal(r.links, pd.read_csv(out / "links.csv"))
    flows = r.summary[r.summary.entity == "flow"].set_index("id")
    for f in cli["flows"]:
        assert flows.loc[f["id"], "throughput_bps"] == f["throughput_bps"]
        assert flows.loc[f["id"], "lost_packets"] == f["lost_packets"]
    assert set(r.flow("a").flow) == {"a"}


def test_model_gives_the_command_lines_files(tmp_path: Path, acclab_bin: str):
    path = ROOT / "scenarios/examples/parking-lot.toml"
    sc = acclab.load(path)
    m = acclab.model(sc, out=tmp_path / "py", progress=False)
    out = tmp_path / "cli"
    subprocess.run([acclab_bin, "model", str(path), "--out", str(out), "--quiet"], check=True)
    cli = json.loads((out / "summary.json").read_text())
    assert m.summary_json["mode"] == cli["mode"] == "model"
    for k in ("events", "flows", "links", "fairness"):
        assert m.summary_json[k] == cli[k], k
    pd.testing.assert_frame_equal(m.flows, pd.read_csv(out / "flows.csv"))
    pd.testing.assert_frame_equal(m.links, pd.read_csv(out / "links.csv"))
    assert m.theory is not None and m.dir == tmp_path / "py"
    # The same columns as a simulated run's.
    r = acclab.run(sc, progress=False)
    assert list(m.flows.columns) == list(r.flows.columns)
    # A coarser step, one class per flow: other figures, same shape.
    each = acclab.model(sc, step="2ms", grouping="each", progress=False)
    assert each.summary_json["events"] != m.summary_json["events"]
    assert len(each.flows) == len(m.flows)


def test_model_refuses_what_it_cannot_integrate(small_file: Path):
    sc = acclab.load(small_file)
    # The small scenario's bottleneck drops at random: no fluid law for that.
    with pytest.raises(ValueError, match="random loss"):
        acclab.model(sc, progress=False)
    sc.set('link."r->d".loss', 0.0)
    sc.set('link."d->r".loss', 0.0)
    with pytest.raises(ValueError, match="step"):
        acclab.model(sc, step="0s", progress=False)
    with pytest.raises(ValueError, match="one of each, identical, homogeneous"):
        acclab.model(sc, grouping="some", progress=False)
    assert acclab.model(sc, progress=False).summary_json["mode"] == "model"


def sweep_args(small_file: Path) -> list[str]:
    return [
        str(small_file),
        "--set",
        'link."r->d".rate=10Mbps,20Mbps',
        "--set",
        "flow.a.params.initial_window=2,10",
        "--seeds",
        "3",
    ]


GRID = {'link."r->d".rate': "10Mbps,20Mbps", "flow.a.params.initial_window": [2, 10]}


def test_sweep_frame_is_the_command_lines_table(small_file: Path, tmp_path: Path, acclab_bin: str):
    sc = acclab.load(small_file)
    df, agg = acclab.sweep(sc, grid=GRID, seeds=3, progress=False, aggregate=True)
    out = tmp_path / "cli"
    subprocess.run([acclab_bin, "sweep", *sweep_args(small_file), "--out", str(out), "--quiet"], check=True)
    pd.testing.assert_frame_equal(df, pd.read_csv(out / "runs.csv"))
    pd.testing.assert_frame_equal(agg, pd.read_csv(out / "aggregate.csv"))
    assert len(df) == 2 * 2 * 3 * (1 + 2 + 4)  # runs × (the run, 2 flows, 4 links)
    # A run's own summary is its rows in the sweep.
    r = acclab.run(acclab.load(small_file), seed=8, progress=False)
    sc2 = acclab.load(small_file)
    sc2.set('link."r->d".rate', "10Mbps")
    sc2.set("flow.a.params.initial_window", 2)
    r = acclab.run(sc2, seed=8, progress=False)
    row = df[(df.seed == 8) & (df.id == "a") & (df['link."r->d".rate'] == "10Mbps") & (df["flow.a.params.initial_window"] == 2)]
    assert len(row) == 1
    assert row.throughput_bps.iloc[0] == r.summary_json["flows"][0]["throughput_bps"]


def test_sweep_errors_name_the_point(small_file: Path):
    sc = acclab.load(small_file)
    with pytest.raises(acclab.ScenarioError) as e:
        acclab.sweep(sc, grid={"flow.a.params.initial_window": [4, 0]}, progress=False)
    assert e.value.key == "flow.a.params.initial_window"
    assert e.value.message.startswith("sweep point 1 (flow.a.params.initial_window = 0)")
    with pytest.raises(ValueError, match="A..B/N"):
        acclab.sweep(sc, grid={"duration": "1s..2s"}, progress=False)
    with pytest.raises(ValueError, match="seeds"):
        acclab.sweep(sc, grid={"seed": [1, 2]}, progress=False)


def test_sweep_into_a_directory_resumes(small_file: Path, tmp_path: Path):
    sc = acclab.load(small_file)
    d = tmp_path / "s"
    first = acclab.sweep(sc, grid=GRID, seeds=2, out=d, progress=False)
    records = {p.name: p.read_bytes() for p in (d / "runs").glob("*.json")}
    assert len(records) == 8
    again = acclab.sweep(sc, grid=GRID, seeds=2, out=d, progress=False)
    pd.testing.assert_frame_equal(first, again)
    assert {p.name: p.read_bytes() for p in (d / "runs").glob("*.json")} == records
    assert (d / "throughput_bps-vs-r-_d.rate.png").is_file()


def test_the_example_script_runs(tmp_path: Path):
    import sys

    out = tmp_path / "ex"
    subprocess.run(
        [sys.executable, str(ROOT / "examples/python/weight_sweep.py"), "--quick", "--out", str(out)],
        check=True,
        cwd=tmp_path,
    )
    ratio = pd.read_csv(out / "ratio.csv")
    assert set(ratio.bottleneck) == {"FIFO", "AVQ+VD"}
    # Flow 0 with weight 10 gets several times what a weight-1 loop gets (the 20 s run is short
    # of the equilibrium's 10; the full run, without --quick, is the figure).
    w10 = ratio[ratio["flow.f0.params.weight"] == 10]["mean"]
    assert (w10 > 5).all(), ratio
    for f in ("weight-sweep.csv", "weight-sweep.png", "weight-sweep.pdf"):
        assert (out / f).stat().st_size > 0, f


def test_a_workload_run_gives_its_completion_times():
    sc = acclab.parse(
        FABRIC_TOPOLOGY.replace('duration = "5ms"', 'duration = "20ms"')
        + """queue = { kind = "step-ecn", limit = "200pkt", threshold = "20pkt" }
[[workload]]
id = "ws"
kind = "dctcp"
params = { initial_window = 10 }
sizes = "websearch"
load = 0.2
stop = "10ms"
"""
    )
    r = acclab.run(sc)
    # The workload's flows are drawn when the scenario resolves: the run has them, the
    # scenario as written lists none. summary.json counts them ([output] flow_summaries, off
    # with a workload), fct.csv lists them.
    n = r.summary_json["unlisted_flows"]
    assert sc.flows == [] and r.summary_json["flows"] == [] and n > 10
    assert r.fct is not None and len(r.fct) == n
    done = r.fct.dropna(subset=["fct_s"])
    assert (done["slowdown"] >= 1 - 1e-9).all()
    assert r.summary_json["fct"]["overall"]["flows"] == n
    # A run without finite flows has none.
    assert acclab.run(acclab.load(ROOT / "scenarios/examples/demo.toml")).fct is None


def test_a_run_from_python_keeps_its_effective_scenario(small_file: Path, tmp_path: Path):
    # Issue 54 §1: a run with files keeps scenario.toml (seeded) and provenance.json, and
    # summary.json points to them; the effective scenario run again gives the same files.
    sc = acclab.load(small_file)
    first = acclab.run(sc, seed=5, out=tmp_path / "a", progress=False)
    assert first.summary_json["provenance"] == {"scenario": "scenario.toml", "record": "provenance.json"}
    record = json.loads((tmp_path / "a" / "provenance.json").read_text())
    assert record["seed"] == 5 and record["acclab"]["version"]
    again = acclab.load(tmp_path / "a" / "scenario.toml")
    acclab.run(again, out=tmp_path / "b", progress=False)
    for name in ["flows.csv", "links.csv"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name



def test_topology_keys_patch_and_survive_pickling():
    sc = acclab.parse(FABRIC)
    assert len(sc.links) == 96
    sc.set('link."h0->edge0_0".rate', "25Gbps")
    sc.set("topology.k", 6)
    assert len(sc.links) == 2 * 162 and "h53->edge5_2" in sc.links
    # A Scenario travels as its text (Dask, subprocesses): the fabric goes as its
    # [topology], so the copy patches the same way.
    copy = pickle.loads(pickle.dumps(sc))
    assert "[topology]" in copy.to_toml() and "[[link]]" not in copy.to_toml()
    copy.set("topology.k", 8)
    assert len(copy.links) == 2 * 384
    assert 'rate = "25Gbps"' in copy.to_toml()
    with pytest.raises(acclab.ScenarioError) as e:
        copy.set("topology.k", 7)
    assert e.value.key == "topology.k" and "even" in e.value.message


def test_builder_makes_the_fabric_the_file_makes():
    built = (
        acclab.Builder("ft", "5ms")
        .topology(
            "fat-tree",
            "10Gbps",
            "1us",
            {"kind": "droptail", "limit": "200pkt"},
            k=4,
            tiers={"core": {"rate": "40Gbps"}},
        )
        .ecmp("flow")
        .flow("f", "dctcp", "h0", "h15")
        .build()
    )
    text = FABRIC.replace(
        'link_delay = "1us"',
        'link_delay = "1us"\nqueue = { kind = "droptail", limit = "200pkt" }\ncore = { rate = "40Gbps" }',
    )
    parsed = acclab.parse(text)
    assert built.links == parsed.links and len(built.links) == 96
    # The same links, rates included: the builder's scenario lists them, the file's keeps its
    # [topology]; both read as the same scenario.
    assert acclab.parse(built.to_toml()).to_toml() == built.to_toml()
    assert 'rate = "40Gbps"' in built.to_toml()
    for bad, says in [
        ({"kind": "fat-tree", "rate_": "1Gbps", "delay": "1us"}, "needs `k`"),
        ({"kind": "ring", "rate_": "1Gbps", "delay": "1us"}, "unknown kind"),
        ({"kind": "fat-tree", "rate_": "1Gbps", "delay": "1us", "k": 4, "leaves": 2}, "not a key"),
        (
            {"kind": "fat-tree", "rate_": "1Gbps", "delay": "1us", "k": 4, "tiers": {"spine": {}}},
            "no tier",
        ),
    ]:
        with pytest.raises(ValueError, match=says):
            acclab.Builder("b", "1s").topology(**bad)
    with pytest.raises(ValueError, match="not one of"):
        acclab.Builder("b", "1s").ecmp("sometimes")


def test_builder_makes_the_workload_and_shared_buffers_the_file_makes():
    built = (
        acclab.Builder("ft", "5ms")
        .topology("fat-tree", "10Gbps", "1us", k=4)
        .ecmp("flow")
        .workload({"id": "ws", "kind": "dctcp", "sizes": "websearch", "load": 0.3, "params": {"initial_window": 10}})
        .workload({"id": "in", "kind": "dctcp", "pattern": "incast", "senders": 4, "size": "32KB", "period": "1ms"})
        .shared_buffer(["edge0_0", "edge0_1"], "512KB", alpha=2.0)
        .build()
    )
    text = FABRIC_TOPOLOGY + """[[workload]]
id = "ws"
kind = "dctcp"
sizes = "websearch"
load = 0.3
params = { initial_window = 10 }
[[workload]]
id = "in"
kind = "dctcp"
pattern = "incast"
senders = 4
size = "32KB"
period = "1ms"
[[shared_buffer]]
nodes = ["edge0_0", "edge0_1"]
size = "512KB"
alpha = 2.0
"""
    parsed = acclab.parse(text)
    a = acclab.run(built, progress=False)
    b = acclab.run(parsed, progress=False)
    strip = lambda s: {k: v for k, v in s.items() if k != "wall_time_s"}
    assert strip(a.summary_json) == strip(b.summary_json)
    assert a.summary_json["unlisted_flows"] > 4  # the workloads made flows
    for bad, says in [
        ({"id": "w", "kind": "dctcp", "sizes": "websearch", "load": 0.3, "colour": 1}, "colour"),
        ({"id": "w", "kind": "nope", "sizes": "websearch", "load": 0.3}, "unknown kind"),
    ]:
        with pytest.raises(ValueError, match=says):
            acclab.Builder("b", "1s").workload(bad)
    with pytest.raises(ValueError, match="size"):
        acclab.Builder("b", "1s").shared_buffer(["s"], "lots")


def test_a_run_on_two_threads_gives_the_serial_runs_results():
    # Four flows across the fabric's pods: the parallel engine (acclab run --threads).
    text = FABRIC_TOPOLOGY + "".join(
        f'[[flow]]\nid = "f{i}"\nkind = "dctcp"\nfrom = "h{i}"\nto = "h{15 - i}"\n' for i in range(4)
    )
    serial = acclab.run(acclab.parse(text), progress=False, threads=1)
    parallel = acclab.run(acclab.parse(text), progress=False, threads=2)
    strip = lambda s: {k: v for k, v in s.items() if k != "wall_time_s"}
    assert strip(parallel.summary_json) == strip(serial.summary_json)
    assert parallel.summary_json["events"] > 0
    pd.testing.assert_frame_equal(parallel.flows, serial.flows)
    pd.testing.assert_frame_equal(parallel.links, serial.links)
    for bad in (0, 300, "many"):
        with pytest.raises(ValueError, match="`auto` or a thread count from 1 to 256"):
            acclab.run(acclab.parse(text), progress=False, threads=bad)
    # "auto": this small fabric is estimated to gain nothing, and runs serially, same results.
    auto = acclab.run(acclab.parse(text), progress=False, threads="auto")
    assert strip(auto.summary_json) == strip(serial.summary_json)
    # A sweep whose runs are on 2 threads each gives the one-thread table (wall time aside);
    # its threads are checked as run's.
    grid = {"flow.f0.kind": ["dctcp", "reno"]}
    one = acclab.sweep(acclab.parse(text), grid=grid, progress=False, threads=1)
    two = acclab.sweep(acclab.parse(text), grid=grid, progress=False, threads=2)
    walls = [c for c in one.columns if "wall" in c]
    assert len(one) > 2
    pd.testing.assert_frame_equal(one.drop(columns=walls), two.drop(columns=walls))
    with pytest.raises(ValueError, match="`auto` or a thread count from 1 to 256"):
        acclab.sweep(acclab.parse(text), grid=grid, progress=False, threads="many")
