"""bench dask_path_*: what the Dask path of chunk datagrams (docs/protocol.md,
"The Dask path") costs the scheduler next to the UDP path and to nobody
watching, and how late it brings a chunk, on a real `dask scheduler` and two
one-thread `dask worker` processes on loopback (tests/integration/dask_cluster.py).

Scheduler CPU per chunk: the dimuon example's processor (examples/dimuon.py,
decorated with roastop's track_metrics) run by coffea's Runner and Dask
executor in this process, on the example's files in CHUNKSIZE chunks (300
chunks of 1,000 events), three arms a round, in an order rotated round by
round:
  nobody  the Runner alone: no collector, no roastop polling
  udp     roastop --headless --scheduler polling (--interval 1), and
          MetricsCollector(client, ...) around the Runner with
          ROASTOP_TRANSPORT=udp: the workers' datagrams by UDP
  dask    the same with ROASTOP_TRANSPORT=dask: every worker process's
          datagrams through its Dask connection, in batches
The scheduler process's CPU (/proc/PID/stat utime+stime) from just before
the collector's enter (the Runner's start for nobody) to just after its
exit, divided by the chunks. The route is installed once before the first
round (its plugins stay on a scheduler once a collector ran), so the three
arms run on the same scheduler with the same plugins; each watched run
installs it again, as every run does. A ratio is the median over rounds of
the same round's CPU per chunk over another's: the host's drift cancels
within a round. The watching's cost a run is the median over rounds of udp's
CPU less nobody's: the route's install, the span, the polls, the collector's
run end; the first install's own CPU is timed inside the scheduler.

Heartbeats are on, as by default; after each watched run the workers'
emitters stop theirs (a worker process serves one roastop in real life: the
bench's earlier ones would beat through the later rounds).

Latency from a chunk's end to roastop: roastop --headless --no-auth
--scheduler ... (--interval 1, its default) receives one chunk datagram at
a time, sent at a random moment, by UDP from the bench's own socket or by a
worker's emitter on the Dask path (its batch, then its Dask connection); the
time from the send (the worker's clock on the same host) until roastop's
/metrics counts it applied, polled every 2 ms.

BENCH_DASK_ROUNDS (default 7), BENCH_DASK_CHUNKSIZE (1,000) and
BENCH_DASK_TRIALS (20) change it; BENCH_SMOKE=1 (make bench-smoke) makes
them 1, 10,000 and 2. Every process it starts is in its own process group
and ends with it, also on SIGINT, SIGTERM or SIGHUP."""
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / "examples"))

from dask_cluster import EXAMPLES, Cluster, end_with_me, spawn, stop_group, wait_for  # noqa: E402
from roastop import route  # noqa: E402
from roastop._state import shared  # noqa: E402
from roastop.emitter import Emitter  # noqa: E402
from roastop.transport import DATAGRAM_TOPIC, flush_dask_all  # noqa: E402
from roastop.wire import encode, frame  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
ROUNDS = int(os.environ.get("BENCH_DASK_ROUNDS", "1" if SMOKE else "7"))
CHUNKSIZE = int(os.environ.get("BENCH_DASK_CHUNKSIZE", "10000" if SMOKE else "1000"))
TRIALS = int(os.environ.get("BENCH_DASK_TRIALS", "2" if SMOKE else "20"))
TARGET = 1.05  # the Dask path's CPU per chunk at most this times the UDP path's
ARMS = ("nobody", "udp", "dask")
ROASTOP = Path(os.environ.get("ROASTOP", REPO / os.environ.get("BUILD", "build") / "roastop"))


