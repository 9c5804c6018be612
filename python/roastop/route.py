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
import time

ROUTE = "/roastop/v1/state.json"
TASKS_ROUTE = "/roastop/v1/tasks.json"  # the finished tasks' records (version 5)
ROUTE_VERSION = 5
TASKS_MAX = 4000  # task records a tasks.json answer carries; the rest the next
ERRED_MAX = 64  # prefixes with failed tasks listed; the rest counted
RUNNING_MAX = 16  # tasks executing now listed, the oldest first
# The Dask path of chunk datagrams (docs/protocol.md, "The Dask path")
DATAGRAMS_ROUTE = "/roastop/v1/datagrams.json"
DATAGRAM_TOPIC = "roastop-datagram"  # the topic workers log their datagrams under
DATAGRAMS_PLUGIN = "roastop-datagrams"
DATAGRAMS_HELD_BYTES = 64 << 20  # payload bytes the scheduler holds at most
DATAGRAMS_HELD = 200_000  # payloads it holds at most
DATAGRAMS_ANSWER = 4000  # payloads one datagrams.json answer carries; the rest the next
DATAGRAM_MAX = 65507  # a payload larger than a UDP datagram is refused


def install(dask_scheduler=None, span_id=None):
    """Runs ON the scheduler (client.run_on_scheduler). Returns the routes now
    served, for the client to log."""
    import binascii
    import itertools
    import json
    import math
    import os
    import struct
    import time
    from operator import attrgetter, is_, is_not, itemgetter

    import distributed
    from tornado import web

    sched = dask_scheduler

    def task_plugin():
        """distributed's TaskStreamPlugin ("task-stream"): the one the
        dashboard added when it is there, else one added now (idempotent,
        so never a second: every reader shares its buffer)."""
        from distributed.diagnostics.task_stream import TaskStreamPlugin
        name = TaskStreamPlugin.name
        if name not in sched.plugins:
            sched.add_plugin(TaskStreamPlugin(sched), name=name, idempotent=True)
        return sched.plugins[name]

    def erred_counts():
        """{prefix: its tasks gone into erred since the scheduler started}
        (TaskPrefix.state_counts counts transitions, so it never decreases)."""
        counts = {}
        for name, pf in list(sched.task_prefixes.items()):
            n = (getattr(pf, "state_counts", None) or {}).get("erred", 0)
            if n:
                counts[name] = n
        return counts

    old = getattr(sched, "_roastop_route", None)
    if old is not None and old.get("version") == ROUTE_VERSION:
        # a run begins: its failures are counted from here (the generation
        # invalidates the encoded members)
        old["span_id"], old["erred_base"], old["erred_since"] = span_id, erred_counts(), time.time()
        old["erred_gen"] += 1
        task_plugin()
        install_datagrams(sched)
        return old["routes"]

    def num(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return v if math.isfinite(v) else None

    nan = math.nan

    def fine_json(metrics, cache):
        """Scheduler.cumulative_worker_metrics (or a span's) as the JSON
        (bytes) of its rows [context, prefix, activity, unit, value]. On a
        busy scheduler 200 prefixes make ~800 keys, and as many on the run's
        span, and a heartbeat changes a part of them: the keys and values
        are taken as lists, a row is built again only where the value is
        another object than at the last poll (`+=` on a number makes a new
        one), found in C (map, is_not, compress), and a key's head once, until
        the keys change (cache: the last poll's lists). Plain-string keys are
        heartbeat digests, not fine metrics; non-finite values are left out."""
        keys, vals = list(metrics), list(metrics.values())
        if keys != cache.get("keys"):
            n = len(keys)  # a None value's row is empty, as it starts
            cache.update(keys=keys, heads=[fine_head(k) for k in keys], vals=[None] * n,
                         rows=[b""] * n)
        heads, rows = cache["heads"], cache["rows"]
        for i in itertools.compress(itertools.count(), map(is_not, vals, cache["vals"])):
            v = num(vals[i])
            rows[i] = heads[i] + float_text(v) + b"]" if heads[i] and v is not None else b""
        cache["vals"] = vals
        return b"[" + b",".join(filter(None, rows)) + b"]"

    def fine_head(key):
        """b'["context","prefix","activity","unit",' of a fine-metric key,
        b"" for a key that is not one."""
        if not isinstance(key, tuple) or len(key) < 3:
            return b""
        parts = [str(k) for k in key]
        if len(parts) == 3:
            parts.insert(1, "")  # (context, activity, unit): no task prefix
        return dumps([parts[0], parts[1], parts[2], parts[-1]]).encode()[:-1] + b","

    def float_text(v):
        """A finite number as the JSON encoder writes it (a subclass, such
        as numpy's, as its base type)."""
        return (float.__repr__(v) if isinstance(v, float) else int.__repr__(v)).encode()

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

    # the per-worker reads: each one C call a worker over the whole list
    worker_of = attrgetter("metrics", "nbytes", "executing", "processing", "status",
                           "occupancy")
    heartbeat_of, disk_of = itemgetter("memory", "cpu", "spilled_bytes"), itemgetter("disk")

    def worker_columns(wss):
        """Each worker's changing numbers as six columns (memory, nbytes,
        spilled_bytes, cpu, executing, processing), the occupancies, read off the heartbeat
        as WorkerState.memory reads them (process: metrics["memory"] or 0;
        spilled: the disk part; cpu: metrics.get("cpu")) without building a
        MemoryState, and the statuses. Five C calls a worker (map over
        operator getters, zip to transpose): a Python loop cost ~10
        bytecodes a worker, at every poll. Managed memory is nbytes at most
        process: roastop applies that cap (map(min, ...) cost 4 us at 32
        workers)."""
        if not wss:
            return [], [], [], (), ()
        ms, nbytes, executing, processing, statuses, occupancy = zip(*map(worker_of, wss))
        try:
            process, cpu, spilled = zip(*map(heartbeat_of, ms))
        except KeyError:  # a heartbeat without "cpu": null, as metrics.get gives
            process, cpu, spilled = zip(*((m["memory"], m.get("cpu"), m["spilled_bytes"])
                                          for m in ms))
        if None in process:
            process = [p or 0 for p in process]
        processing = list(map(len, processing))
        vals = [*process, *nbytes, *map(disk_of, spilled), *cpu,
                *map(len, executing), *processing]
        return vals, processing, list(statuses), executing, occupancy

    def count(v):
        """An integer column's value: a whole number in [0, 2^63), else -1
        (null: not measured)."""
        v = num(v)
        return int(v) if v is not None and 0 <= v < 2 ** 63 and v == int(v) else -1

    def pack(vals):
        """The six columns as base64 (bytes) of little-endian numbers: int64
        for the five counts of bytes and tasks (-1 for null), float64 for
        cpu (NaN for null). Packing ints as float64 made a float object of
        each; a third of json.dumps' cost per number, and kept out of the
        JSON encoder, which would scan it."""
        n = len(vals) // 6
        layout = state.get("layout")  # the struct layout of the last poll's size
        if layout is None or layout.size != 48 * n:
            layout = state["layout"] = struct.Struct("<%dq%dd%dq" % (3 * n, n, 2 * n))
        try:
            raw = layout.pack(*vals)
        except struct.error:  # None, a fraction or a non-number in a heartbeat: null
            raw = layout.pack(*map(count, vals[:3 * n]),
                              *(nan if num(v) is None else v for v in vals[3 * n:4 * n]),
                              *map(count, vals[4 * n:]))
        return binascii.b2a_base64(raw, newline=False)

    def pack_occupancy(occupancy):
        """WorkerState.occupancy (seconds of work the scheduler expects each
        worker to hold) as base64 (bytes) of little-endian float64, NaN for
        null: one float a worker, in one C call."""
        n = len(occupancy)
        try:
            raw = struct.pack("<%dd" % n, *occupancy)
        except struct.error:  # not a number: null
            raw = struct.pack("<%dd" % n, *(nan if num(v) is None else v for v in occupancy))
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

    def span_json(span, span_id):
        """The run's span with its fine metrics (bytes); null when none."""
        if span is None:
            return b"null"
        return b'{"id":%s,"name":%s,"fine":%s}' % (
            dumps(span_id).encode(), dumps(list(span.name)).encode(),
            fine_json(span.cumulative_worker_metrics, state["fine_span"]))

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
        when it finishes. roastop shows their growth since the run began.
        Third: [prefix, erred] of the prefixes with tasks failed since the
        latest install (the run's start; the stream sends nothing for a
        task that raised)."""
        c = {"waiting": 0, "memory": 0, "erred": 0}
        erred, base = [], state["erred_base"]
        for name, pf in list(sched.task_prefixes.items()):
            counts = getattr(pf, "state_counts", None) or {}
            for k in c:
                c[k] += counts.get(k, 0)
            n = counts.get("erred", 0) - base.get(name, 0)
            if n > 0:
                erred.append([str(name), n])
        done = c["memory"] + c["erred"]
        return done, max(done, c["waiting"]), erred

    def progress_json(span, span_id):
        """task_progress and task_counters as the body's members (bytes),
        summed and encoded again only after a task changed state: both walk
        every task group or prefix, and neither changes without a transition
        (Scheduler.transition_counter)."""
        key = (sched.transition_counter, span_id, state["erred_gen"])
        cached = state.get("progress")
        if cached is None or cached[0] != key:
            (done, total), (done_all, total_all, erred) = task_progress(span), task_counters()
            members = dumps({"tasks_done": done, "tasks_total": total,
                             "tasks_done_cumulative": done_all,
                             "tasks_total_cumulative": total_all,
                             "erred": erred[:ERRED_MAX], "erred_since": state["erred_since"],
                             "erred_left_out": max(0, len(erred) - ERRED_MAX)})[1:-1].encode()
            cached = state["progress"] = (key, members)
        return cached[1]

    def running_oldest(wss, executing):
        """The RUNNING_MAX tasks executing longest now, oldest first:
        [(seconds at the worker's heartbeat - its time, the row's JSON up to
        its seconds)], chosen again only when a heartbeat replaced a worker's
        executing dict (identity compare) or a task changed state (one that
        finished since the heartbeat is left out). A row is encoded once
        while its task stays listed: heartbeats replace every dict, so the
        choice is made again at almost every poll of a busy cluster."""
        cached = state.get("running")
        if (cached is not None and cached[0] == sched.transition_counter
                and len(cached[1]) == len(executing) and all(map(is_, cached[1], executing))):
            return cached[2]
        cands = [(d - ws.last_seen, ts, ws) for ws, ex in zip(wss, executing) if ex
                 for ts, d in ex.items() if num(d) is not None]
        cands.sort(key=itemgetter(0), reverse=True)
        heads = state.get("heads", {})
        rows, kept = [], {}
        for since, ts, ws in cands:
            if len(rows) == RUNNING_MAX:
                break
            if ts.state == "processing" and ts.processing_on is ws:
                head = heads.get(ts)
                if head is None:
                    head = dumps([key_text(ts.key), ts.prefix.name, ws.address]).encode()[:-1]
                rows.append((since, head))
                kept[ts] = head
        state["running"] = (sched.transition_counter, executing, rows)
        state["heads"] = kept
        return rows

    def key_text(key):
        """A key as the task stream gives it: a string as it is, a tuple key
        as its compact JSON (roastop names finished stragglers so)."""
        return key if isinstance(key, str) else dumps(key)

    def running_json(wss, executing, now):
        """The running tasks with their age now, and how many executing
        tasks are not listed (bytes): seconds running at the last heartbeat
        plus the time since it."""
        total = sum(map(len, executing))
        if not total:  # an idle cluster: nothing to choose or encode
            return b'"running":[],"running_left_out":0'
        rows = running_oldest(wss, executing)
        return b'"running":[%s],"running_left_out":%d' % (
            b",".join([b"%s,%.3f]" % (head, max(0.0, now + since)) for since, head in rows]),
            max(0, total - len(rows)))

    # one encoder for every poll: json.dumps with options builds one a call
    dumps = json.JSONEncoder(allow_nan=False, default=str, separators=(",", ":")).encode

    # what stays for the scheduler's life, encoded once: b'{"roastop_route":3,...,'
    ident = dumps({"roastop_route": ROUTE_VERSION, "dask_version": distributed.__version__,
                   "scheduler_id": str(sched.id)}).encode()[:-1] + b","

    HEAD = (b'"time":%r,"n_workers":%d,"total_threads":%d,"tasks_processing":%d,%s,'
            b'"fine":%s,"span":%s,"facts_token":"%s"')

    def body(have):
        """have: the facts token the client holds (bytes), or None. When it
        is the current one, "workers" and "worker_status" are left out."""
        # Scheduler.workers is a SortedDict, whose values() iterates in Python;
        # as the dict it also is, in the order the workers registered, in C
        wss = list(dict.values(sched.workers))
        vals, processing, statuses, executing, occupancy = worker_columns(wss)
        facts, names = facts_json(wss), statuses_json(statuses)
        span_id = state["span_id"]
        span = span_of(span_id)
        fine = fine_json(sched.cumulative_worker_metrics, state["fine_cluster"])
        # the scalars by %-format (a dict through the JSON encoder cost
        # more than all of them); bytes throughout: tornado writes them as
        # they are
        now = time.time()
        head = HEAD % (now, len(wss), sched.total_nthreads, sum(processing),
                       progress_json(span, span_id), fine, span_json(span, span_id),
                       state["token_bytes"])
        parts = [ident, head, b",", running_json(wss, executing, now),
                 b',"worker_state":"', pack(vals), b'","worker_occupancy":"',
                 pack_occupancy(occupancy), b'"', b"}"]
        if have != state["token_bytes"]:
            parts[-1:] = [b',"worker_status":', names, b',"workers":', facts, b"}"]
        return b"".join(parts)

    def task_rows(records):
        """Each finished task's record as a row: [key, worker, status, then
        action, start, stop of each of its startstops]. A task that raised
        is left out, as /eventstream leaves it: the state body counts the
        failures by prefix."""
        rows = []
        for rec in records:
            if rec.get("status") == "error":
                continue
            row = [rec.get("key"), rec.get("worker"), rec.get("status")]
            for ss in rec.get("startstops") or ():
                row += (ss.get("action"), num(ss.get("start")), num(ss.get("stop")))
            rows.append(row)
        return rows

    def tasks_body(since):
        """The records since the reader's cursor "<stream>.<index>" (bytes),
        TASKS_MAX at most. Each reader holds its own cursor: nothing is
        taken out of the plugin's buffer. Without a cursor (a reader's first
        ask) none, and the cursor of now: as /eventstream, the tasks from
        the reader's start (one that read the stream until now has its
        earlier ones). A cursor of another plugin (one put in this one's
        place): from its oldest record. What the bounded buffer dropped
        before the reader came back is counted as lost."""
        plugin = task_plugin()
        buf, index = plugin.buffer, plugin.index
        stream = "%s-%x" % (token_prefix, id(plugin))
        start, n, lost = cursor_window(since, stream, index, len(buf), TASKS_MAX,
                                       lambda: index - len(buf) if since else index)
        # the newest are at the deque's right end: read from there
        recs = list(itertools.islice(reversed(buf), index - start))
        recs.reverse()
        return dumps({"stream": stream, "next": start + n, "lost": lost,
                      "left": index - start - n, "time": time.time(),
                      "tasks": task_rows(recs[:n])}).encode()

    class StateHandler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            have = self.request.query_arguments.get("have")
            self.write(body(have[-1] if have else None))

    class TasksHandler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            since = self.request.query_arguments.get("since")
            self.write(tasks_body(since[-1].decode("ascii", "replace") if since else None))

    # an earlier collector's handler serves this version instead; a route
    # not served yet is added
    prefix = dashboard_prefix(sched.http_application)
    for suffix, handler in ((ROUTE, StateHandler), (TASKS_ROUTE, TasksHandler)):
        rules = list(handler_rules(sched.http_application.default_router, suffix))
        for rule in rules:
            rule.target = handler
        if not rules:
            paths = [suffix, prefix + suffix] if prefix else [suffix]
            sched.http_application.add_handlers(r".*", [(r, handler) for r in paths])
    routes = old["routes"] if old is not None else [ROUTE, prefix + ROUTE] if prefix else [ROUTE]
    state = {"span_id": span_id, "routes": routes, "version": ROUTE_VERSION,
             "erred_base": erred_counts(), "erred_gen": 0, "erred_since": time.time(),
             "fine_cluster": {}, "fine_span": {}}
    task_plugin()
    install_datagrams(sched)
    sched._roastop_route = state
    return routes


# ---- the Dask path: datagrams a worker logged -------------------------------

def install_datagrams(sched):
    """Runs ON the scheduler (from install): the plugin that keeps the
    datagrams workers log under DATAGRAM_TOPIC, and the route that serves
    them, each added once (an earlier install's plugin and its buffer
    stay). Travels by value with install."""
    import json
    import time

    from distributed.diagnostics.plugin import SchedulerPlugin
    from tornado import web

    class DatagramPlugin(DatagramBuffer, SchedulerPlugin):
        """DatagramBuffer as the scheduler's plugin: its log_event hook
        sees every event logged."""

    def plugin():
        old = sched.plugins.get(DATAGRAMS_PLUGIN)
        if old is None:
            sched.add_plugin(DatagramPlugin(), name=DATAGRAMS_PLUGIN, idempotent=True)
        elif not getattr(old, "batches", False):  # an earlier roastop's: batches refused
            new = DatagramPlugin()
            new.adopt(old)
            sched.plugins[DATAGRAMS_PLUGIN] = new
        return sched.plugins[DATAGRAMS_PLUGIN]

    plugin()

    class DatagramsHandler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            since = self.request.query_arguments.get("since")
            since = since[-1].decode("ascii", "replace") if since else None
            within = self.request.query_arguments.get("within")
            try:
                within = float(within[-1]) if within else None
            except ValueError:
                within = None
            self.write(json.dumps(plugin().answer(since, time.time(), within)).encode())

    if not list(handler_rules(sched.http_application.default_router, DATAGRAMS_ROUTE)):
        prefix = dashboard_prefix(sched.http_application)
        paths = [DATAGRAMS_ROUTE, prefix + DATAGRAMS_ROUTE] if prefix else [DATAGRAMS_ROUTE]
        sched.http_application.add_handlers(r".*", [(p, DatagramsHandler) for p in paths])


class DatagramBuffer:
    """The payloads in arrival order, bounded by held_max payloads and
    bytes_max payload bytes: past either, the oldest go first, counted in
    dropped. index counts every payload kept since the buffer began (a
    reader's cursor). An event is [port, [datagram, ...]] (a worker
    process's batch) or [port, datagram] (an emitter before batches): the
    port of the roastop they are for, and each datagram's bytes, each kept
    as one payload [port, datagram]. An event with no port, and each
    datagram that is empty, larger than a UDP datagram or not bytes, is
    counted in refused."""
    name = DATAGRAMS_PLUGIN
    batches = True  # an earlier install's plugin without this takes single datagrams only

    def __init__(self, held_max=DATAGRAMS_HELD, bytes_max=DATAGRAMS_HELD_BYTES):
        from collections import deque
        self.buffer = deque()   # (the scheduler's time it came, port, the datagram)
        self.held_max, self.bytes_max = held_max, bytes_max
        self.index = self.held = self.dropped = self.refused = 0

    def log_event(self, topic, msg):
        if topic != DATAGRAM_TOPIC:
            return
        port, data = msg if isinstance(msg, (list, tuple)) and len(msg) == 2 else (None, None)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            self.refused += len(data) if isinstance(data, list) and data else 1
            return
        if isinstance(data, (bytes, bytearray)):
            data = (data,)
        elif not isinstance(data, (list, tuple)) or not data:
            self.refused += 1
            return
        now, append, n, size = time.time(), self.buffer.append, 0, 0
        for d in data:
            if isinstance(d, (bytes, bytearray)) and 0 < len(d) <= DATAGRAM_MAX:
                append((now, port, bytes(d)))
                n += 1
                size += len(d)
        self.refused += len(data) - n
        self.index += n
        self.held += size
        while len(self.buffer) > self.held_max or self.held > self.bytes_max:
            self.held -= len(self.buffer.popleft()[2])
            self.dropped += 1

    def adopt(self, old):
        """Carries on an earlier install's buffer, counts and bounds: its
        payloads stay for their readers (whose cursors name the old stream:
        they read on from the oldest held, duplicates that roastop drops)."""
        for name in ("buffer", "index", "held", "dropped", "refused", "held_max", "bytes_max"):
            if hasattr(old, name):
                setattr(self, name, getattr(old, name))

    def answer(self, since, now, within=None):
        """datagrams.json's body (a dict) for a reader's cursor
        "<stream>.<index>": the payloads since it ([port, base64]), DATAGRAMS_ANSWER
        at most. Nothing is taken out of the buffer: each reader holds its
        own cursor. Without one (a reader's first ask), those logged within
        the last ``within`` seconds (the reader's age: what was logged
        before its first poll counts, an earlier session's does not), or
        all held when it says none; with another buffer's cursor, from the
        oldest held. What the buffer dropped before the reader read it is
        lost."""
        from base64 import b64encode
        from itertools import islice, takewhile
        buf, index = self.buffer, self.index
        stream = "%x" % id(self)

        def first():
            young = sum(1 for _ in takewhile(lambda e: e[0] >= now - within, reversed(buf))) \
                if not since and within is not None else len(buf)
            return index - young

        start, n, lost = cursor_window(since, stream, index, len(buf), DATAGRAMS_ANSWER, first)
        skip = start - (index - len(buf))
        payloads = [[port, b64encode(p).decode("ascii")]
                    for _, port, p in islice(buf, skip, skip + n)]
        return {"stream": stream, "next": start + n, "lost": lost,
                "left": index - start - n, "dropped": self.dropped, "refused": self.refused,
                "held": len(buf), "held_bytes": self.held, "time": now,
                "datagrams": payloads}


def cursor_window(since, stream, index, held, most, first):
    """(start, n, lost): where a reader of a buffer resumes, how many it
    takes and how many the buffer dropped before it came back. The buffer
    has kept index items since it began and holds the last held of them;
    since is the reader's cursor "<stream>.<index>", followed when it is
    this stream's and not past index; else the reader starts at first()
    (each caller's own rule for a reader without a cursor of its own). At
    most `most` are taken: the rest the next ask."""
    head, _, at = (since or "").partition(".")
    start = int(at) if head == stream and at.isdigit() and int(at) <= index else first()
    lost = max(0, index - held - start)
    start += lost
    return start, min(index - start, most), lost


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

