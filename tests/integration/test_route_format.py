"""The collector's scheduler route, version 2, on a real `dask scheduler` with
two `dask worker` processes: the body carries the scheduler's own worker facts
and numbers (docs/scheduler.md, "The route"), and a scheduler that already
serves an earlier collector's version-1 handler is moved to version 2 in place
(tornado cannot remove a handler; the route's path stays)."""
import base64
import json
import struct
import urllib.request

import pytest

from dask_cluster import Cluster, wait_for
from dask_tasks import install_route_v1, worker_truth
from roastop import route


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def state(cluster):
    with urllib.request.urlopen(cluster.dashboard_url + route.ROUTE, timeout=10) as r:
        return json.load(r)


def numbers(body):
    """worker_state: six float64 a worker, little-endian, base64."""
    raw = base64.b64decode(body["worker_state"], validate=True)
    n = len(body["workers"])
    assert len(raw) == 48 * n
    vals = struct.unpack(f"<{6 * n}d", raw)
    return [vals[6 * i:6 * i + 6] for i in range(n)]


def test_version_2_carries_the_schedulers_own_numbers(cluster):
    client = cluster.client()
    routes, why = route.install_on(client)
    assert why is None and route.ROUTE in routes
    body = state(cluster)
    want = client.run_on_scheduler(worker_truth)
    client.close()
    assert body["roastop_route"] == 2 and body["n_workers"] == 2
    assert len(body["worker_status"]) == 2
    for facts, status, nums in zip(body["workers"], body["worker_status"], numbers(body)):
        w = want[facts[0]]
        assert facts == w["facts"] and status == w["status"] == "running"
        memory, managed, spilled, cpu, executing, processing = nums
        assert 0 < memory < w["facts"][4]  # a live process, under its limit
        assert managed == min(memory, w["managed"]) and spilled == w["spilled"]
        assert (executing, processing) == (w["executing"], w["processing"]) == (0, 0)
        assert 0 <= cpu <= 100 * w["facts"][3]
    assert body["tasks_processing"] == 0


def test_an_earlier_collectors_handler_is_moved_to_version_2(cluster):
    client = cluster.client()
    client.run_on_scheduler(install_route_v1)
    assert state(cluster)["roastop_route"] == 1
    routes, why = route.install_on(client)
    assert why is None and routes == [route.ROUTE]
    wait_for(lambda: state(cluster)["roastop_route"] == 2, timeout=60)
    assert len(state(cluster)["workers"]) == 2
    routes, why = route.install_on(client)  # a second run: the span only
    client.close()
    assert routes == [route.ROUTE] and state(cluster)["roastop_route"] == 2