def line(name, value, unit, note):
    print(f"bench {name}: {value} {unit} ({note})", flush=True)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_roastop(cluster, out):
    """roastop --headless on the scheduler; (process, its UDP port)."""
    out.mkdir(parents=True, exist_ok=True)
    err = out / f"roastop.{time.monotonic_ns()}.stderr"
    p = spawn([str(ROASTOP), "--headless", "--no-auth", "--listen", "127.0.0.1:0",
               "--scheduler", cluster.dashboard_url, "--output", str(out / "m"),
               "--checkpoint", "0"], stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    m = wait_for(lambda: re.search(r"on udp 127\.0\.0\.1:(\d+)", err.read_text()), timeout=30)
    return p, int(m.group(1))


# ---- on the workers and the scheduler --------------------------------------

def quiet_emitters():
    """On a worker: its emitters' heartbeats stopped, their batches sent
    (roastop's code by value, as globals: the workers have none)."""
    for e in list(shared("emitter_cache", dict).values()):
        e.heartbeat = False
        if e._beat is not None:
            e._beat.stop()
    return flush_dask_all()


def dask_counts():
    """On a worker: (datagrams, events) its emitters sent by the Dask path."""
    es = {id(e): e for e in shared("emitter_cache", dict).values()}.values()
    return sum(e.sent_dask for e in es), sum(e.batches_dask for e in es)


def timed_install(dask_scheduler):
    """The route's first install, its CPU on the scheduler's thread (ms)."""
    import time as _t
    t = _t.thread_time()
    route.install(dask_scheduler)
    return (_t.thread_time() - t) * 1000


def tally_log_events(dask_scheduler):
    """On the scheduler: its "log-event" stream handler (every event a
    worker logs) wrapped to add up, for the Dask path's topic, the events
    and the handler's CPU on the scheduler's thread: distributed's event
    log, its broker and every plugin's hook, the route's included."""
    import time as _t
    handlers = dask_scheduler.stream_handlers
    inner = handlers["log-event"]
    tally = dask_scheduler._bench_log_events = [0.0, 0]

    def handler(**kw):
        if kw.get("topic") != DATAGRAM_TOPIC:
            return inner(**kw)
        t = _t.thread_time()
        try:
            return inner(**kw)
        finally:
            tally[0] += _t.thread_time() - t
            tally[1] += 1
    handlers["log-event"] = handler


def tally_polls(dask_scheduler):
    """On the scheduler, once the route is installed: its GET handlers
    (state.json, tasks.json, datagrams.json) wrapped to add up their CPU on
    the scheduler's thread and the requests. Later installs keep the
    handlers (the same route version)."""
    import time as _t
    tally = dask_scheduler._bench_polls = [0.0, 0]
    router = dask_scheduler.http_application.default_router
    classes = {rule.target for suffix in (route.ROUTE, route.TASKS_ROUTE, route.DATAGRAMS_ROUTE)
               for rule in route.handler_rules(router, suffix)}

    def timed(get):
        def wrapped(self, *a, **kw):
            t = _t.thread_time()
            try:
                return get(self, *a, **kw)
            finally:
                tally[0] += _t.thread_time() - t
                tally[1] += 1
        return wrapped
    for cls in classes:
        cls.get = timed(cls.get)
    return len(classes)


def log_events(dask_scheduler):
    """(log-event handler CPU s, events, route handlers' CPU s, requests)."""
    return [*dask_scheduler._bench_log_events, *dask_scheduler._bench_polls]


def held(dask_scheduler):
    p = dask_scheduler.plugins[route.DATAGRAMS_PLUGIN]
    return p.held, len(p.buffer)


# ---- scheduler CPU per chunk -----------------------------------------------

def one_run(cluster, client, files, proc, arm, out):
    """(scheduler CPU s, chunks, log-event handler CPU s, route handlers'
    CPU s, requests) of one run of the example under arm."""
    from coffea import processor
    from coffea.nanoevents import NanoAODSchema
    from roastop import MetricsCollector
    fileset = json.loads((files / "fileset.json").read_text())
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=CHUNKSIZE, savemetrics=True)
    rst = None
    if arm != "nobody":
        rst, port = start_roastop(cluster, out)
        os.environ["ROASTOP_TRANSPORT"] = arm  # the collector pickles it for the workers
        time.sleep(1.5)  # roastop's first polls
    pid = cluster.scheduler.pid
    try:
        h0, c0 = client.run_on_scheduler(log_events), cpu_seconds(pid)
        if rst is None:
            _, report = runner(fileset, processor_instance=proc, treename="Events")
        else:
            with MetricsCollector(client, processor_instance=proc, addr=f"127.0.0.1:{port}",
                                  hello=False, run_name=f"bench {arm}") as mc:
                _, report = runner(fileset, processor_instance=proc, treename="Events")
                mc.set_coffea_report(report)
        cpu = cpu_seconds(pid) - c0
        h1 = client.run_on_scheduler(log_events)
        if rst is not None:  # every chunk reached roastop, by either path
            wait_for(lambda: chunks_seen(port, mc.run_id) >= report["chunks"], timeout=20)
    finally:
        os.environ.pop("ROASTOP_TRANSPORT", None)
        if rst is not None:
            client.run(quiet_emitters)
            stop_group(rst)
    return cpu, report["chunks"], h1[0] - h0[0], h1[2] - h0[2], h1[3] - h0[3]


