"""The scheduler routes roastop polls (docs/scheduler.md, "The route"):
state.json, tasks.json and datagrams.json under <dashboard>/roastop/v1/,
read-only tornado handlers added through client.run_on_scheduler. This
module travels by value and uses only what a scheduler has. The routes stay
after the run (tornado cannot remove a handler); installing again replaces
the run's span."""
import base64
import binascii
import itertools
import json
import math
import os
import struct
import time
from collections import deque
from operator import attrgetter, is_, is_not, itemgetter

from roastop._state import ship_by_value

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
PENDING = ("waiting", "no-worker", "queued", "processing")
HEAD = (b'"time":%r,"n_workers":%d,"total_threads":%d,"tasks_processing":%d,%s,'
        b'"fine":%s,"span":%s,"facts_token":"%s"')
# one encoder for every poll: json.dumps with options builds one a call
dumps = json.JSONEncoder(allow_nan=False, default=str, separators=(",", ":")).encode
# the per-worker reads: each one C call a worker over the whole list
worker_of = attrgetter("metrics", "nbytes", "executing", "processing", "status", "occupancy")
heartbeat_of, disk_of = itemgetter("memory", "cpu", "spilled_bytes"), itemgetter("disk")


def install(dask_scheduler=None, span_id=None):
    """Runs ON the scheduler: the routes now served. A Route of this version
    installed before is kept, its span replaced: a run begins."""
    sched = dask_scheduler
    old = getattr(sched, "_roastop_route", None)
    if getattr(old, "version", None) == ROUTE_VERSION:
        old.begin_run(span_id)
    else:
        # an earlier collector's (a dict) keeps its routes; its handlers are replaced
        routes = old.get("routes") if isinstance(old, dict) else getattr(old, "routes", None)
        sched._roastop_route = old = Route(sched, span_id, routes)
    task_plugin(sched)
    install_datagrams(sched)
    return old.routes


def task_plugin(sched):
    """distributed's TaskStreamPlugin: the dashboard's when it is there,
    else one added now (never a second: every reader shares its buffer)."""
    from distributed.diagnostics.task_stream import TaskStreamPlugin
    name = TaskStreamPlugin.name
    if name not in sched.plugins:
        sched.add_plugin(TaskStreamPlugin(sched), name=name, idempotent=True)
    return sched.plugins[name]


def json_handler(answer):
    """A tornado handler whose GET writes answer(the query's arguments),
    JSON bytes, not to be cached."""
    from tornado import web

    class Handler(web.RequestHandler):
        def get(self):
            self.set_header("Content-Type", "application/json")
            self.set_header("Cache-Control", "no-store")
            self.write(answer(self.request.query_arguments))
    return Handler


def last(args, name):
    """The last value of a query argument (text), or None."""
    values = args.get(name)
    return values[-1].decode("ascii", "replace") if values else None


def serve(app, suffix, handler):
    """handler at suffix (and under the dashboard's prefix), replacing an
    earlier collector's. The paths, as first added."""
    rules = list(handler_rules(app.default_router, suffix))
    for rule in rules:
        rule.target = handler
    prefix = dashboard_prefix(app)
    paths = [suffix, prefix + suffix] if prefix else [suffix]
    if not rules:
        app.add_handlers(r".*", [(p, handler) for p in paths])
    return paths


def num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def count(v):
    """An integer column's value: a whole number in [0, 2^63), else -1 (null)."""
    v = num(v)
    return int(v) if v is not None and 0 <= v < 2 ** 63 and v == int(v) else -1


def float_text(v):
    """A finite number as the JSON encoder writes it (a subclass, such as
    numpy's, as its base type)."""
    return (float.__repr__(v) if isinstance(v, float) else int.__repr__(v)).encode()


def fine_head(key):
    """b'["context","prefix","activity","unit",' of a fine-metric key, b""
    for a key that is not one."""
    if not isinstance(key, tuple) or len(key) < 3:
        return b""
    parts = [str(k) for k in key]
    if len(parts) == 3:
        parts.insert(1, "")  # (context, activity, unit): no task prefix
    return dumps([parts[0], parts[1], parts[2], parts[-1]]).encode()[:-1] + b","


