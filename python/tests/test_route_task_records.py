"""The route's task records (tasks.json, version 5) off a stand-in scheduler
with distributed's own TaskStreamPlugin: the plugin the dashboard added is
reused and one is added only when absent; each reader's cursor is its own
(two readers both get every record, none taken from the other); a reader
without a cursor gets none and the cursor of now (as /eventstream: the
tasks from its start); a cursor of a plugin put in the first's place reads
the new one from its oldest record; an answer
carries at most TASKS_MAX records and says how many are left; what the
bounded buffer dropped before a reader came back is counted as lost; a task
that raised is left out, as /eventstream leaves it."""
import json

import pytest

from roastop import route

pytest.importorskip("distributed")
testing = pytest.importorskip("tornado.testing")

from distributed.diagnostics.task_stream import TaskStreamPlugin  # noqa: E402
from test_route_body import scheduler, worker  # noqa: E402


def finish(plugin, key, status="OK", finish="memory", t=100.0):
    plugin.transition(key, "processing", finish, worker="tcp://127.0.0.1:4000",
                      status=status, startstops=[
                          {"action": "transfer", "start": t, "stop": t + 0.5,
                           "source": "tcp://127.0.0.1:4001"},
                          {"action": "compute", "start": t + 0.5, "stop": t + 2.0}])


class RouteTasks(testing.AsyncHTTPTestCase):
    def get_app(self):
        self.sched = scheduler([worker(0, 10, 1.0, 10)])
        return self.sched.http_application

    def tasks(self, since=None):
        r = self.fetch(route.TASKS_ROUTE + (f"?since={since}" if since else ""))
        assert r.code == 200
        b = json.loads(r.body)
        return b, f'{b["stream"]}.{b["next"]}'

    def test_plugin_added_once_and_reused(self):
        route.install(self.sched)
        plugin = self.sched.plugins["task-stream"]
        assert isinstance(plugin, TaskStreamPlugin)
        route.install(self.sched)  # a second run: the same plugin
        assert self.sched.plugins["task-stream"] is plugin
        other = scheduler([])
        dashboards = TaskStreamPlugin(other)
        other.plugins["task-stream"] = dashboards
        route.install(other)
        assert other.plugins["task-stream"] is dashboards

    def test_two_readers_each_get_every_record(self):
        plugin = TaskStreamPlugin(self.sched)
        self.sched.plugins["task-stream"] = plugin
        finish(plugin, "before-install")
        route.install(self.sched)
        first, cur_a = self.tasks()
        assert first["tasks"] == [] and first["next"] == 1  # from now on
        _, cur_b = self.tasks()
        finish(plugin, ("inc-0123456789abcdef0123456789abcdef", 0))
        a, cur_a = self.tasks(cur_a)
        b, cur_b = self.tasks(cur_b)
        assert a["tasks"] == b["tasks"] == [[
            ["inc-0123456789abcdef0123456789abcdef", 0], "tcp://127.0.0.1:4000", "OK",
            "transfer", 100.0, 100.5, "compute", 100.5, 102.0]]
        assert a["lost"] == 0 and a["left"] == 0 and a["next"] == 2
        finish(plugin, "x-1")
        a, cur_a = self.tasks(cur_a)
        assert [r[0] for r in a["tasks"]] == ["x-1"]
        finish(plugin, "x-2")
        b, cur_b = self.tasks(cur_b)
        assert [r[0] for r in b["tasks"]] == ["x-1", "x-2"]
        a, cur_a = self.tasks(cur_a)
        assert [r[0] for r in a["tasks"]] == ["x-2"]
        assert self.tasks(cur_a)[0]["tasks"] == []

    def test_cap_and_lost(self):
        route.install(self.sched)
        plugin = self.sched.plugins["task-stream"]
        _, cur = self.tasks()
        for i in range(route.TASKS_MAX + 5):
            finish(plugin, f"y-{i}")
        b, cur = self.tasks(cur)
        assert len(b["tasks"]) == route.TASKS_MAX and b["left"] == 5 and b["lost"] == 0
        b, cur = self.tasks(cur)
        assert [r[0] for r in b["tasks"]] == [f"y-{route.TASKS_MAX + i}" for i in range(5)]
        assert b["left"] == 0
        # a buffer that keeps 3: the reader away for 5 more lost 2
        plugin.buffer = type(plugin.buffer)(plugin.buffer, maxlen=3)
        for i in range(5):
            finish(plugin, f"z-{i}")
        b, cur = self.tasks(cur)
        assert b["lost"] == 2 and [r[0] for r in b["tasks"]] == ["z-2", "z-3", "z-4"]

    def test_erred_left_out_and_replaced_plugin(self):
        route.install(self.sched)
        plugin = self.sched.plugins["task-stream"]
        _, cur = self.tasks()
        finish(plugin, "boom-1", status="error", finish="erred")
        finish(plugin, "ok-1")
        b, cur = self.tasks(cur)
        assert [r[0] for r in b["tasks"]] == ["ok-1"] and b["next"] == 2
        # a plugin put in its place (a cursor of another stream): from its oldest
        fresh = TaskStreamPlugin(self.sched)
        self.sched.plugins["task-stream"] = fresh
        finish(fresh, "new-1")
        b, _ = self.tasks(cur)
        assert [r[0] for r in b["tasks"]] == ["new-1"] and b["lost"] == 0