def chunks_seen(port, run_id):
    """The chunks roastop's /metrics counts for the run."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    m = re.search(r'^roastop_chunks_total\{run_id="%s"[^}]*\} (\S+)' % run_id, text, re.M)
    return float(m.group(1)) if m else 0


def chunk_rounds(cluster, client, files, out):
    """{arm: [one_run(...), ...]} over ROUNDS rounds, the arms rotated."""
    import dimuon
    proc = dimuon.DimuonProcessor()
    one_run(cluster, client, files, proc, "nobody", out)  # the workers import and read once
    runs = {arm: [] for arm in ARMS}
    for k in range(ROUNDS):
        for arm in ARMS[k % 3:] + ARMS[:k % 3]:
            runs[arm].append(one_run(cluster, client, files, proc, arm, out))
        print(f"  round {k}: " + ", ".join(
            f"{a} {runs[a][-1][0] * 1e6 / runs[a][-1][1]:.0f} us/chunk" for a in ARMS)
              + f", log-event handler {runs['dask'][-1][2] * 1e3:.1f} ms", file=sys.stderr,
              flush=True)
    return runs


def report_chunks(runs, install_ms, counts):
    per = {a: [r[0] / r[1] for r in runs[a]] for a in ARMS}
    chunks = runs["nobody"][0][1]

    def ratio(a, b):
        return statistics.median(x / y for x, y in zip(per[a], per[b]))
    what = f"median over {ROUNDS} rounds of {chunks} chunks, same round"
    rounds = [x / y for x, y in zip(per["dask"], per["udp"])]
    line("dask_path_cpu_per_chunk_dask_vs_udp", f"{ratio('dask', 'udp'):.3f}", "ratio",
         f"target <= {TARGET}; scheduler CPU a chunk, the Dask path over UDP, {what}; "
         f"rounds {min(rounds):.2f} to {max(rounds):.2f}")
    line("dask_path_cpu_per_chunk_udp_vs_nobody", f"{ratio('udp', 'nobody'):.3f}", "ratio",
         f"UDP path and roastop polling over nobody watching, {what}")
    line("dask_path_cpu_per_chunk_dask_vs_nobody", f"{ratio('dask', 'nobody'):.3f}", "ratio",
         f"Dask path and roastop polling over nobody watching, {what}")
    for a in ARMS:
        line(f"dask_path_cpu_per_chunk_{a}_us", f"{statistics.median(per[a]) * 1e6:.0f}", "us",
             f"scheduler process CPU over the run a chunk, median over {ROUNDS} rounds")
    watch = [(u[0] - n[0]) * 1000 for u, n in zip(runs["udp"], runs["nobody"])]
    line("dask_path_watch_cost_ms", f"{statistics.median(watch):.0f}", "ms",
         f"a run's scheduler CPU with the UDP path and roastop polling less nobody's, median "
         f"over {ROUNDS} rounds, range {min(watch):.0f} to {max(watch):.0f}: install, span, "
         "polls, run end")
    polls = [r[3] * 1000 for a in ("udp", "dask") for r in runs[a]]
    asks = statistics.median(r[4] for a in ("udp", "dask") for r in runs[a])
    line("dask_path_watch_polls_ms", f"{statistics.median(polls):.1f}", "ms",
         f"the route's GET handlers' CPU a watched run, median of {len(polls)} runs, "
         f"{asks:.0f} requests a run: state.json, tasks.json, datagrams.json")
    line("dask_path_route_install_ms", f"{install_ms:.2f}", "ms",
         "the route's first install on the scheduler's thread; later runs update it")
    handler = statistics.median(r[2] / r[1] for r in runs["dask"])
    share = handler / statistics.median(per["udp"]) * 100
    line("dask_path_log_event_cpu_per_chunk_us", f"{handler * 1e6:.1f}", "us",
         f"the scheduler's log-event handler CPU on the Dask path's topic a chunk, median "
         f"over {ROUNDS} rounds: {share:.1f} % of the UDP path's scheduler CPU a chunk")
    sent, events = counts
    line("dask_path_datagrams_per_event", f"{sent / max(events, 1):.1f}", "datagrams",
         f"the Dask path's datagrams over the log_events that carried them, {sent} in all")


# ---- latency ----------------------------------------------------------------

def chunk_datagram(seq):
    """An untagged chunk datagram as the decorator's, one sender."""
    now = time.time()
    body, _ = encode({"type": "chunk", "run_id": "bench", "host": "bench-node", "pid": 4242,
                      "instance": 7, "seq": seq, "sent": now, "dataset": "DYJetsToLL",
                      "file": "/data/DYJetsToLL/nano_1.root", "entry_start": 0,
                      "entry_stop": 10000, "num_events": 10000, "t_start": now - 1.2,
                      "t_end": now, "duration": 1.2, "cpu_time": 1.1, "mem_before_mb": 812.0,
                      "mem_after_mb": 815.5, "mem_delta_mb": 3.5, "bytes_read": 2_400_000,
                      "worker": "tcp://127.0.0.1:40000", "uuid": "0f1e2d3c-4b5a-6978"})
    return frame(body, None)


