"""The scheduler route's version-4 body off a stand-in scheduler (tornado's
own test server, WorkerState-shaped objects): a heartbeat that has not
measured memory or CPU yet gives memory 0 (as WorkerState.memory does) and a
CPU of null (NaN in the packed float64; a count's null is -1 in its int64),
and the other numbers stay exact; each worker's occupancy is one float64
(NaN for null);
a client that names the current facts token gets the body without the
facts and statuses, and a new token once they change; the failed tasks per
prefix since the route's install (the run's start) and the oldest tasks
executing now, a task finished since its worker's heartbeat left out; the
fine-metric rows, poll after poll, as the metrics change, come and go."""
import base64
import json
import math
import struct
import types

import pytest

from roastop import route

pytest.importorskip("distributed")
testing = pytest.importorskip("tornado.testing")
web = pytest.importorskip("tornado.web")


def worker(i, memory, cpu, nbytes):
    from distributed.core import Status
    return types.SimpleNamespace(
        address=f"tcp://127.0.0.1:{4000 + i}", name=i, host="127.0.0.1", nthreads=2,
        memory_limit=2 ** 31, pid=100 + i, nbytes=nbytes, executing={}, processing={1, 2},
        status=Status.running, occupancy=0.25 + i if memory is not None else None,
        metrics={"memory": memory, "cpu": cpu, "spilled_bytes": {"disk": 7}})


class Task:
    """TaskState-shaped: hashable by identity, as ws.executing's keys are."""
    def __init__(self, key, prefix, state="processing", on=None):
        self.key, self.state, self.processing_on = key, state, on
        self.prefix = types.SimpleNamespace(name=prefix)


def scheduler(workers):
    s = types.SimpleNamespace(
        http_application=web.Application(), workers={w.address: w for w in workers},
        extensions={}, task_prefixes={}, cumulative_worker_metrics={}, transition_counter=0,
        total_nthreads=2 * len(workers), id="Scheduler-test", plugins={})

    def add_plugin(plugin, *, name, idempotent=False):
        if not (idempotent and name in s.plugins):
            s.plugins[name] = plugin
    s.add_plugin = add_plugin
    return s


def fine_rows(metrics):
    """The rows the route must serve, written out plainly."""
    out = []
    for k, v in metrics.items():
        if not isinstance(k, tuple) or len(k) < 3 or isinstance(v, bool) \
                or not isinstance(v, (int, float)) or not math.isfinite(v):
            continue
        p = [str(x) for x in k]
        if len(p) == 3:
            p.insert(1, "")
        out.append([p[0], p[1], p[2], p[-1], v])
    return out


