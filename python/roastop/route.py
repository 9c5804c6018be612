"""The scheduler route roastop polls: GET <dashboard>/roastop/v1/state.json.

Dask serves its fine performance metrics (Scheduler.cumulative_worker_metrics)
over no HTTP route, and /json/identity.json answers 500 while tasks run
(dask/distributed#8370). MetricsCollector therefore adds one small read-only
tornado handler to the running scheduler's HTTP application, through
client.run_on_scheduler: no restart, no configuration.

The scheduler usually has no roastop package installed, so install() and the
handler it defines travel by value: this module is registered with
cloudpickle.register_pickle_by_value before the call, and install() imports
only what a scheduler has (tornado, distributed, the standard library).

The route stays after the run (tornado cannot remove a handler) and keeps
serving the run's span, so the heartbeats that land after run end still
count; it is read-only and serves what identity.json serves plus the fine
metrics. Installing again (a second run) replaces the span instead of adding
a second handler. The body's format is documented in
docs/protocol.md ("Scheduler route").
"""
import sys

ROUTE = "/roastop/v1/state.json"
ROUTE_VERSION = 1


def install(dask_scheduler=None, span_id=None):
    """Runs ON the scheduler (client.run_on_scheduler). Returns the routes now
    served, for the client to log."""
    import json
    import math
    import time

    import distributed
    from tornado import web

    sched = dask_scheduler
    state = getattr(sched, "_roastop_route", None)
    if state is not None:
        state["span_id"] = span_id
        return state["routes"]

    def num(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return v if math.isfinite(v) else None

    def fine_rows(metrics):
        rows = []
        for key, value in metrics.items():
            value = num(value)
            if value is None or not isinstance(key, tuple) or len(key) < 3:
                continue  # plain-string keys are heartbeat digests, not fine metrics
            parts = [str(k) for k in key]
            if len(parts) == 3:
                parts.insert(1, "")  # (context, activity, unit): no task prefix
            rows.append([parts[0], parts[1], parts[2], parts[-1], value])
        return rows

    def worker_row(ws):
        mem = ws.memory
        m = ws.metrics or {}
        return {
            "address": ws.address, "name": str(ws.name), "host": ws.host,
            "nthreads": ws.nthreads, "memory_limit": num(ws.memory_limit),
            "memory": num(mem.process), "managed_bytes": num(mem.managed),
            "spilled_bytes": num(mem.spilled), "cpu": num(m.get("cpu")),
            "executing": len(ws.executing), "processing": len(ws.processing),
            "status": ws.status.name, "last_seen": num(ws.last_seen),
            "pid": num(getattr(ws, "pid", None)),
        }

    def span_rows(span_id):
        ext = sched.extensions.get("spans")
        span = ext.spans.get(span_id) if (ext is not None and span_id) else None
        if span is None:
            return None
        return {"id": span_id, "name": list(span.name), "fine": fine_rows(span.cumulative_worker_metrics)}

    PENDING = ("waiting", "no-worker", "queued", "processing")

    def task_progress(span_id):
        """(done, total) over the run's span, (None, None) when there is
        none: done is every task no longer waiting, queued or running. The
        task groups the scheduler holds mix every run's tasks (a reused
        scheduler showed an earlier run's "324 of 324")."""
        ext = sched.extensions.get("spans")
        span = ext.spans.get(span_id) if (ext is not None and span_id) else None
        if span is None:
            return None, None
        states = dict(span.states)
        total = sum(states.values())
        return total - sum(states.get(k, 0) for k in PENDING), total

    def task_counters():
        """(done, total) since the scheduler started, never decreasing:
        TaskPrefix.state_counts counts transitions into each state, and every
        task enters "waiting" once per computation and "memory" or "erred"
        when it finishes. roastop shows their growth since the run began."""
        c = {"waiting": 0, "memory": 0, "erred": 0}
        for pf in list(sched.task_prefixes.values()):
            counts = getattr(pf, "state_counts", None) or {}
            for k in c:
                c[k] += counts.get(k, 0)
        done = c["memory"] + c["erred"]
        return done, max(done, c["waiting"])

    def body():
        workers = [worker_row(ws) for ws in list(sched.workers.values())]
        done, total = task_progress(state["span_id"])
        done_all, total_all = task_counters()
        return {
            "roastop_route": ROUTE_VERSION, "dask_version": distributed.__version__,
            "scheduler_id": str(sched.id), "time": time.time(),
            "n_workers": len(workers),
            "total_threads": sched.total_nthreads,
            "tasks_processing": sum(w["processing"] for w in workers),
            "tasks_done": done, "tasks_total": total,
            "tasks_done_cumulative": done_all, "tasks_total_cumulative": total_all,
            "workers": workers,
            "fine": fine_rows(sched.cumulative_worker_metrics),
            "span": span_rows(state["span_id"]),
        }

    class StateHandler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            self.write(json.dumps(body(), allow_nan=False, default=str, separators=(",", ":")))

    routes = [ROUTE]
    prefix = dashboard_prefix(sched.http_application)
    if prefix:
        routes.append(prefix + ROUTE)
    sched.http_application.add_handlers(r".*", [(r, StateHandler) for r in routes])
    state = {"span_id": span_id, "routes": routes}
    sched._roastop_route = state
    return routes


def dashboard_prefix(app):
    """The scheduler's --dashboard-prefix, read off its own identity route
    (the scheduler does not keep it): "" when there is none."""
    router = getattr(app, "wildcard_router", None)
    for rule in getattr(router, "rules", ()):
        path = getattr(rule.matcher, "_path", None)
        if isinstance(path, str) and path.endswith("/json/identity.json"):
            return path[: -len("/json/identity.json")].rstrip("/")
    return ""


def ship_by_value():
    """Makes cloudpickle send this module's functions by value, so a scheduler
    without roastop can run them. False when cloudpickle is absent."""
    try:
        import cloudpickle
    except ImportError:
        return False
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return True


def install_on(client, span_id=None):
    """Client side: installs (or updates) the route. Returns the routes, or
    None with the reason when it could not (the run goes on without it)."""
    if not ship_by_value():
        return None, "cloudpickle is not importable"
    try:
        return client.run_on_scheduler(install, span_id=span_id), None
    except Exception as exc:  # a scheduler we cannot extend must not stop the run
        return None, f"{type(exc).__name__}: {exc}"

