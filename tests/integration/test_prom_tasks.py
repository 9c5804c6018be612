"""A plain watch (`--scheduler`, no collector route, no --task-stream) on a
real loopback cluster: roastop counts every task per prefix from the
scheduler's own per-prefix totals on its Prometheus /metrics, which cost the
scheduler nothing per task (docs/scheduler.md, "Task figures without the
route"). What the totals cannot give (quantiles, stragglers, failures, tasks
in flight) is null with a reason, never 0, and a replay of the recording
writes the same block."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROASTOP, load_metrics, run_dir, sigterm_seconds
from dask_cluster import Cluster, wait_for
from test_taskstream import graph_counts

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

INTERVAL = 0.3


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2)
    yield c
    c.stop()


def totals_polls(rec):
    """Samples in the recording that carried the per-prefix totals."""
    return rec.read_text().count('"prefixes_left_out"') if rec.exists() else 0


def test_plain_watch_counts_every_task_per_prefix(tmp_path, cluster):
    import dask.array as da
    from dask import delayed
    from distributed import Client, wait
    import taskstream_tasks as tt

    rec, out = tmp_path / "rec.jsonl", tmp_path / "out"
    proc = subprocess.Popen(
        [ROASTOP, *map(str, ["--headless", "--listen", "127.0.0.1:0", "--no-auth",
                             "--scheduler", cluster.dashboard_url, "--interval", INTERVAL,
                             "--output", out, "--checkpoint", 0, "--record", rec])],
        stdout=open(tmp_path / "roastop.stdout", "w"),
        stderr=open(tmp_path / "roastop.stderr", "w"), stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: totals_polls(rec) >= 1, timeout=60)  # the base: before any task
        with Client(cluster.address) as client:
            y = (da.ones((200, 200), chunks=(50, 50)) + 1).sum(axis=0)
            want = graph_counts(y)
            wait(client.persist(y))
            quick = [delayed(tt.inc)(i) for i in range(30)]
            want.update(graph_counts(*quick))
            wait(client.persist(quick))
        seen = totals_polls(rec)
        wait_for(lambda: totals_polls(rec) >= seen + 2, timeout=60)  # a poll after the last task
        time.sleep(INTERVAL)
        assert sigterm_seconds(proc) < 10
    finally:
        if proc.poll() is None:
            proc.kill()
    tasks = load_metrics(out)["roastop"]["tasks"]
    assert tasks["source"] == "prometheus"
    got = {p["prefix"]: p for p in tasks["prefixes"]}
    assert set(got) == set(want), (sorted(got), want)
    for prefix, n in want.items():
        p = got[prefix]
        assert p["count"] == n, (prefix, p, n)
        assert p["compute_seconds"] > 0
        for k in ("compute_p50_seconds", "compute_max_seconds", "stragglers", "transfers",
                  "erred", "in_flight"):
            assert p[k] is None, (prefix, k, p)
    assert tasks["count"] == sum(want.values())
    assert tasks["prefixes_left_out"] == 0
    assert tasks["straggler_count"] is None and "per-prefix totals" in tasks["straggler_reason"]
    assert tasks["erred"] is None and tasks["in_flight"] is None
    summary = (run_dir(out) / "summary.txt").read_text()
    assert f"Dask tasks (prometheus): {tasks['count']} tasks, n/a erred" in summary, summary
    # the recording carries the totals: its replay writes the same block
    r = subprocess.run([ROASTOP, "--replay", str(rec), "--speed", "0", "--headless",
                        "--output", str(tmp_path / "replayed")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert load_metrics(tmp_path / "replayed")["roastop"]["tasks"] == tasks