def send_by_dask(port, n):
    """On a worker: one chunk by its emitter's Dask path (its batch, sent
    within the flush interval); the time it was handed over."""
    import time as _t
    cache = shared("bench_latency_emitters", dict)
    e = cache.get(port)
    if e is None:
        e = cache[port] = Emitter(f"127.0.0.1:{port}", None, chunk_start=False,
                                  heartbeat=False, transport="dask")
    e.choose_path()
    t = _t.time()
    e.send({"type": "chunk", "run_id": "bench", "num_events": 1000, "t_start": t - 0.1,
            "t_end": t, "dataset": "DYJetsToLL", "entry_start": n, "entry_stop": n + 1000})
    return t


def applied(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    m = re.search(r"^roastop_udp_events_applied(?:_total)?(?:\{[^}]*\})? (\d+)", text, re.M)
    return int(m.group(1)) if m else 0


def seen_after(port, before, deadline=10.0):
    """The time roastop counts more than before applied."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if applied(port) > before:
            return time.time()
        time.sleep(0.002)
    raise AssertionError("roastop did not apply the datagram")


def latencies(cluster, client, out):
    p, port = start_roastop(cluster, out)
    udp, dask = [], []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for k in range(TRIALS):
                time.sleep(random.uniform(0.05, 1.0))
                before = applied(port)
                t0 = time.time()
                s.sendto(chunk_datagram(k), ("127.0.0.1", port))
                udp.append(seen_after(port, before) - t0)
                time.sleep(random.uniform(0.05, 1.0))
                before = applied(port)
                fut = client.submit(send_by_dask, port, k * 1000, pure=False)
                t = seen_after(port, before)
                dask.append(t - fut.result())
    finally:
        stop_group(p)
    for name, xs, note in (("udp", udp, "its socket"),
                           ("dask", dask, "the batch, 0.25 s at most, then roastop's poll, 1 s")):
        line(f"dask_path_latency_{name}_ms", f"{statistics.median(xs) * 1000:.1f}", "ms",
             f"median of {len(xs)}, max {max(xs) * 1000:.1f}; by {note}")


def main():
    end_with_me()
    work = Path(tempfile.mkdtemp(prefix="bench-dask-path-"))
    cluster = None
    try:
        files = work / "files"
        subprocess.run([sys.executable, str(EXAMPLES / "make_files.py"), str(files)],
                       check=True, stdout=subprocess.DEVNULL, timeout=300)
        cluster = Cluster(work, n_workers=2)
        client = cluster.client()
        from roastop._state import ship_by_value
        assert ship_by_value()
        os.environ["DIMUON_METRICS"] = "roastop"
        import cloudpickle
        import dimuon
        cloudpickle.register_pickle_by_value(dimuon)
        install_ms = client.run_on_scheduler(timed_install)
        client.run_on_scheduler(tally_log_events)
        assert client.run_on_scheduler(tally_polls) >= 3  # the three handlers found
        runs = chunk_rounds(cluster, client, files, work)
        counts = [sum(x) for x in zip(*client.run(dask_counts).values())]
        report_chunks(runs, install_ms, counts)
        nbytes, count = client.run_on_scheduler(held)
        line("dask_path_held_bytes", nbytes, "bytes",
             f"{count} payloads held after the rounds, {nbytes / max(count, 1):.0f} bytes "
             "each; bound 64 MiB")
        latencies(cluster, client, work)
        client.close()
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
