"""The collector's scheduler route, version 5 (version 4's body and
tasks.json beside it), on a real `dask scheduler` with
two `dask worker` processes: the body carries the scheduler's own worker facts
and numbers (docs/scheduler.md, "The route"), leaves the facts out for a
client that names their token, and a scheduler that already serves an earlier
collector's version-1, 2 or 3 handler is moved to version 5 in place
(tornado cannot remove a handler; the route's path stays). roastop asks with
the token and still records every worker's facts in every sample."""
import base64
import json
import os
import signal
import struct
import subprocess
import urllib.request

import pytest

from conftest import ROASTOP
from dask_cluster import Cluster, wait_for
from dask_tasks import install_route_old, record_route_answers, route_answers, worker_truth
from roastop import route


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def state(cluster, have=None):
    query = f"?have={have}" if have else ""
    with urllib.request.urlopen(cluster.dashboard_url + route.ROUTE + query, timeout=10) as r:
        return json.load(r)


def numbers(body, n):
    """worker_state: six columns of n little-endian numbers, base64: int64
    but cpu's float64."""
    raw = base64.b64decode(body["worker_state"], validate=True)
    assert len(raw) == 48 * n
    vals = struct.unpack(f"<{3 * n}q{n}d{2 * n}q", raw)
    return [vals[i::n] for i in range(n)]


def tasks(cluster, since=None):
    query = f"?since={since}" if since else ""
    with urllib.request.urlopen(cluster.dashboard_url + route.TASKS_ROUTE + query,
                                timeout=10) as r:
        return json.load(r)


def test_version_5_carries_the_schedulers_own_numbers(cluster):
    client = cluster.client()
    routes, why = route.install_on(client)
    assert why is None and route.ROUTE in routes
    body = state(cluster)
    want = client.run_on_scheduler(worker_truth)
    assert body["roastop_route"] == 5 and body["n_workers"] == 2
    # nothing failed, nothing running: measured, empty
    assert (body["erred"], body["erred_left_out"]) == ([], 0)
    assert (body["running"], body["running_left_out"]) == ([], 0)
    assert len(body["worker_status"]) == 2
    occupancy = struct.unpack("<2d", base64.b64decode(body["worker_occupancy"], validate=True))
    for facts, status, nums, occ in zip(body["workers"], body["worker_status"], numbers(body, 2),
                                        occupancy):
        w = want[facts[0]]
        assert occ == w["occupancy"] == 0  # idle: no work expected of it
        assert facts == w["facts"] and status == w["status"] == "running"
        memory, nbytes, spilled, cpu, executing, processing = nums
        assert 0 < memory < w["facts"][4]  # a live process, under its limit
        assert min(memory, nbytes) == w["managed"] and spilled == w["spilled"]
        assert (executing, processing) == (w["executing"], w["processing"]) == (0, 0)
        assert 0 <= cpu <= 100 * w["facts"][3]
    assert body["tasks_processing"] == 0
    short = state(cluster, have=body["facts_token"])
    assert "workers" not in short and "worker_status" not in short
    assert short["facts_token"] == body["facts_token"] and len(numbers(short, 2)) == 2
    assert "workers" in state(cluster, have="another")
    client.close()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_earlier_collectors_handler_is_moved_to_version_5(cluster, version):
    client = cluster.client()
    client.run_on_scheduler(install_route_old, version=version)
    assert state(cluster)["roastop_route"] == version
    routes, why = route.install_on(client)
    assert why is None and routes == [route.ROUTE]
    wait_for(lambda: state(cluster)["roastop_route"] == 5, timeout=60)
    assert len(state(cluster)["workers"]) == 2
    # tasks.json added beside it: a real task's record through a cursor
    first = tasks(cluster)
    assert first["tasks"] == [] and first["lost"] == 0
    assert client.submit(sum, [1, 2], key="total-1").result() == 3
    client.run_on_scheduler(lambda: None)
    rows = tasks(cluster, f'{first["stream"]}.{first["next"]}')["tasks"]
    assert [r[0] for r in rows] == ["total-1"] and rows[0][2] == "OK", rows
    assert "compute" in rows[0][3::3]
    routes, why = route.install_on(client)  # a second run: the span only
    client.close()
    assert routes == [route.ROUTE] and state(cluster)["roastop_route"] == 5


def recorded_samples(rec):
    with open(rec) as f:
        events = [json.loads(line) for line in f if line.strip()]
    return [e for e in events if e.get("type") == "sample" and e.get("source") == "state"]


def test_roastop_names_its_facts_and_records_whole_samples(tmp_path, cluster):
    """roastop asks with the token of the facts it holds and gets the short
    body; every sample it records carries every worker's facts all the same,
    and a worker that leaves (new facts, a new token) is seen."""
    client = cluster.client()
    route.install_on(client)
    client.run_on_scheduler(record_route_answers)
    want = client.run_on_scheduler(worker_truth)
    rec = tmp_path / "rec.jsonl"
    p = subprocess.Popen([ROASTOP, "--headless", "--no-auth", "--listen", "127.0.0.1:0",
                          "--scheduler", cluster.dashboard_url, "--interval", "0.5",
                          "--checkpoint", "0", "--output", str(tmp_path / "m"),
                          "--record", str(rec)],
                         stdout=subprocess.DEVNULL, stderr=open(tmp_path / "err.txt", "w"))
    try:
        def shorts():
            return sum(short for _, short in client.run_on_scheduler(route_answers))
        wait_for(lambda: shorts() >= 3, timeout=60, step=0.5)
        os.killpg(cluster.workers[1].pid, signal.SIGTERM)
        cluster.workers[1].wait(timeout=60)
        wait_for(lambda: len(client.scheduler_info()["workers"]) == 1, timeout=60)
        before = shorts()
        wait_for(lambda: shorts() >= before + 3, timeout=60, step=0.5)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    answers = client.run_on_scheduler(route_answers)
    client.close()
    assert answers[0] == (None, False)  # nothing held yet: asked without a token
    assert all(have for have, short in answers if short)
    samples = recorded_samples(rec)
    assert len(samples) >= len(answers) - 2  # a poll answered as roastop stopped
    assert {len(s["workers"]) for s in samples} == {1, 2}
    assert len(samples[-1]["workers"]) == 1
    for s in samples:
        for w in s["workers"]:
            facts = want[w["id"]]["facts"]
            assert [w["id"], w["name"], w["host"], w["nthreads"], w["memory_limit"],
                    w["pid"]] == facts
            assert w["status"] == "running" and w["memory_bytes"] > 0
