"""Executors other than Dask (issue 20 item 4): examples/run_dimuon.py with
coffea's FuturesExecutor (a pool of 2 processes) and IterativeExecutor (the
client itself), the collector given no client, over ROOT files written by
uproot; roastop --headless with no --scheduler measures it live. Chunks must
match the files' truth, and the worker timelines come from the emitter's
heartbeats alone (docs/executors.md)."""
import math
import subprocess
import sys

import pytest

from conftest import CHUNKSIZE, load_metrics, measuring, roastop
from dask_cluster import EXAMPLES, client_env

EVENTS_PER_FILE = 50000
POOL = 2
MIB, GIB = 1 << 20, 1 << 30


def measured(tmp_path_factory, dimuon_files, executor):
    d = tmp_path_factory.mktemp(f"exec-{executor}")
    out = d / "measurement"
    files, truth = dimuon_files
    with measuring(d, out, "--duration", 600, "--record", d / "rec.jsonl", wait=90) as live:
        p = subprocess.run([sys.executable, str(EXAMPLES / "run_dimuon.py"), "--executor",
                            executor, "--workers", str(POOL), "--files", str(files),
                            "--result", str(d / "result.json"), "--collector", "roastop",
                            "--chunksize", str(CHUNKSIZE)], env=client_env(**live.env),
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
    import json
    return {"metrics": load_metrics(out), "result": json.loads((d / "result.json").read_text()),
            "truth": truth, "out": out, "dir": d}


@pytest.fixture(scope="module")
def futures(tmp_path_factory, dimuon_files):
    return measured(tmp_path_factory, dimuon_files, "futures")


@pytest.fixture(scope="module")
def iterative(tmp_path_factory, dimuon_files):
    return measured(tmp_path_factory, dimuon_files, "iterative")


def check_chunks(run):
    m, r, truth = run["metrics"], run["result"], run["truth"]
    per_file = math.ceil(EVENTS_PER_FILE / CHUNKSIZE)
    assert m["num_chunks"] == r["report"]["chunks"] == per_file * truth["files"]
    assert m["num_failed_chunks"] == 0
    assert m["total_events"] == m["total_events_from_chunks"] == truth["total_events"]
    for ds, n in truth["events_per_dataset"].items():
        assert m["per_dataset"][ds]["total_events"] == n
    assert m["roastop"]["run_ended"] is True
    assert m["roastop"]["run_id"] == r["run_id"]
    assert m["roastop"]["processor"] == "DimuonProcessor"
    s = m["section_summary"]
    for name in ("muon_selection", "jet_selection"):   # the decorator's sections
        assert s["timing"][name]["count"] == m["num_chunks"]
    assert r["datagrams_lost"] == 0
    assert m["roastop"]["udp"]["rejected"]["total"] == 0


def check_workers(run, processes):
    m = run["metrics"]
    ro = m["roastop"]
    # no Dask anywhere: roastop's default poll of localhost:8787 finds nobody
    assert ro["sources"].get("scheduler", {}).get("state") in (None, "lost")
    assert ro["events_applied"]["heartbeat"] >= processes
    assert ro["heartbeat_samples"] >= 1
    assert ro["scheduler_samples"] == ro["heartbeat_samples"]   # every sample a heartbeat's
    assert ro["workers_seen"] == processes
    assert m["peak_workers"] == processes
    assert 10 * MIB < m["peak_memory_bytes"] < 4 * GIB
    td = m["tracking_data"]
    assert td is not None and len(td["worker_memory"]) == processes
    for points in td["worker_memory"].values():
        assert all(10 * MIB < v < 4 * GIB for _, v in points), points
    return td


def test_futures_chunks_exact(futures):
    check_chunks(futures)


def test_futures_workers_from_heartbeats(futures):
    td = check_workers(futures, POOL)
    client = futures["result"]["client_pid"]
    # the pool's processes, named host:pid; the client processed no chunk
    assert all(not w.endswith(f":{client}") for w in td["worker_memory"])


def test_futures_measurement_written(futures):
    run = futures["out"] / "latest"
    for name in ("metrics.json", "summary.txt"):
        assert (run / name).stat().st_size > 0


def test_iterative_chunks_exact(iterative):
    check_chunks(iterative)


def test_iterative_worker_is_the_client(iterative):
    td = check_workers(iterative, 1)
    client = iterative["result"]["client_pid"]
    assert [w.rsplit(":", 1)[1] for w in td["worker_memory"]] == [str(client)]


def test_futures_replay_makes_the_same_workers(futures):
    """The heartbeats are recorded as received; a replay makes the same samples
    from them (docs/recording.md, "heartbeat")."""
    import json
    d = futures["dir"]
    lines = [json.loads(x) for x in (d / "rec.jsonl").read_text().splitlines()[1:] if x]
    beats = [e for e in lines if e["type"] == "heartbeat"]
    assert beats and all(e["host"] and e["pid"] > 0 and e["rss_bytes"] > 0 for e in beats)
    p = roastop("--replay", d / "rec.jsonl", "--speed", 0, "--headless", "--output",
                d / "replayed")
    assert p.returncode == 0, p.stderr
    live, again = futures["metrics"], load_metrics(d / "replayed")
    for key in ("peak_workers", "avg_workers", "peak_memory_bytes",
                "avg_memory_per_worker_bytes", "num_chunks"):
        assert again[key] == live[key], key
    for key in ("heartbeat_samples", "workers_seen"):
        assert again["roastop"][key] == live["roastop"][key], key
    assert again["tracking_data"]["worker_memory"] == live["tracking_data"]["worker_memory"]
