"""The scheduler's fallbacks and the run's own task counts against a real
Dask cluster: `dask scheduler` and `dask worker` processes from the pinned
distributed on loopback, roastop polling the dashboard.

- A scheduler without prometheus_client (an optional dependency of
  distributed that neither `pip install "dask[distributed]"` nor coffea pulls
  in) answers /metrics with 200 and no samples; identity.json answers 500
  while tasks run (dask#8370). The cluster's environment here blocks the
  import (a sitecustomize.py with a meta-path finder), so the scheduler is
  the real one without the optional dependency. Worker counts must then come
  from /json/counts.json through a scale-up from 1 to 3 workers.
- On a reused scheduler, task progress counts the tasks of the run, never
  an earlier run's; two one-thread workers never show more than 2 tasks
  executing (the scheduler's "processing" also holds a task queued on each
  worker)."""
import re
import time
import urllib.request

import pytest

from conftest import Listener, recorded_events, wait_polled
from dask_cluster import Cluster, free_port, wait_for
from dask_tasks import spin
from roastop import MetricsCollector, route
from test_screen import Screen, elapsed_shown

BLOCKER = '''import sys


class _NoPrometheus:
    """prometheus_client is not installed here."""

    def find_spec(self, name, path=None, target=None):
        if name == "prometheus_client" or name.startswith("prometheus_client."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoPrometheus())
'''


class NoPrometheusCluster(Cluster):
    """Scheduler and workers in an environment where prometheus_client
    cannot be imported."""

    def _spawn(self, name, args):
        block = self.logs / "no-prometheus"
        block.mkdir(exist_ok=True)
        (block / "sitecustomize.py").write_text(BLOCKER)
        if not self.env["PYTHONPATH"].startswith(str(block)):
            self.env["PYTHONPATH"] = f"{block}:{self.env['PYTHONPATH']}"
        return super()._spawn(name, args)

    def add_worker(self, i):
        self.workers.append(self._spawn(f"worker{i}", [
            "worker", self.address, "--nthreads", "1", "--name", f"w{i}", "--host",
            "127.0.0.1", "--dashboard-address", "127.0.0.1:0", "--memory-limit", "2GiB",
            "--local-directory", str(self.logs / f"w{i}")]))


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def n_workers(client):
    return len(client.scheduler_info(n_workers=-1)["workers"])


