"""The Dask task stream (/eventstream) with no roastop code in the analysis:
a dask.array computation and delayed calls on a real loopback cluster;
roastop's per-prefix counts equal the graph's, a task made slow on purpose
is named as a straggler with its worker, and a restarted scheduler is
followed; two collector runs in one session each hold their own tasks
(docs/metrics.md, "Dask tasks")."""
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import (ROASTOP, load_metrics, no_nan, run_dir, run_dirs, run_metrics,
                      sigterm_seconds)
from dask_cluster import Cluster, wait_for

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def start(tmp_path, cluster, *extra):
    err = tmp_path / "roastop.stderr"
    proc = subprocess.Popen([ROASTOP, *map(str, ["--headless", "--listen", "127.0.0.1:0", "--no-auth",
                             "--scheduler", cluster.dashboard_url, "--task-stream", "--output",
                             tmp_path / "out", "--checkpoint", 0, "--duration", 600, *extra])],
                            stdout=open(tmp_path / "roastop.stdout", "w"), stderr=open(err, "w"),
                            stdin=subprocess.DEVNULL)
    return proc, err


def connects(err):
    return err.read_text().count("task stream connected")


def barrier(client):
    """A round trip through the scheduler's event loop: the stream messages of
    every transition before it are written to roastop's socket (the loop
    writes them in the transition), where roastop's drain at the stop reads them."""
    client.run_on_scheduler(lambda: None)


def stop(proc, out):
    """roastop.tasks, and the stream's own block (roastop.task_stream)."""
    assert sigterm_seconds(proc) < 10
    r = load_metrics(out)["roastop"]
    return r["tasks"], r["task_stream"]


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2)
    yield c
    c.stop()


def graph_counts(*collections):
    """Tasks per prefix of the graph the scheduler receives (optimised, as
    persist sends it)."""
    from dask.base import collections_to_expr
    from dask.utils import key_split
    dsk = collections_to_expr(list(collections), optimize_graph=True).__dask_graph__()
    return Counter(key_split(k) for k in dict(dsk))


