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
docs/scheduler.md ("The route").
"""
import sys

ROUTE = "/roastop/v1/state.json"
ROUTE_VERSION = 3


def install(dask_scheduler=None, span_id=None):
    """Runs ON the scheduler (client.run_on_scheduler). Returns the routes now
    served, for the client to log."""
    import binascii
    import json
    import math
    import os
    import struct
    import time
    from itertools import repeat
    from operator import attrgetter, itemgetter

    import distributed
    from tornado import web

    sched = dask_scheduler
    old = getattr(sched, "_roastop_route", None)
    if old is not None and old.get("version") == ROUTE_VERSION:
        old["span_id"] = span_id
        return old["routes"]

    def num(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return v if math.isfinite(v) else None

    nan = math.nan

    def fine_rows(metrics):
        rows = []
        for key, value in metrics.items():
            if not isinstance(key, tuple) or len(key) < 3:
                continue  # plain-string keys are heartbeat digests, not fine metrics
            value = num(value)
            if value is None:
                continue
            parts = [str(k) for k in key]
            if len(parts) == 3:
                parts.insert(1, "")  # (context, activity, unit): no task prefix
            rows.append([parts[0], parts[1], parts[2], parts[-1], value])
        return rows

    def worker_facts(ws):
        """The facts fixed for a WorkerState's life (a worker that registers
        again is a new WorkerState): [address, name, host, nthreads,
        memory_limit, pid]."""
        return [ws.address, str(ws.name), ws.host, ws.nthreads, num(ws.memory_limit),
                num(getattr(ws, "pid", None))]

    def facts_json(wss):
        """The workers' facts as JSON (bytes), encoded again only when the scheduler's
        WorkerState objects change (a join, a leave, a re-registration): a
        list compares its members by identity first, so the check is cheap."""
        cached = state.get("facts")
        if cached is None or cached[0] != wss:
            cached = state["facts"] = (wss, dumps([worker_facts(ws) for ws in wss]).encode())
            renew_token()
        return cached[1]

    # the per-worker reads, each a C-level call over the whole column
    metrics_of, nbytes_of = attrgetter("metrics"), attrgetter("nbytes")
    executing_of, processing_of = attrgetter("executing"), attrgetter("processing")
    status_of, memory_of = attrgetter("status"), itemgetter("memory")
    spilled_of, disk_of, get = itemgetter("spilled_bytes"), itemgetter("disk"), dict.get

    def worker_columns(wss):
        """Each worker's changing numbers as six columns (memory,
        managed_bytes, spilled_bytes, cpu, executing, processing), read off
        the heartbeat as WorkerState.memory reads them (process:
        metrics["memory"] or 0; managed: nbytes, at most process; spilled:
        the disk part) without building a MemoryState, and the statuses.
        map over operator getters keeps the per-worker work in C: a Python
        loop cost ~10 bytecodes a worker, each poll on cold data."""
        ms = list(map(metrics_of, wss))
        process = list(map(memory_of, ms))
        if None in process:
            process = [p or 0 for p in process]
        processing = list(map(len, map(processing_of, wss)))
        vals = [*process, *map(min, map(nbytes_of, wss), process),
                *map(disk_of, map(spilled_of, ms)), *map(get, ms, repeat("cpu")),
                *map(len, map(executing_of, wss)), *processing]
        return vals, processing, list(map(status_of, wss))

    def pack(vals):
        """The numbers as base64 (bytes) of little-endian float64 (exact up
        to 2^53; NaN stands for null): a third of json.dumps' cost per
        number, and kept out of the JSON encoder, which would scan it."""
        layout = state.get("layout")  # the struct layout of the last poll's size
        if layout is None or layout.size != 8 * len(vals):
            layout = state["layout"] = struct.Struct("<%dd" % len(vals))
        try:
            raw = layout.pack(*vals)
        except struct.error:  # None or another non-number in a heartbeat: null
            raw = layout.pack(*(nan if num(v) is None else v for v in vals))
        return binascii.b2a_base64(raw, newline=False)

    def statuses_json(statuses):
        """The workers' status names as JSON (bytes), encoded again only when one
        changes (Status members are singletons: the compare is by identity)."""
        cached = state.get("statuses")
        if cached is None or cached[0] != statuses:
            cached = state["statuses"] = (statuses, dumps([st.name for st in statuses]).encode())
            renew_token()
        return cached[1]

    # the facts token: a random prefix a handler (two installs never share
    # one) and a count of the facts' and statuses' encodings
    token_prefix = os.urandom(6).hex()

    def renew_token():
        state["generation"] = state.get("generation", 0) + 1
        state["token"] = "%s.%d" % (token_prefix, state["generation"])
        state["token_bytes"] = state["token"].encode("ascii")

    def span_of(span_id):
        ext = sched.extensions.get("spans")
        return ext.spans.get(span_id) if (ext is not None and span_id) else None

    def span_rows(span, span_id):
        if span is None:
            return None
        return {"id": span_id, "name": list(span.name), "fine": fine_rows(span.cumulative_worker_metrics)}

    PENDING = ("waiting", "no-worker", "queued", "processing")

    def task_progress(span):
        """(done, total) over the run's span, (None, None) when there is
        none: done is every task no longer waiting, queued or running. The
        task groups the scheduler holds mix every run's tasks (a reused
        scheduler showed an earlier run's "324 of 324")."""
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

    def progress(span, span_id):
        """task_progress and task_counters, summed again only after a task
        changed state: both walk every task group or prefix, and neither
        changes without a transition (Scheduler.transition_counter)."""
        key = (sched.transition_counter, span_id)
        cached = state.get("progress")
        if cached is None or cached[0] != key:
            cached = state["progress"] = (key, task_progress(span) + task_counters())
        return cached[1]

    # one encoder for every poll: json.dumps with options builds one a call
    dumps = json.JSONEncoder(allow_nan=False, default=str, separators=(",", ":")).encode

    # what stays for the scheduler's life, encoded once: b'{"roastop_route":3,...,'
    ident = dumps({"roastop_route": ROUTE_VERSION, "dask_version": distributed.__version__,
                   "scheduler_id": str(sched.id)}).encode()[:-1] + b","

    def body(have):
        """have: the facts token the client holds (bytes), or None. When it
        is the current one, "workers" and "worker_status" are left out."""
        # Scheduler.workers is a SortedDict, whose values() iterates in Python;
        # as the dict it also is, in the order the workers registered, in C
        wss = list(dict.values(sched.workers))
        vals, processing, statuses = worker_columns(wss)
        facts, names = facts_json(wss), statuses_json(statuses)
        span_id = state["span_id"]
        span = span_of(span_id)
        done, total, done_all, total_all = progress(span, span_id)
        head = dumps({
            "time": time.time(), "n_workers": len(wss),
            "total_threads": sched.total_nthreads,
            "tasks_processing": sum(processing),
            "tasks_done": done, "tasks_total": total,
            "tasks_done_cumulative": done_all, "tasks_total_cumulative": total_all,
            "fine": fine_rows(sched.cumulative_worker_metrics),
            "span": span_rows(span, span_id),
            "facts_token": state["token"],
        }).encode()
        # bytes throughout: tornado's write takes them as they are
        parts = [ident, head[1:-1], b',"worker_state":"', pack(vals), b'"', b"}"]
        if have != state["token_bytes"]:
            parts[-1:] = [b',"worker_status":', names, b',"workers":', facts, b"}"]
        return b"".join(parts)

    class StateHandler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            have = self.request.query_arguments.get("have")
            self.write(body(have[-1] if have else None))

    if old is not None:  # an earlier collector's handler: serve this version instead
        routes = old["routes"]
        for rule in handler_rules(sched.http_application.default_router, ROUTE):
            rule.target = StateHandler
    else:
        routes = [ROUTE]
        prefix = dashboard_prefix(sched.http_application)
        if prefix:
            routes.append(prefix + ROUTE)
        sched.http_application.add_handlers(r".*", [(r, StateHandler) for r in routes])
    state = {"span_id": span_id, "routes": routes, "version": ROUTE_VERSION}
    sched._roastop_route = state
    return routes


def handler_rules(router, suffix):
    """The tornado rules whose path ends in suffix, in the nested routers
    add_handlers makes (one per host pattern)."""
    for rule in getattr(router, "rules", ()):
        path = getattr(rule.matcher, "_path", None)
        if isinstance(path, str) and path.endswith(suffix):
            yield rule
        yield from handler_rules(rule.target, suffix)


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