def test_scale_up_without_prometheus_client_counts_from_counts_json(tmp_path):
    c = NoPrometheusCluster(tmp_path, n_workers=1)
    try:
        code, text = get(c.dashboard_url + "/metrics")
        assert code == 200 and "dask_scheduler_workers" not in text  # no samples
        rec = tmp_path / "rec.jsonl"
        lst = Listener(tmp_path, "--no-auth", "--scheduler", c.dashboard_url,
                       "--interval", "0.5", "--record", str(rec))
        client = c.client()
        host, port = lst.addr
        truth = []  # (time, workers) as the client sees them
        err = lst.err_path.read_text
        with MetricsCollector(None, addr=f"{host}:{port}"):  # no client: no route
            futures = client.map(spin, range(400))
            wait_for(lambda: "counts.json" in err(), timeout=30)
            for _ in range(8):  # a few seconds on one worker
                truth.append((time.monotonic(), n_workers(client)))
                time.sleep(0.25)
            c.add_worker(1)
            c.add_worker(2)
            wait_for(lambda: truth.append((time.monotonic(), n_workers(client)))
                     or truth[-1][1] == 3, timeout=60)
            for _ in range(12):  # and a few on three
                truth.append((time.monotonic(), n_workers(client)))
                time.sleep(0.25)
            assert not all(f.done() for f in futures), "tasks must run across the scale-up"
            client.cancel(futures)
        wait_polled(rec, time.time())  # a poll after the run's end (in its settle), then the stop
        _, m = lst.stop()
        client.close()
    finally:
        c.close()
    text = lst.err_path.read_text()
    assert "identity.json 500 while tasks run" in text
    assert "workers, threads and processing from counts.json" in text, text
    assert m["roastop"]["scheduler"]["identity_500"] > 0
    assert m["roastop"]["scheduler"]["rejected"] == 0  # an absent exporter is no bad body
    assert m["peak_workers"] == 3
    # the time-weighted truth over the client's polls, loosely: roastop's
    # window is the run's own, the client's polls cover most of it
    area = sum((t1 - t0) * (w0 + w1) / 2 for (t0, w0), (t1, w1) in zip(truth, truth[1:]))
    expect = area / (truth[-1][0] - truth[0][0])
    assert 1.2 < m["avg_workers"] < 3
    assert m["avg_workers"] == pytest.approx(expect, abs=0.5)
    assert m["total_cores"] == pytest.approx(m["avg_workers"], rel=0.01)  # 1 thread each


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def test_progress_on_a_reused_scheduler_counts_this_run_only(tmp_path, cluster):
    """An earlier run's span stays served by the route; a new roastop on the
    same scheduler shows the new batch's tasks only, from 0."""
    client = cluster.client()
    with MetricsCollector(client, addr=f"127.0.0.1:{free_port()}") as mc:  # the earlier run
        assert mc.route_error is None
        first = client.map(spin, range(6))
        client.gather(first)
    code, _ = get(cluster.dashboard_url + route.ROUTE)
    assert code == 200
    rec = tmp_path / "rec.jsonl"
    s = Screen(tmp_path, ["--no-auth", "--listen", "127.0.0.1:0", "--scheduler",
                          cluster.dashboard_url, "--interval", "0.5", "--record", rec],
               cols=160, rows=40)
    try:
        s.wait_for(re.compile(r"workers 2 +peak 2"), timeout=30)
        # a few polls of the earlier run's span, then a frame drawn two seconds
        # of roastop's clock after them; no capture until then says 6 of 6
        t0, polled = time.time(), []

        def frame_after_three_polls(text):
            """a frame drawn two seconds after roastop applied three polls"""
            assert "6 of 6" not in text, text
            e = elapsed_shown(text)
            if not polled:
                if e is not None and len([x for x in recorded_events(rec) if x.get("type") ==
                                          "sample" and x.get("t", 0) > t0]) >= 3:
                    polled.append(e)
                return None
            return text if e is not None and e >= polled[0] + 2 else None
        s.wait_for(frame_after_three_polls, timeout=60)
        second = client.map(spin, range(4), pure=False)
        client.gather(second)
        s.wait_for(re.compile(r"tasks 4 of 4 .*100%"), timeout=30)
        s.keys("q")
        s.wait_for("roastop-exit=0", timeout=30)
    finally:
        s.close()
        client.close()


def test_two_one_thread_workers_never_show_more_than_two_executing(tmp_path, cluster):
    """Without the route, identity.json answers 500 while tasks run and the
    scheduler's count of tasks processing (4: one running and one queued on
    each worker) is all there is."""
    client = cluster.client()
    s = Screen(tmp_path, ["--no-auth", "--listen", "127.0.0.1:0", "--scheduler",
                          cluster.dashboard_url, "--interval", "0.5"], cols=160, rows=40)
    seen, processing = [], []
    try:
        s.wait_for(re.compile(r"workers 2 +peak 2"), timeout=30)
        futures = client.map(spin, range(40), pure=False)
        last = None
        while not all(f.done() for f in futures):
            # a frame a second: a capture the same as the one before is a
            # frame drawn whole (one read half drawn can join an old digit
            # to a new count)
            text = s.text()
            whole, last = text == last, text
            if whole:
                seen += [int(v) for v in re.findall(r"executing (\d+)", text)]
                seen += [int(v) for v in re.findall(r"tasks executing \S+ +peak (\d+)", text)]
            code, body = get(cluster.dashboard_url + "/json/counts.json")
            m = re.search(r'"processing": (\d+)', body)
            if m:
                processing.append(int(m.group(1)))
            time.sleep(0.2)
        client.gather(futures)
        s.keys("q")
        s.wait_for("roastop-exit=0", timeout=30)
    finally:
        s.close()
        client.close()
    assert max(processing) > 2, processing  # the case: more processing than threads
    assert seen and max(seen) <= 2, seen
    assert max(seen) >= 1