def test_array_and_straggler(tmp_path, cluster):
    import dask.array as da
    from dask import delayed
    from distributed import Client, wait
    import taskstream_tasks as tt

    proc, err = start(tmp_path, cluster, "--record", tmp_path / "rec.jsonl")
    try:
        wait_for(lambda: connects(err) >= 1, timeout=60)
        with Client(cluster.address) as client:
            y = (da.ones((400, 400), chunks=(50, 50)) + 1).sum(axis=0)
            want = graph_counts(y)
            wait(client.persist(y))
            quick = [delayed(tt.inc)(i) for i in range(30)]
            want.update(graph_counts(*quick))
            wait(client.persist(quick))
            slow = delayed(tt.nap, pure=False)(3.0)
            want.update(graph_counts(slow))
            fut = client.persist(slow)
            wait(fut)
            slow_worker = list(client.who_has(fut).values())[0][0]
            barrier(client)
        tasks, stream = stop(proc, tmp_path / "out")
    finally:
        if proc.poll() is None:
            proc.kill()
    got = {p["prefix"]: p for p in tasks["prefixes"]}
    assert set(want) <= set(got), (want, sorted(got), stream)
    for prefix, n in want.items():
        assert got[prefix]["count"] == n, (prefix, got.get(prefix), n)
        assert got[prefix]["compute_p50_seconds"] > 0
    assert tasks["count"] == sum(want.values())
    assert got["nap"]["compute_p50_seconds"] >= 3.0 * 0.99
    named = [s for s in tasks["stragglers"] if s["prefix"] == "nap"]
    assert named and named[0]["worker"] == slow_worker, tasks["stragglers"]
    assert stream["tasks"] >= tasks["count"]
    assert sum(stream["rejected_by"].values()) == 0
    # the run's section is in its summary.txt, and so on stdout, which is the
    # newest run's summary.txt (no collector: the session's one run holds them all)
    summary = (tmp_path / "roastop.stdout").read_text()
    assert tasks_section(run_dir(tmp_path / "out") / "summary.txt") == tasks_section(summary)
    assert f"Dask tasks (/eventstream): {tasks['count']} tasks" in summary, summary
    assert f"latest straggler: {named[0]['key']} on {slow_worker}" in summary, summary
    # the recording replays to the same task model, and the stream's counters are
    # counters events (docs/recording.md, "What a replay reproduces"): the same block
    r = subprocess.run([ROASTOP, "--replay", str(tmp_path / "rec.jsonl"), "--speed", "0",
                        "--headless", "--output", str(tmp_path / "replayed")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    replayed = load_metrics(tmp_path / "replayed")["roastop"]
    assert replayed["task_stream"] == stream
    assert replayed["tasks"] == tasks
    replay_shows_tasks(tmp_path, named[0]["worker"])


def tasks_section(summary):
    """The "Dask tasks (<feed>)" section of a summary (a path or its text):
    its lines up to the first blank one."""
    text = summary.read_text() if isinstance(summary, Path) else summary
    at = text.index("Dask tasks (")
    return text[at:].split("\n\n")[0].rstrip("\n")


def test_two_runs_each_hold_their_tasks(tmp_path, cluster):
    """Two collector runs in one session on one cluster, each computing its
    own graph: each run's metrics.json has exactly its graph's tasks per
    prefix (none of the other run's), and its summary.txt the section of
    them; the recording replays to the same per-run blocks."""
    import dask.array as da
    from dask import delayed
    from distributed import Client, wait
    from roastop import MetricsCollector
    import taskstream_tasks as tt

    proc, err = start(tmp_path, cluster, "--record", tmp_path / "rec.jsonl")
    out = tmp_path / "out"
    try:
        wait_for(lambda: connects(err) >= 1, timeout=60)
        addr = re.search(r"ROASTOP_ADDR=(\S+)", err.read_text()).group(1)
        with Client(cluster.address) as client:
            with MetricsCollector(client, addr=addr, run_name="first", hello=False):
                y = (da.ones((400, 400), chunks=(50, 50)) + 1).sum(axis=0)
                want1 = graph_counts(y)
                wait(client.persist(y))
                barrier(client)
            run_metrics(out, 1)  # closed: what comes next is not its
            with MetricsCollector(client, addr=addr, run_name="second", hello=False):
                z = (da.arange(4000, chunks=250) * 3).max()
                quick = [delayed(tt.inc)(i) for i in range(20)]
                want2 = graph_counts(z) + graph_counts(*quick)
                wait(client.persist([z, *quick]))
                barrier(client)
            runs = run_metrics(out, 2)
        assert sigterm_seconds(proc) < 10
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not set(want1) & set(want2), (want1, want2)
    for (d, m), want in zip(runs, (want1, want2)):
        tasks = m["roastop"]["tasks"]
        got = {p["prefix"]: p["count"] for p in tasks["prefixes"]}
        assert got == dict(want), (d.name, got, dict(want))
        assert tasks["count"] == sum(want.values())
        section = tasks_section(d / "summary.txt")
        # the collector's route brings the tasks, and /eventstream closes
        assert f"Dask tasks (route): {tasks['count']} tasks" in section, section
        for prefix in list(want)[:10]:
            assert re.search(rf"^  {re.escape(prefix)} +{want[prefix]} ", section, re.M), section
    # the stdout summary is the newest run's summary.txt
    stdout = (tmp_path / "roastop.stdout").read_text()
    assert tasks_section(stdout) == tasks_section(runs[1][0] / "summary.txt")
    r = subprocess.run([ROASTOP, "--replay", str(tmp_path / "rec.jsonl"), "--speed", "0",
                        "--headless", "--output", str(tmp_path / "replayed")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    replayed = [no_nan((d / "metrics.json").read_text()) for d in run_dirs(tmp_path / "replayed")]
    assert [m["roastop"]["tasks"] for m in replayed] == [m["roastop"]["tasks"] for _, m in runs]


def replay_shows_tasks(tmp_path, slow_worker):
    """The replay's screen has the task view as live had it: its feed's
    state from the recorded counters, the straggler named with its worker."""
    import shutil
    if shutil.which("tmux") is None:
        return
    from test_screen import Screen
    s = Screen(tmp_path, ["--replay", tmp_path / "rec.jsonl", "--speed", "0"], cols=200, rows=60,
               out=tmp_path / "replayed-tmux")
    try:
        s.wait_for("0 Tasks", timeout=60)
        s.keys("0")
        s.wait_for("task stream (connected)", timeout=60)
        s.wait_for("latest straggler: nap on " + slow_worker, timeout=60)
    finally:
        s.close()


def test_scheduler_restart(tmp_path, cluster):
    proc, err = start(tmp_path, cluster)
    try:
        wait_for(lambda: connects(err) >= 1, timeout=60)
        cluster.kill_scheduler()
        wait_for(lambda: "task stream lost" in err.read_text(), timeout=60)
        cluster.start_scheduler()
        wait_for(lambda: connects(err) >= 2, timeout=120)
        tasks, stream = stop(proc, tmp_path / "out")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert stream["connects"] >= 2
    assert stream["disconnects"] >= 1
    assert stream["state"] == "connected"


def run_work(cluster):
    """dask.array, 30 quick delayed calls and one slow one; the slow task's
    worker."""
    import dask.array as da
    from dask import delayed
    from distributed import Client, wait
    import taskstream_tasks as tt
    with Client(cluster.address) as client:
        wait(client.persist((da.ones((400, 400), chunks=(50, 50)) + 1).sum(axis=0)))
        wait(client.persist([delayed(tt.inc)(i) for i in range(30)]))
        fut = client.persist(delayed(tt.nap, pure=False)(3.0))
        wait(fut)
        return list(client.who_has(fut).values())[0][0]


@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_view_in_tmux(tmp_path, cluster, cols, rows):
    import shutil
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    from test_screen import DURATION, TASKS_TAB, Screen
    s = Screen(tmp_path, ["--scheduler", cluster.dashboard_url, "--task-stream", "--listen", "127.0.0.1:0",
                          "--no-auth", "--checkpoint", 0], cols=cols, rows=rows)
    try:
        s.wait_for(TASKS_TAB, timeout=60)  # the stream connected: its view offered
        s.keys("0")
        s.wait_for("task stream (connected)", timeout=60)
        worker = run_work(cluster)
        short = worker.replace("tcp://", "")
        # the table's rows are drawn after its title: the title naming the
        # straggler and the sum prefix's row whole to its P90 (a duration
        # ends in its unit: one half drawn never matches), on one capture
        whole = re.compile(r"^\s*\S\s+sum\s+\d+\s+\S+\s+(?:" + DURATION + r"|n/a)\s+(?:"
                           + DURATION + r"|n/a)(?:\s|$)", re.M)
        text = s.wait_for(["latest straggler: nap on " + worker, whole], timeout=120)
        lines = text.splitlines()
        assert len(lines) == rows
        # every view's key on the tab line, the one shown named whole (at 80
        # columns the others named whole from the left while they fit, the
        # rest their key alone), the findings' last
        keys = re.findall(r"(?:^| )([\df])(?= |$)", lines[0])
        assert keys == list("1234567890f") and " 0 Tasks" in lines[0], lines[0]
        assert any(line.startswith(short[:15]) for line in lines), text  # its lane
        row = [line for line in lines if line.split()[1:2] == ["sum"]]
        assert row and row[0].split()[2] == "64", text  # 8 x 8 chunks
    finally:
        s.close()


def test_hostile_stream_is_counted(tmp_path):
    """A fake /eventstream (tornado, loopback) sends a message over 64 KiB, one
    that is not JSON, a transition without times and one valid task: the bad
    ones are counted by reason, the good one is taken, roastop stays up."""
    import asyncio
    import threading
    from tornado.web import Application
    from tornado.websocket import WebSocketHandler
    from dask_cluster import free_port

    good = ('{"key": "inc-0f", "name": "transition", "worker": "tcp://127.0.0.1:1", '
            '"action": "compute", "start": 1795561108.0, "stop": 1795561108.5, "status": "OK"}')
    sent = threading.Event()

    class Stream(WebSocketHandler):
        def open(self):
            self.write_message('{"name": "transition", "key": "' + "x" * (100 << 10) + '"}')
            self.write_message("not json {")
            self.write_message('{"name": "transition", "key": "x-1", "action": "compute"}')
            self.write_message(good)
            sent.set()

    port = free_port()
    loop = asyncio.new_event_loop()

    def serve():
        asyncio.set_event_loop(loop)
        Application([(r"/eventstream", Stream)]).listen(port, address="127.0.0.1")
        loop.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    cluster = type("C", (), {"dashboard_url": f"http://127.0.0.1:{port}"})
    proc, err = start(tmp_path, cluster)
    try:
        wait_for(lambda: connects(err) >= 1, timeout=60)
        wait_for(sent.is_set, timeout=60)
        tasks, stream = stop(proc, tmp_path / "out")
    finally:
        if proc.poll() is None:
            proc.kill()
        loop.call_soon_threadsafe(loop.stop)
    st = stream
    assert st["too_large"] == 1
    assert st["rejected_by"] == {"json": 1, "shape": 1}  # a reason at 0 is left out
    assert st["tasks"] == 1 and tasks["count"] == 1
    assert tasks["prefixes"][0]["prefix"] == "inc"
    assert tasks["prefixes"][0]["compute_p50_seconds"] == pytest.approx(0.5, rel=0.01)
