"""Failed and running Dask tasks, which only the scheduler knows: with the
collector's route installed, roastop counts the tasks that raised per
prefix (/eventstream sends nothing for them) and shows a stuck task in
flight with its worker while it runs; without the route both are null, never
0 (docs/metrics.md, "Dask tasks")."""
import json
import re
import socket
import time
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (ROASTOP, load_metrics, run_dir, run_metrics, sigterm_seconds, v2_body,
                      wait_polled)
from dask_cluster import Cluster, wait_for
from roastop import route

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2)
    yield c
    c.stop()


def start(tmp_path, cluster, *extra):
    proc = subprocess.Popen([ROASTOP, *map(str, [
        "--headless", "--listen", "127.0.0.1:0", "--no-auth", "--task-stream", "--scheduler",
        cluster.dashboard_url, "--interval", 0.5, "--output", tmp_path / "out",
        "--duration", 600, *extra])], stdout=open(tmp_path / "roastop.stdout", "w"),
        stderr=open(tmp_path / "roastop.stderr", "w"), stdin=subprocess.DEVNULL)
    return proc


def listening_port(tmp_path):
    """The listener's port, once roastop has printed its line whole."""
    line = re.compile(r"listening for chunk datagrams on udp 127\.0\.0\.1:(\d+)[ \n]")
    m = wait_for(lambda: line.search((tmp_path / "roastop.stderr").read_text()), timeout=60)
    return int(m.group(1))


def begin_run(port):
    """A run_start datagram (--no-auth: untagged): a run whose directory the
    checkpoints rewrite (the task model is the session's)."""
    body = v2_body({"type": "run_start", "run_id": "r1", "name": "tasks", "seq": 0,
                    "host": "h", "pid": 7})
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"RTP2\x00" + body, ("127.0.0.1", port))


def checkpoint(tmp_path):
    """roastop.tasks of the latest checkpoint, or None before the first."""
    try:
        return json.loads((run_dir(tmp_path / "out") / "metrics.json").read_text())[
            "roastop"].get("tasks")
    except (OSError, ValueError, KeyError):
        return None


def stop(proc, tmp_path):
    assert sigterm_seconds(proc) < 10
    return load_metrics(tmp_path / "out")["roastop"]["tasks"]


def fail_three(client, n=3):
    """n (three) calls of one prefix that raise; waits until all have erred."""
    from dask import delayed
    from distributed import wait
    import taskstream_tasks as tt
    futs = client.compute([delayed(tt.boom, pure=False)(i) for i in range(n)])
    wait(futs)
    assert all(f.status == "error" for f in futs)
    client.run_on_scheduler(lambda: None)  # the transitions are behind us


