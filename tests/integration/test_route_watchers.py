"""Many watchers of one scheduler (issue 33): with the collector's route
installed, each roastop reads the finished tasks out of the scheduler's one
TaskStreamPlugin buffer with a cursor of its own, so a second roastop that
starts and quits takes nothing from the first (over /eventstream a second
client replaced the first's plugin and the first counted 0 of 60 tasks).
roastop A watches throughout; roastop B (its own config directory) starts,
a batch of tasks runs, B quits, a second batch runs: A counts every task of
both batches per prefix, B its own batch, and neither opened /eventstream
nor lost a record (docs/scheduler.md, "Task records")."""
import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import ROASTOP, load_metrics, run_dir, sigterm_seconds, v2_body
from dask_cluster import Cluster, wait_for
from roastop import route

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BATCH = 40


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2)
    yield c
    c.stop()


class Watcher:
    """A headless roastop with its own output and config directories, and
    an explicit run (a run_start datagram) whose checkpoints it rewrites."""

    def __init__(self, tmp_path, cluster, name):
        self.dir = tmp_path / name
        (self.dir / "config").mkdir(parents=True)
        self.err = self.dir / "roastop.stderr"
        env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / "config"))
        self.proc = subprocess.Popen([ROASTOP, *map(str, [
            "--headless", "--listen", "127.0.0.1:0", "--no-auth", "--scheduler",
            cluster.dashboard_url, "--interval", 0.5, "--output", self.dir / "out",
            "--checkpoint", 1, "--duration", 600])], env=env,
            stdout=open(self.dir / "roastop.stdout", "w"), stderr=open(self.err, "w"),
            stdin=subprocess.DEVNULL)
        line = re.compile(r"listening for chunk datagrams on udp 127\.0\.0\.1:(\d+)[ \n]")
        self.port = port = int(wait_for(lambda: line.search(self.err.read_text()), timeout=60).group(1))
        body = v2_body({"type": "run_start", "run_id": name, "name": name, "seq": 0,
                        "host": "h", "pid": 7})
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"RTP2\x00" + body, ("127.0.0.1", port))  # untagged: --no-auth
        # the tasks come from the route: it answered and the run is there
        wait_for(lambda: "task_stream connected" in self.err.read_text()
                 and self.counts() is not None, timeout=90, step=0.5)

    def metrics(self):
        try:
            return json.loads((run_dir(self.dir / "out") / "metrics.json").read_text())
        except (OSError, ValueError, AssertionError):
            return None

    def counts(self):
        """{prefix: tasks} of the latest checkpoint, None before one
        measured the tasks."""
        tasks = ((self.metrics() or {}).get("roastop") or {}).get("tasks") or {}
        if tasks.get("count") is None:
            return None
        return {p["prefix"]: p["count"] for p in tasks["prefixes"]}

    def served(self, family):
        """A counter's value on the /metrics roastop serves (no auth)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=30) as r:
            text = r.read().decode()
        m = re.search(rf"^{family}_total (\S+)$", text, re.M)
        return float(m.group(1)) if m else None

    def stop(self):
        assert sigterm_seconds(self.proc) < 10
        return load_metrics(self.dir / "out")["roastop"]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()


def batch(client, prefix):
    """BATCH tasks of one prefix, waited for, and a round trip through the
    scheduler after their transitions."""
    from distributed import wait
    import taskstream_tasks as tt
    futs = client.map(tt.inc, range(BATCH), key=[f"{prefix}-{i}" for i in range(BATCH)])
    wait(futs)
    assert all(f.status == "finished" for f in futs)
    client.run_on_scheduler(lambda: None)
    del futs


def test_two_watchers_each_count_every_task(tmp_path, cluster):
    client = cluster.client()
    routes, why = route.install_on(client)
    assert why is None, why
    a = b = None
    try:
        a = Watcher(tmp_path, cluster, "a")
        b = Watcher(tmp_path, cluster, "b")
        batch(client, "alpha")
        wait_for(lambda: b.counts() == {"alpha": BATCH}, timeout=90, step=0.5)
        got_b = b.stop()
        batch(client, "beta")
        wait_for(lambda: a.counts() == {"alpha": BATCH, "beta": BATCH}, timeout=90, step=0.5)
        # the startstops read (a transfer is one more) and none lost, on /metrics too
        wait_for(lambda: (a.served("roastop_scheduler_task_records") or 0) >= 2 * BATCH,
                 timeout=90, step=0.5)
        assert a.served("roastop_scheduler_task_records_lost") == 0
        got_a = a.stop()
    finally:
        for w in (a, b):
            if w is not None:
                w.kill()
        client.close()
    for got, want in ((got_a, 2 * BATCH), (got_b, BATCH)):
        assert got["tasks"]["count"] == want, got["tasks"]
        sched = got["scheduler"]
        assert sched["tasks_lost"] == 0 and sched["tasks_rejected"] == 0, sched
        assert sched["task_answers"] > 0, sched
        # /eventstream never opened: without --task-stream there is no such source
        assert "task_stream" not in got, got["task_stream"]
    assert {p["prefix"]: p["count"] for p in got_a["tasks"]["prefixes"]} == {
        "alpha": BATCH, "beta": BATCH}
    assert {p["prefix"]: p["count"] for p in got_b["tasks"]["prefixes"]} == {"alpha": BATCH}
    # both read one plugin, which the route added once
    assert client_plugins(cluster) == ["task-stream"]


def client_plugins(cluster):
    """The scheduler's TaskStreamPlugins by name (a new client: the test's
    is closed)."""
    with cluster.client() as c:
        return c.run_on_scheduler(lambda dask_scheduler: sorted(
            n for n, p in dask_scheduler.plugins.items()
            if type(p).__name__ == "TaskStreamPlugin"))