def worker_columns(wss):
    """worker_state's six columns (read off the heartbeat as WorkerState.memory
    reads them), the processing counts, statuses, executing dicts and
    occupancies: a few C calls a worker (map over getters, zip to transpose)."""
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


def nan_for_null(vals):
    return [math.nan if num(v) is None else v for v in vals]


def packed(layout, vals, nulls):
    """base64 (bytes) of layout.pack(*vals), or of nulls(vals) when a value
    is one struct refuses (None, a fraction, not a number)."""
    try:
        raw = layout.pack(*vals)
    except struct.error:
        raw = layout.pack(*nulls(vals))
    return binascii.b2a_base64(raw, newline=False)


def pack_occupancy(occupancy):
    """worker_occupancy: little-endian float64, NaN for null."""
    return packed(struct.Struct("<%dd" % len(occupancy)), occupancy, nan_for_null)


def task_progress(span):
    """(done, total) over the run's span, (None, None) without one: the
    scheduler's task groups mix every run's tasks."""
    if span is None:
        return None, None
    states = dict(span.states)
    total = sum(states.values())
    return total - sum(states.get(k, 0) for k in PENDING), total


def erred_counts(sched):
    """{prefix: its tasks gone into erred since the scheduler started}
    (TaskPrefix.state_counts counts transitions, so it never decreases)."""
    counts = ((name, (getattr(pf, "state_counts", None) or {}).get("erred", 0))
              for name, pf in list(sched.task_prefixes.items()))
    return {name: n for name, n in counts if n}


def task_rows(records):
    """tasks.json's rows (docs/scheduler.md, "Task records"); a task that
    raised is left out, as /eventstream leaves it."""
    rows = []
    for rec in records:
        if rec.get("status") == "error":
            continue
        row = [rec.get("key"), rec.get("worker"), rec.get("status")]
        for ss in rec.get("startstops") or ():
            row += (ss.get("action"), num(ss.get("start")), num(ss.get("stop")))
        rows.append(row)
    return rows


class FineRows:
    """cumulative_worker_metrics (~800 keys on a busy scheduler) as the
    JSON of its rows [context, prefix, activity, unit, value], a row built
    again only where its value is another object than at the last poll.
    String keys (heartbeat digests) and non-finite values are left out."""

    def __init__(self):
        self.keys, self.heads, self.vals, self.rows = None, [], [], []

    def json(self, metrics):
        keys, vals = list(metrics), list(metrics.values())
        if keys != self.keys:
            n = len(keys)  # a None value's row is empty, as it starts
            self.keys, self.heads = keys, [fine_head(k) for k in keys]
            self.vals, self.rows = [None] * n, [b""] * n
        heads, rows = self.heads, self.rows
        for i in itertools.compress(itertools.count(), map(is_not, vals, self.vals)):
            v = num(vals[i])
            rows[i] = heads[i] + float_text(v) + b"]" if heads[i] and v is not None else b""
        self.vals = vals
        return b"[" + b",".join(filter(None, rows)) + b"]"