def test_erred_and_in_flight_with_the_route(tmp_path, cluster):
    from dask import delayed
    import taskstream_tasks as tt
    client = cluster.client()
    routes, why = route.install_on(client)
    assert why is None, why
    proc = start(tmp_path, cluster, "--checkpoint", 1, "--record", tmp_path / "rec.jsonl")
    try:
        begin_run(listening_port(tmp_path))
        # measured before anything failed: 0, not null (the baseline)
        wait_for(lambda: (checkpoint(tmp_path) or {}).get("erred") == 0, timeout=90, step=0.5)
        fail_three(client)
        wait_for(lambda: (checkpoint(tmp_path) or {}).get("erred") == 3, timeout=90, step=0.5)
        stuck = client.compute(delayed(tt.nap, pure=False)(600))

        def shown():
            fl = checkpoint(tmp_path)["in_flight"]
            rows = [r for r in (fl or {}).get("oldest", []) if r["key"] == stuck.key]
            return rows[0] if rows and rows[0]["seconds"] > 0 else None
        row = wait_for(shown, timeout=90, step=0.5)  # the checkpoint waited for, not a later one
        where = [w for w, keys in client.processing().items() if stuck.key in keys]
        assert row["prefix"] == "nap" and [row["worker"]] == where, (row, where)
        assert stuck.status == "pending"  # seen in flight before it ended
        stuck.cancel()
        tasks = stop(proc, tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
        client.close()
    got = {p["prefix"]: p for p in tasks["prefixes"]}
    assert got["boom"]["erred"] == 3 and got["boom"]["count"] == 0, got["boom"]
    assert tasks["erred"] == 3 and tasks["erred_prefixes_left_out"] == 0
    assert "erred_reason" not in tasks
    # the recording replays to the same numbers
    r = subprocess.run([ROASTOP, "--replay", str(tmp_path / "rec.jsonl"), "--speed", "0",
                        "--headless", "--output", str(tmp_path / "replayed")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert load_metrics(tmp_path / "replayed")["roastop"]["tasks"] == tasks
    assert "3 erred" in (tmp_path / "roastop.stdout").read_text()


def polled_failures(rec, since_runs, n):
    """Whether the recording holds a route sample with n failed tasks of
    prefix "boom" counted since the latest of since_runs installs: the run's
    failures were polled before its block ends."""
    sinces = []
    for line in rec.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("type") == "sample" and "erred_since" in ev:
            if not sinces or ev["erred_since"] != sinces[-1]:
                sinces.append(ev["erred_since"])
            if len(sinces) == since_runs and ev.get("erred", {}).get("boom") == n:
                return True
    return False


def test_each_run_counts_its_own_failures(tmp_path, cluster):
    """Two collector runs on one scheduler whose processor raises at once,
    before roastop's first poll of the run (--interval 2): each run counts
    its own failures, the first's not again in the second, though both are
    of one prefix (the route counts from each run's install)."""
    from distributed import Client
    from roastop import MetricsCollector
    rec = tmp_path / "rec.jsonl"
    proc = start(tmp_path, cluster, "--record", rec, "--interval", 2)
    err = tmp_path / "roastop.stderr"
    try:
        # the emitter line whole, to its newline
        addr = wait_for(lambda: re.search(r"ROASTOP_ADDR=(\S+)\n", err.read_text()),
                        timeout=60).group(1)
        with Client(cluster.address) as client:
            for i, n in enumerate((3, 2)):
                with MetricsCollector(client, addr=addr, run_name=f"run{i}", hello=False):
                    fail_three(client, n)
                    wait_for(lambda: polled_failures(rec, i + 1, n), timeout=90, step=0.5)
                run_metrics(tmp_path / "out", i + 1)
        assert sigterm_seconds(proc) < 10
    finally:
        if proc.poll() is None:
            proc.kill()
    runs = run_metrics(tmp_path / "out", 2)
    for (d, m), n in zip(runs, (3, 2)):
        tasks = m["roastop"]["tasks"]
        assert tasks["erred"] == n, (d.name, tasks)
        assert {p["prefix"]: p["erred"] for p in tasks["prefixes"]}["boom"] == n


def test_without_the_route_erred_is_null(tmp_path, cluster):
    client = cluster.client()
    rec = tmp_path / "rec.jsonl"
    proc = start(tmp_path, cluster, "--checkpoint", 0, "--record", rec)
    try:
        wait_for(lambda: "task stream connected" in (tmp_path / "roastop.stderr").read_text(),
                 timeout=60)
        fail_three(client)
        # roastop asked the scheduler again after the failures (a route would
        # have counted them): null then is no route's, not no poll's
        wait_polled(rec, time.time(), n=2)
        tasks = stop(proc, tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
        client.close()
    assert tasks["erred"] is None and tasks["erred_reason"], tasks
    assert tasks["in_flight"] is None and tasks["in_flight_reason"], tasks
    assert "n/a erred" in (tmp_path / "roastop.stdout").read_text()


def test_view_shows_erred_and_the_stuck_task(tmp_path, cluster):
    """View 10 in tmux at 200x60: the failing prefix's ERRED column and the
    stuck task named in flight with its worker while it runs."""
    import shutil
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    from dask import delayed
    import taskstream_tasks as tt
    from test_screen import Screen
    client = cluster.client()
    route.install_on(client)
    s = Screen(tmp_path, ["--scheduler", cluster.dashboard_url, "--task-stream", "--listen", "127.0.0.1:0",
                          "--no-auth", "--interval", 0.5, "--checkpoint", 0], cols=200, rows=60)
    try:
        s.wait_for("0 Tasks", timeout=60)
        s.keys("0")
        # with the route, the tasks come from it: /eventstream is not opened
        s.wait_for(re.compile(r"task stream \(route\): \d+ tasks, 0 erred, 0 in flight"),
                   timeout=60)
        fail_three(client)
        text = s.wait_for(re.compile(r"^\s*\S\s+boom\s+0\s+3\s", re.M), timeout=60)
        stuck = client.compute(delayed(tt.nap, pure=False)(600))
        wait_for(lambda: any(stuck.key in keys for keys in client.processing().values()),
                 timeout=60)
        worker = [w for w, keys in client.processing().items() if stuck.key in keys][0]
        # the title's count and the oldest task on one capture
        text = s.wait_for([f"oldest in flight: {stuck.key} on {worker}", "1 in flight"],
                          timeout=60)
        assert "1 in flight" in text, text
        assert stuck.status == "pending"
        stuck.cancel()
    finally:
        s.close()
        client.close()