class RouteBody(testing.AsyncHTTPTestCase):
    def get_app(self):
        self.sched = scheduler([worker(0, 2 ** 40 + 3, 12.5, 10), worker(1, None, None, 10)])
        return self.sched.http_application

    def body(self, have=None):
        r = self.fetch(route.ROUTE + (f"?have={have}" if have else ""))
        assert r.code == 200
        return json.loads(r.body)

    def test_unmeasured_heartbeat_values(self):
        route.install(self.sched)
        b = self.body()
        assert b["roastop_route"] == 5 and b["n_workers"] == 2 and b["tasks_processing"] == 4
        assert b["workers"] == [["tcp://127.0.0.1:4000", "0", "127.0.0.1", 2, 2 ** 31, 100],
                                ["tcp://127.0.0.1:4001", "1", "127.0.0.1", 2, 2 ** 31, 101]]
        assert b["worker_status"] == ["running", "running"]
        raw = base64.b64decode(b["worker_state"], validate=True)
        cols = struct.unpack("<6q2d4q", raw)  # six columns of two workers
        first, second = cols[0::2], cols[1::2]
        assert first == (2 ** 40 + 3, 10, 7, 12.5, 0, 2)  # nbytes: roastop caps it
        assert second[:3] == (0, 10, 7) and math.isnan(second[3]) and second[4:] == (0, 2)
        # one float64 a worker, NaN (null) for an occupancy that is not a number
        occ = struct.unpack("<2d", base64.b64decode(b["worker_occupancy"], validate=True))
        assert occ[0] == 0.25 and math.isnan(occ[1])

    def test_facts_follow_the_workers(self):
        route.install(self.sched)
        assert len(self.body()["workers"]) == 2
        w = worker(2, 5, 1.0, 0)
        self.sched.workers[w.address] = w
        b = self.body()
        assert [f[0] for f in b["workers"]][-1] == w.address
        assert len(b["worker_status"]) == 3 and len(b["worker_state"]) == 3 * 64

    def test_facts_left_out_while_the_token_holds(self):
        route.install(self.sched)
        full = self.body()
        token = full["facts_token"]
        short = self.body(have=token)
        assert "workers" not in short and "worker_status" not in short
        assert short["facts_token"] == token and short["worker_state"] == full["worker_state"]
        assert "workers" in self.body(have=token + "0")  # not the current token: all
        from distributed.core import Status
        self.sched.workers["tcp://127.0.0.1:4001"].status = Status.paused
        b = self.body(have=token)
        assert b["worker_status"] == ["running", "paused"] and b["facts_token"] != token

    def test_heartbeat_without_cpu(self):
        """A heartbeat dict without "cpu" (not measured yet) gives null, as
        metrics.get("cpu") did, a count that is not a whole number gives -1
        (null), and the other numbers stay."""
        del self.sched.workers["tcp://127.0.0.1:4000"].metrics["cpu"]
        self.sched.workers["tcp://127.0.0.1:4001"].metrics["spilled_bytes"]["disk"] = None
        route.install(self.sched)
        cols = struct.unpack("<6q2d4q", base64.b64decode(self.body()["worker_state"]))
        assert math.isnan(cols[6]) and math.isnan(cols[7])  # the cpu column
        assert cols[0:6] == (2 ** 40 + 3, 0, 10, 10, 7, -1)
        assert cols[8:] == (0, 0, 2, 2)

    def test_failed_and_running_tasks(self):
        import time
        w0, w1 = self.sched.workers.values()
        now = time.time()
        w0.last_seen, w1.last_seen = now - 2, now - 1
        stuck = Task(("nap-ab", 0), "nap", on=w0)
        done = Task("inc-1", "inc", state="memory", on=w0)  # finished since the heartbeat
        w0.executing = {stuck: 40.0, done: 50.0}
        w1.executing = {Task(f"sum-{i}", "sum", on=w1): float(i) for i in range(20)}
        route.install(self.sched)  # the run begins: its failures count from here
        self.sched.task_prefixes = {
            f"p{i}": types.SimpleNamespace(state_counts={"erred": i % 3, "memory": 1})
            for i in range(200)}
        b = self.body()
        assert len(b["erred"]) == route.ERRED_MAX and b["erred"][0] == ["p1", 1]
        assert b["erred_left_out"] == 133 - route.ERRED_MAX  # 133 of 200 have erred > 0
        rows = b["running"]
        assert len(rows) == route.RUNNING_MAX and b["running_left_out"] == 22 - len(rows)
        key, prefix, worker, seconds = rows[0]
        assert (key, prefix, worker) == ('["nap-ab",0]', "nap", w0.address)
        assert 42 <= seconds < 60  # 40 s at the heartbeat, 2 s before now
        assert [r[1] for r in rows[1:]] == ["sum"] * 15
        assert [r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True)
        assert "inc-1" not in {r[0] for r in rows}
        assert self.body()["running"][0][:3] == rows[0][:3]  # unchanged: the rows kept

    def test_idle_cluster(self):
        route.install(self.sched)
        b = self.body()
        assert (b["erred"], b["erred_left_out"], b["running"], b["running_left_out"]) == \
            ([], 0, [], 0)


    def test_failed_counted_from_each_install(self):
        """Each install (a run's start) counts the failures from there, and
        says since when; the scheduler's earlier ones are not listed."""
        pf = types.SimpleNamespace(state_counts={"erred": 4})
        self.sched.task_prefixes = {"process": pf}
        route.install(self.sched)
        first = self.body()
        assert first["erred"] == [] and first["erred_left_out"] == 0
        pf.state_counts["erred"] = 7
        self.sched.transition_counter += 1
        assert self.body()["erred"] == [["process", 3]]
        route.install(self.sched)  # the next run: the same handler, counted again
        second = self.body()
        assert second["erred"] == [] and second["erred_since"] > first["erred_since"]
        pf.state_counts["erred"] = 9
        self.sched.transition_counter += 1
        assert self.body()["erred"] == [["process", 2]]

    def test_rows_follow_each_change(self):
        m = self.sched.cumulative_worker_metrics
        m.update({("execute", "sum", "thread-cpu", "seconds"): 1.5,
                  ("execute", "sum", "thread-noncpu", "seconds"): 0.25,
                  ("gather-dep", "network", "bytes"): 1024,
                  "latency": 0.01, ("execute", "inc", "disk-read", "bytes"): math.nan})
        route.install(self.sched)
        changes = [
            lambda: m.__setitem__(("execute", "sum", "thread-cpu", "seconds"), 1.5 + 2.0),
            lambda: m.__setitem__(("execute", "inc", "thread-cpu", "seconds", "x"), 7.0),
            lambda: m.pop(("execute", "sum", "thread-noncpu", "seconds")),
            lambda: m.__setitem__(("execute", "inc", "disk-read", "bytes"), 4096),
            lambda: m.__setitem__(("gather-dep", "network", "bytes"), math.inf),
            lambda: m.__setitem__(("gather-dep", "network", "bytes"), 2048),
            lambda: m.__setitem__(("execute", "sum", "thread-cpu", "seconds"), float("3.5")),
            lambda: None,
        ]
        assert self.body()["fine"] == fine_rows(m)
        for change in changes:
            change()
            assert self.body()["fine"] == fine_rows(m)
        assert len(fine_rows(m)) == 4