class Route:
    """The state.json and tasks.json handlers' state on one scheduler
    (sched._roastop_route), and what is kept encoded from poll to poll."""
    version = ROUTE_VERSION

    def __init__(self, sched, span_id, routes=None):
        import distributed
        self.sched = sched
        self.fine_cluster, self.fine_span = FineRows(), FineRows()
        self.facts = self.statuses = self.layout = self.progress = self.running = None
        self.heads = {}
        # the facts token: a prefix of its own and a count of the encodings
        self.token_prefix, self.generation = os.urandom(6).hex(), 0
        self.renew_token()
        # what stays for the scheduler's life, encoded once: b'{"roastop_route":5,...,'
        self.ident = dumps({"roastop_route": ROUTE_VERSION,
                            "dask_version": distributed.__version__,
                            "scheduler_id": str(sched.id)}).encode()[:-1] + b","
        self.erred_gen = 0
        self.begin_run(span_id)
        app = sched.http_application
        paths = serve(app, ROUTE, json_handler(lambda a: self.body(last(a, "have"))))
        serve(app, TASKS_ROUTE, json_handler(lambda a: self.tasks_body(last(a, "since") or "")))
        self.routes = routes or paths

    def begin_run(self, span_id):
        """A run begins: its failures are counted from here."""
        self.span_id, self.erred_base = span_id, erred_counts(self.sched)
        self.erred_since = time.time()
        self.erred_gen += 1

    def renew_token(self):
        self.generation += 1
        self.token = "%s.%d" % (self.token_prefix, self.generation)
        self.token_bytes = self.token.encode("ascii")

    def encoded(self, name, key, make):
        """make()'s JSON (bytes), kept as self.<name> until key changes (a
        list compares its members by identity first); a new one renews the
        facts token."""
        held = getattr(self, name)
        if held is None or held[0] != key:
            held = (key, dumps(make()).encode())
            setattr(self, name, held)
            self.renew_token()
        return held[1]

    def facts_json(self, wss):
        """[address, name, host, nthreads, memory_limit, pid] a worker,
        encoded again only when the WorkerState objects change."""
        return self.encoded("facts", wss, lambda: [
            [ws.address, str(ws.name), ws.host, ws.nthreads, num(ws.memory_limit),
             num(getattr(ws, "pid", None))] for ws in wss])

    def statuses_json(self, statuses):
        """The workers' status names (Status members are singletons)."""
        return self.encoded("statuses", statuses, lambda: [st.name for st in statuses])

    def pack(self, vals):
        """worker_state (docs/scheduler.md, "The route")."""
        n = len(vals) // 6
        if self.layout is None or self.layout.size != 48 * n:  # the last poll's size
            self.layout = struct.Struct("<%dq%dd%dq" % (3 * n, n, 2 * n))
        return packed(self.layout, vals, lambda v: [
            *map(count, v[:3 * n]), *nan_for_null(v[3 * n:4 * n]), *map(count, v[4 * n:])])

    def span(self):
        ext = self.sched.extensions.get("spans")
        return ext.spans.get(self.span_id) if (ext is not None and self.span_id) else None

    def span_json(self, span):
        """The run's span with its fine metrics (bytes); null when none."""
        if span is None:
            return b"null"
        return b'{"id":%s,"name":%s,"fine":%s}' % (
            dumps(self.span_id).encode(), dumps(list(span.name)).encode(),
            self.fine_span.json(span.cumulative_worker_metrics))

    def task_counters(self):
        """(done, total) since the scheduler started, never decreasing
        (TaskPrefix.state_counts counts transitions), and [prefix, erred] of
        the prefixes with tasks failed since the run began."""
        c = {"waiting": 0, "memory": 0, "erred": 0}
        erred, base = [], self.erred_base
        for name, pf in list(self.sched.task_prefixes.items()):
            counts = getattr(pf, "state_counts", None) or {}
            for k in c:
                c[k] += counts.get(k, 0)
            n = counts.get("erred", 0) - base.get(name, 0)
            if n > 0:
                erred.append([str(name), n])
        done = c["memory"] + c["erred"]
        return done, max(done, c["waiting"]), erred

    def progress_json(self, span):
        """task_progress and task_counters as the body's members (bytes),
        walked and encoded again only after a transition."""
        key = (self.sched.transition_counter, self.span_id, self.erred_gen)
        if self.progress is None or self.progress[0] != key:
            (done, total), (done_all, total_all, erred) = task_progress(span), self.task_counters()
            members = dumps({"tasks_done": done, "tasks_total": total,
                             "tasks_done_cumulative": done_all,
                             "tasks_total_cumulative": total_all,
                             "erred": erred[:ERRED_MAX], "erred_since": self.erred_since,
                             "erred_left_out": max(0, len(erred) - ERRED_MAX)})[1:-1].encode()
            self.progress = (key, members)
        return self.progress[1]

    def running_oldest(self, wss, executing):
        """[(seconds at the heartbeat - its time, the row's JSON up to its
        seconds)] of the RUNNING_MAX tasks executing longest, chosen again only
        after a heartbeat or a transition."""
        cached, counter = self.running, self.sched.transition_counter
        if (cached is not None and cached[0] == counter and len(cached[1]) == len(executing)
                and all(map(is_, cached[1], executing))):
            return cached[2]
        cands = [(d - ws.last_seen, ts, ws) for ws, ex in zip(wss, executing) if ex
                 for ts, d in ex.items() if num(d) is not None]
        cands.sort(key=itemgetter(0), reverse=True)
        rows, kept = [], {}
        for since, ts, ws in cands:
            if len(rows) == RUNNING_MAX:
                break
            if ts.state == "processing" and ts.processing_on is ws:
                head = self.heads.get(ts)
                if head is None:    # a tuple key as its compact JSON, as the task stream
                    key = ts.key if isinstance(ts.key, str) else dumps(ts.key)
                    head = dumps([key, ts.prefix.name, ws.address]).encode()[:-1]
                rows.append((since, head))
                kept[ts] = head
        self.running, self.heads = (counter, executing, rows), kept
        return rows

    def running_json(self, wss, executing, now):
        """The running tasks with their age now, and how many executing tasks
        are not listed (bytes)."""
        total = sum(map(len, executing))
        if not total:  # an idle cluster: nothing to choose or encode
            return b'"running":[],"running_left_out":0'
        rows = self.running_oldest(wss, executing)
        return b'"running":[%s],"running_left_out":%d' % (
            b",".join([b"%s,%.3f]" % (head, max(0.0, now + since)) for since, head in rows]),
            max(0, total - len(rows)))

    def body(self, have):
        """state.json's body; "workers" and "worker_status" left out when have
        is the current facts token."""
        sched = self.sched
        # Scheduler.workers is a SortedDict, whose values() iterates in Python;
        # as the dict it also is, in the order the workers registered, in C
        wss = list(dict.values(sched.workers))
        vals, processing, statuses, executing, occupancy = worker_columns(wss)
        facts, names = self.facts_json(wss), self.statuses_json(statuses)
        span = self.span()
        # the scalars by %-format (a dict through the JSON encoder cost more
        # than all of them); bytes throughout: tornado writes them as they are
        now = time.time()
        head = HEAD % (now, len(wss), sched.total_nthreads, sum(processing),
                       self.progress_json(span),
                       self.fine_cluster.json(sched.cumulative_worker_metrics),
                       self.span_json(span), self.token_bytes)
        parts = [self.ident, head, b",", self.running_json(wss, executing, now),
                 b',"worker_state":"', self.pack(vals), b'","worker_occupancy":"',
                 pack_occupancy(occupancy), b'"', b"}"]
        if have != self.token:
            parts[-1:] = [b',"worker_status":', names, b',"workers":', facts, b"}"]
        return b"".join(parts)

    def tasks_body(self, since):
        """tasks.json's body: the records since the reader's cursor; without
        one none, and the cursor of now (as /eventstream)."""
        plugin = task_plugin(self.sched)
        buf, index = plugin.buffer, plugin.index
        stream = "%s-%x" % (self.token_prefix, id(plugin))
        start, n, lost = cursor_window(since, stream, index, len(buf), TASKS_MAX,
                                       lambda: index - len(buf) if since else index)
        # the newest are at the deque's right end: read from there
        recs = list(itertools.islice(reversed(buf), index - start))
        recs.reverse()
        return dumps({"stream": stream, "next": start + n, "lost": lost,
                      "left": index - start - n, "time": time.time(),
                      "tasks": task_rows(recs[:n])}).encode()


