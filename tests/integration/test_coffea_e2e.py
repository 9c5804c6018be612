"""End to end with real coffea: examples/run_dimuon.py runs coffea's
processor.Runner with its Dask executor on a real `dask scheduler` and two
`dask worker` processes that cannot import roastop, over ROOT files written by
uproot; roastop --headless measures it live. The measurement must match what
the files hold and what coffea itself reported.

Worker counts and fine metrics come from roastop's Dask poller, through the
scheduler route MetricsCollector installs (docs/scheduler.md)."""
import math
import subprocess
import sys

import pytest

from conftest import CHUNKSIZE
from dask_cluster import cluster_env

EVENTS_PER_FILE = 50000


@pytest.fixture(scope="module")
def run(roastop_dimuon_run):
    return roastop_dimuon_run


def scheduler_measured(m):
    """roastop polled the scheduler through the collector's route."""
    assert m["roastop"].get("scheduler_samples"), m["roastop"].get("scheduler")
    assert m["roastop"]["sources"]["scheduler"]["state"] == "connected"


def test_workers_cannot_import_roastop(dask_cluster, tmp_path):
    p = subprocess.run([sys.executable, "-c", "import roastop"], env=cluster_env(),
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "No module named 'roastop'" in p.stderr
    for name in ("scheduler", "worker0", "worker1"):   # and nothing failed on the cluster
        assert "ModuleNotFoundError" not in dask_cluster.log(name)


def test_client_shipped_roastop_and_lost_nothing(run):
    r, m = run["result"], run["metrics"]
    assert r["shipped_by_value"] is True
    assert r["datagrams_lost"] == 0
    udp = m["roastop"]["udp"]
    # the client sent run_start, the report and run_end; the workers a chunk per chunk,
    # and a chunk_start for each chunk still running at their process's next heartbeat
    assert r["datagrams_sent"] == 3
    # and the hellos, answered, not applied: the collector's (tests/integration/test_hello.py)
    # and each worker process's on its first chunk (its UDP reaches roastop: it stays on
    # UDP; test_dask_path.py has workers whose UDP is dropped)
    assert udp["hellos"] == udp["acks_sent"] == 3
    # and each worker process its heartbeat once a second from its first chunk on, up to
    # roastop's exit (docs/protocol.md, "heartbeat"): the run counts those of its own time
    applied = m["roastop"]["events_applied"]
    starts = applied.get("chunk_start", 0)
    assert applied["chunk"] == m["num_chunks"] >= starts
    assert applied["run_start"] == applied["report"] == applied["run_end"] == 1
    beats = udp["applied"] - r["datagrams_sent"] - m["num_chunks"] - starts
    assert udp["applied"] == udp["datagrams"] - 3
    # the udp block is the listener's counters as they were when the run closed: roastop
    # takes them just before the event that closes it (docs/metrics.md, "Sources'
    # counters"), so every heartbeat the run applied is in the block
    assert beats >= applied.get("heartbeat", 0), (beats, applied)
    assert beats <= 2 * (run["result"]["wall_seconds"] + 60)     # two workers, one a second
    fl = m["roastop"]["in_flight"]  # every start sent matched by its chunk, none left running
    assert fl["chunk_starts"] == starts, fl
    if starts:  # else no chunk ran a beat: not measured (docs/metrics.md)
        assert fl["matched"] == starts and fl["running"] == 0 and fl["unmatched_ends"] == 0, fl
    else:
        assert fl["running"] is None and fl["matched"] == fl["unmatched_ends"] == 0, fl
    assert udp["missing"] == 0 and udp["kernel_drops"] == 0 and udp["out_of_order"] >= 0
    assert udp["rejected"]["total"] == 0
    assert udp["reports_incomplete"] == 0
    # the client and the two worker processes, each one sender, each by UDP (their
    # hellos acked: test_dask_path.py has the workers whose UDP is dropped)
    assert udp["senders"] == 3
    assert udp["senders_by_path"] == {"udp": 3} and "dask" not in udp["datagrams_by_path"]
    assert m["roastop"]["run_ended"] is True
    assert m["roastop"]["run_id"] == r["run_id"]
    assert m["roastop"]["processor"] == "DimuonProcessor"
    assert "run ended" in run["stdout"]


def test_events_exact(run):
    m, r, truth = run["metrics"], run["result"], run["truth"]
    assert m["total_events"] == truth["total_events"] == r["report"]["entries"]
    assert m["metric_sources"]["total_events"] == "coffea_report"
    assert m["total_events_from_chunks"] == truth["total_events"]   # from the chunks alone
    for ds, n in truth["events_per_dataset"].items():
        assert m["per_dataset"][ds]["total_events"] == n
        assert r["per_dataset"][ds]["entries"] == n                 # the processor's own count
    assert set(m["per_dataset"]) == set(truth["events_per_dataset"])
    # and the analysis did its physics: a Z peak in DY, pairs in the mass histogram
    dy = r["per_dataset"]["DYJetsToLL"]
    assert 86 <= dy["mass_peak_gev"] <= 96
    assert all(0 < v["mass_entries"] <= v["pairs"] for v in r["per_dataset"].values())


def test_chunks_match_coffea_report(run):
    m, r, truth = run["metrics"], run["result"], run["truth"]
    per_file = math.ceil(EVENTS_PER_FILE / CHUNKSIZE)
    assert m["num_chunks"] == r["report"]["chunks"] == per_file * truth["files"]
    assert m["num_successful_chunks"] == m["num_chunks"] and m["num_failed_chunks"] == 0
    assert sum(d["num_chunks"] for d in m["per_dataset"].values()) == m["num_chunks"]
    for ds in truth["events_per_dataset"]:
        assert m["per_dataset"][ds]["num_chunks"] == m["num_chunks"] // 2
    assert m["chunk_events_min"] == m["chunk_events_max"] == CHUNKSIZE
    assert m["chunk_events_mean"] == truth["total_events"] / m["num_chunks"]


def test_report_totals(run):
    m, rep = run["metrics"], run["result"]["report"]
    assert m["total_bytes_read"] == rep["bytesread"] > 0
    assert math.isclose(m["total_cpu_time"], rep["processtime"], rel_tol=1e-9)
    assert math.isclose(m["avg_cpu_time_per_chunk"], rep["processtime"] / rep["chunks"],
                        rel_tol=1e-9)
    el = m["elapsed_time_seconds"]
    assert 0 < el < run["result"]["wall_seconds"] + 5
    assert math.isclose(m["data_rate_gbps"], rep["bytesread"] * 8 / 1e9 / el, rel_tol=1e-9)
    assert math.isclose(m["event_rate_elapsed_khz"], rep["entries"] / el / 1000, rel_tol=1e-9)


def test_chunk_statistics_consistent(run):
    m = run["metrics"]
    n = m["num_chunks"]
    assert 0 < m["chunk_duration_min"] <= m["chunk_duration_p50"] <= m["chunk_duration_p90"]
    assert m["chunk_duration_p90"] <= m["chunk_duration_p99"] <= m["chunk_duration_max"]
    assert m["chunk_duration_min"] <= m["chunk_duration_mean"] <= m["chunk_duration_max"]
    total = sum(d["total_duration"] for d in m["per_dataset"].values())
    assert math.isclose(m["chunk_duration_mean"] * n, total, rel_tol=1e-9)
    # the spread cannot exceed what n values between min and max allow
    assert 0 <= m["chunk_duration_std"] <= (m["chunk_duration_max"] - m["chunk_duration_min"])
    # process() is each chunk's whole duration: coffea's processtime times the same call
    assert total <= m["total_cpu_time"] * 1.05 + 0.05
    # chunks ran on two single-threaded workers: at most two at a time
    assert total <= 2 * m["elapsed_time_seconds"]
    s = m["section_summary"]
    for name in ("muon_selection", "jet_selection"):
        assert s["timing"][name]["count"] == n
        assert 0 < s["timing"][name]["max_seconds"] <= m["chunk_duration_max"]
    assert sum(t["total_seconds"] for t in s["timing"].values()) <= total
    assert s["memory"]["histograms"]["count"] == n


def test_branch_coverage_matches_coffea_columns(run):
    m, r, truth = run["metrics"], run["result"], run["truth"]
    branches = {c.rsplit("-", 1)[0] for c in r["columns"]}    # "Muon_pt-data" -> Muon_pt
    assert m["total_branches_read"] == len(branches) == 9
    assert len(m["file_metadata"]) == truth["files"]
    assert len(m["compression_ratios"]) == truth["files"]
    assert all(0 < x < 1 for x in m["compression_ratios"])
    # the processor reads 9 of the 14 branches of every file
    assert math.isclose(m["avg_branches_read_percent"], 100 * 9 / 14, rel_tol=1e-9)


def test_workers_counted(run):
    m = run["metrics"]
    scheduler_measured(m)
    assert m["peak_workers"] == 2
    assert math.isclose(m["avg_workers"], 2.0, rel_tol=1e-6)
    assert math.isclose(m["total_cores"], 2.0, rel_tol=1e-6)
    assert m["cores_per_worker"] == 1
    assert m["peak_memory_bytes"] > 0
    assert m["roastop"]["workers_seen"] == 2


def test_fine_metrics_positive(run):
    m = run["metrics"]
    scheduler_measured(m)
    assert m["metric_sources"]["fine_metrics"] in ("span", "cluster")
    cpu = m["processor_cpu_time_seconds"]
    assert cpu > 0 and m["processor_io_wait_time_seconds"] >= 0
    # thread CPU of the processor's tasks cannot exceed the cores' time
    assert cpu <= m["total_cores"] * m["elapsed_time_seconds"]
    assert 0 < m["processor_cpu_percent"] <= 100
    assert math.isclose(m["processor_cpu_percent"] + m["processor_io_wait_percent"], 100)
    assert m["overhead_cpu_time_seconds"] is not None


def test_demo_recording_replays(tmp_path):
    """The recording `make demo` replays (examples/record_demo.py, a real run
    of this example) reads back whole: its chunks add up to its coffea report."""
    import gzip
    import json
    from conftest import REPO_ROOT, load_metrics, roastop
    plain = REPO_ROOT / "examples" / "demo-recording.jsonl"
    path = plain if plain.exists() else plain.with_name(plain.name + ".gz")
    assert path.exists(), "the demo recording is committed"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        lines = [json.loads(line) for line in f]
    report = next(e for e in lines if e["type"] == "report")
    rec = tmp_path / "demo.jsonl"
    rec.write_text("".join(json.dumps(e) + "\n" for e in lines))
    p = roastop("--replay", rec, "--speed", 0, "--headless", "--output", tmp_path / "m")
    assert p.returncode == 0, p.stderr
    m = load_metrics(tmp_path / "m")
    assert m["num_chunks"] == report["chunks"] == sum(e["type"] == "chunk" for e in lines)
    assert m["total_events"] == m["total_events_from_chunks"] == report["entries"]
    assert m["roastop"]["processor"] == "DimuonProcessor"
    assert m["roastop"]["replay"]["rejected"]["total"] == 0
    # recorded with the poller and the collector's route: the scheduler's view too
    assert m["peak_workers"] == 2 and m["avg_workers"] > 1.5
    assert m["metric_sources"]["fine_metrics"] == "span"
    assert m["processor_cpu_time_seconds"] > 0
    assert not any("/tmp/" in e.get("file", "") for e in lines if e["type"] == "chunk")
