"""Two roastops on one scheduler's /eventstream, without the collector's
route (issue 33): distributed installs the stream's scheduler plugin under
one fixed name, so B's stream replaces A's plugin and B quitting removes
whichever is installed. roastop A checks its stream against the scheduler's
own count of finished tasks at every poll: it says in its log that it fell
behind, reconnects, and marks its task figures a lower bound, in
metrics.json and summary.txt; a figure not so marked is the whole count.
Never a false figure (docs/scheduler.md, "Task figures without the
route")."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROASTOP, load_metrics, run_dir, sigterm_seconds
from dask_cluster import Cluster, wait_for

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BATCH = 30


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2)
    yield c
    c.stop()


def start(d, cluster):
    d.mkdir()
    err = d / "roastop.stderr"
    proc = subprocess.Popen([ROASTOP, *map(str, [
        "--headless", "--listen", "127.0.0.1:0", "--no-auth", "--scheduler",
        cluster.dashboard_url, "--task-stream", "--interval", 0.5, "--output", d / "out",
        "--checkpoint", 0, "--duration", 600])], stdout=open(d / "roastop.stdout", "w"),
        stderr=open(err, "w"), stdin=subprocess.DEVNULL)
    wait_for(lambda: "task stream connected" in err.read_text(), timeout=60)
    return proc, err


def batch(client):
    """BATCH calls of one prefix (inc), new keys each time, all finished and
    their stream messages written (a round trip through the scheduler's loop)."""
    from dask import delayed
    from distributed import wait
    import taskstream_tasks as tt
    wait(client.compute([delayed(tt.inc, pure=False)(i) for i in range(BATCH)]))
    client.run_on_scheduler(lambda: None)


def finish(proc, d):
    assert sigterm_seconds(proc) < 10
    r = load_metrics(d / "out")["roastop"]
    summary = (run_dir(d / "out") / "summary.txt").read_text()
    return r["tasks"], r["task_stream"], summary


def inc_count(tasks):
    return sum(p["count"] for p in tasks["prefixes"] if p["prefix"] == "inc")


def no_false_figure(tasks, summary, whole):
    """A count short of the truth is marked a lower bound, with its reason,
    in metrics.json and in summary.txt."""
    if inc_count(tasks) == whole and not tasks.get("count_lower_bound"):
        return
    assert tasks["count_lower_bound"] is True, tasks
    assert tasks["missed_at_least"] >= 1
    assert "replaced or removed its plugin" in tasks["count_reason"]
    assert "Dask tasks (/eventstream): at least" in summary, summary
    assert "a lower bound: the stream missed at least" in summary


def test_second_watcher_comes_and_goes(tmp_path, cluster):
    a, a_err = start(tmp_path / "a", cluster)
    b = None
    try:
        client = cluster.client()
        b, _ = start(tmp_path / "b", cluster)
        batch(client)
        b_tasks, _, b_summary = finish(b, tmp_path / "b")
        batch(client)
        # A's checks: two polls to see the scheduler's count grow past it
        wait_for(lambda: "task stream behind the scheduler" in a_err.read_text(), timeout=30)
        wait_for(lambda: a_err.read_text().count("task stream connected") >= 2, timeout=60)
        client.close()
        a_tasks, a_stream, a_summary = finish(a, tmp_path / "a")
    finally:
        for p in (a, b):
            if p is not None and p.poll() is None:
                p.kill()
    assert a_stream["behind"] >= 1 and a_stream["missed"] >= 1, a_stream
    assert a_stream["checks"] >= 2
    assert a_stream["connects"] >= 2  # it reconnected
    # B's plugin took A's place before the first batch: A missed it
    assert inc_count(a_tasks) < 2 * BATCH
    no_false_figure(a_tasks, a_summary, 2 * BATCH)
    # a count and its shortfall never add past the scheduler's own
    assert inc_count(a_tasks) + a_tasks["missed_at_least"] <= 2 * BATCH
    no_false_figure(b_tasks, b_summary, BATCH)
    log = (tmp_path / "a" / "roastop.stderr").read_text()
    assert "task counts are a lower bound" in log


def test_alone_is_never_behind(tmp_path, cluster):
    """One watcher: checked at every poll, never behind, the whole count."""
    a, _ = start(tmp_path / "a", cluster)
    try:
        client = cluster.client()
        batch(client)
        batch(client)
        client.close()
        # a few checks (--interval 0.5) after the batches, which compare the
        # stream with a count that holds them; fewer would only make this
        # test weaker, never fail it
        time.sleep(2)
        tasks, stream, summary = finish(a, tmp_path / "a")
    finally:
        if a.poll() is None:
            a.kill()
    assert stream["checks"] >= 3, str(stream)
    assert stream["behind"] == 0 and stream["missed"] == 0, stream
    assert inc_count(tasks) == 2 * BATCH
    assert "count_lower_bound" not in tasks
    assert "at least" not in summary