# ---- the Dask path: datagrams a worker logged -------------------------------

def install_datagrams(sched):
    """The datagrams.json plugin and route, each added once (docs/protocol.md,
    "The Dask path")."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class DatagramPlugin(DatagramBuffer, SchedulerPlugin):
        pass    # log_event sees every event logged

    def plugin():
        old = sched.plugins.get(DATAGRAMS_PLUGIN)
        if old is None:
            sched.add_plugin(DatagramPlugin(), name=DATAGRAMS_PLUGIN, idempotent=True)
        elif not getattr(old, "batches", False):  # an earlier roastop's: batches refused
            new = DatagramPlugin()
            new.adopt(old)
            sched.plugins[DATAGRAMS_PLUGIN] = new
        return sched.plugins[DATAGRAMS_PLUGIN]

    def answer(args):
        since, within = last(args, "since"), last(args, "within")
        try:
            within = float(within) if within else None
        except ValueError:
            within = None
        return json.dumps(plugin().answer(since, time.time(), within)).encode()

    plugin()
    if not list(handler_rules(sched.http_application.default_router, DATAGRAMS_ROUTE)):
        serve(sched.http_application, DATAGRAMS_ROUTE, json_handler(answer))


class DatagramBuffer:
    """The payloads [port, datagram] in arrival order, at most held_max and
    bytes_max bytes; index counts every payload kept. An event is [port,
    [datagram, ...]] or, from an older emitter, [port, datagram]."""
    name = DATAGRAMS_PLUGIN
    batches = True  # an earlier install's plugin without this takes single datagrams only

    def __init__(self, held_max=DATAGRAMS_HELD, bytes_max=DATAGRAMS_HELD_BYTES):
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
        """Carries on an earlier install's buffer, counts and bounds (its
        readers read on from the oldest held; roastop drops the duplicates)."""
        for name in ("buffer", "index", "held", "dropped", "refused", "held_max", "bytes_max"):
            if hasattr(old, name):
                setattr(self, name, getattr(old, name))

    def answer(self, since, now, within=None):
        """datagrams.json's body (a dict); without a cursor, the payloads logged
        within the last ``within`` s, or all held."""
        buf, index = self.buffer, self.index
        stream = "%x" % id(self)

        def first():
            if since or within is None:
                return index - len(buf)
            return index - sum(1 for _ in itertools.takewhile(lambda e: e[0] >= now - within,
                                                              reversed(buf)))

        start, n, lost = cursor_window(since, stream, index, len(buf), DATAGRAMS_ANSWER, first)
        skip = start - (index - len(buf))
        payloads = [[port, base64.b64encode(p).decode("ascii")]
                    for _, port, p in itertools.islice(buf, skip, skip + n)]
        return {"stream": stream, "next": start + n, "lost": lost,
                "left": index - start - n, "dropped": self.dropped, "refused": self.refused,
                "held": len(buf), "held_bytes": self.held, "time": now,
                "datagrams": payloads}


def cursor_window(since, stream, index, held, most, first):
    """(start, n, lost): where a reader resumes, how many it takes (at most
    ``most``) and how many the buffer dropped before it came back. The
    buffer kept index items and holds the last ``held``. The cursor since,
    "<stream>.<index>", is followed when it is this stream's and not past
    index (else from first()); nothing is taken out of the buffer."""
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


def dashboard_prefix(app, identity="/json/identity.json"):
    """The scheduler's --dashboard-prefix, read off its own identity route
    (the scheduler does not keep it): "" when there is none."""
    for rule in handler_rules(getattr(app, "wildcard_router", None), identity):
        return rule.matcher._path[:-len(identity)].rstrip("/")
    return ""


def install_on(client, span_id=None):
    """Client side: (the routes, None), or (None, the reason) when they
    could not be installed (the run goes on without them)."""
    if not ship_by_value():
        return None, "cloudpickle is not importable"
    try:
        return client.run_on_scheduler(install, span_id=span_id), None
    except Exception as exc:  # a scheduler we cannot extend must not stop the run
        return None, f"{type(exc).__name__}: {exc}"

