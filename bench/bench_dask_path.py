"""bench dask_path_*: what the Dask path of chunk datagrams (docs/protocol.md,
"The Dask path") costs the scheduler, and how late it brings a chunk, on a
real `dask scheduler` and one `dask worker` on loopback
(tests/integration/dask_cluster.py) with the collector's route installed.

Scheduler CPU per chunk event: a task on the worker logs a chunk datagram
of the emitter's format (~270 bytes) as the emitter does
(Worker.log_event("roastop-datagram", [port, bytes])) at RATE a second for
SECONDS; the scheduler process's CPU (/proc/PID/stat utime+stime) over that
window, less the same window idle just before, divided by the events
logged. It is everything the scheduler does for one: the batched stream's
decoding, distributed's broker and event log, the route's plugin.

Bytes held: the route's buffer (payload bytes) after those events; its
bounds are 64 MiB (route.DATAGRAMS_HELD_BYTES) and 200,000 payloads
(route.DATAGRAMS_HELD): at 300 chunk events a second of this size, about
15 and 11 minutes of them.

Latency from a chunk's end to roastop: roastop --headless --no-auth
--scheduler ... (--interval 1, its default) receives one chunk datagram at
a time, sent at a random moment, by UDP from the bench's own socket or by
log_event on the worker; the time from the send (the worker's clock on the
same host) until roastop's /metrics counts it applied, polled every 2 ms.
The Dask path's is the worker's batched stream, then the wait for
roastop's next poll of the route: about half the interval on average.

BENCH_DASK_SECONDS (default 20) and BENCH_DASK_TRIALS (default 20)
shorten it; BENCH_SMOKE=1 (make bench-smoke) makes them 1 and 2."""
import os
import random
import re
import shutil
import signal
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

from dask_cluster import Cluster, wait_for  # noqa: E402
from roastop import route  # noqa: E402
from roastop.emitter import DATAGRAM_TOPIC, encode, frame  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
RATE = 300.0  # chunk events a second: the largest published coffea runs'
SECONDS = float(os.environ.get("BENCH_DASK_SECONDS", "1" if SMOKE else "20"))
TRIALS = int(os.environ.get("BENCH_DASK_TRIALS", "2" if SMOKE else "20"))
ROASTOP = Path(os.environ.get("ROASTOP", REPO / os.environ.get("BUILD", "build") / "roastop"))


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


def pump(topic, port, payload, rate, seconds):
    """On the worker: log payload rate times a second for seconds."""
    import time as _t
    from distributed import get_worker
    w, n, t0 = get_worker(), 0, _t.monotonic()
    while _t.monotonic() - t0 < seconds:
        due = int((_t.monotonic() - t0) * rate)
        while n < due:
            w.log_event(topic, [port, payload])
            n += 1
        _t.sleep(0.002)
    return n


def log_one(topic, port, payload):
    """On the worker: one datagram by the Dask path; the time it was logged."""
    import time as _t
    from distributed import get_worker
    t = _t.time()
    get_worker().log_event(topic, [port, payload])
    return t


def held(dask_scheduler):
    p = dask_scheduler.plugins[route.DATAGRAMS_PLUGIN]
    return p.held, len(p.buffer)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scheduler_cost(cluster, client):
    pid = cluster.scheduler.pid
    c0 = cpu_seconds(pid)
    time.sleep(SECONDS)
    idle = cpu_seconds(pid) - c0
    c0 = cpu_seconds(pid)
    n = client.submit(pump, DATAGRAM_TOPIC, 9, chunk_datagram(0), RATE, SECONDS,
                      pure=False).result()
    busy = cpu_seconds(pid) - c0
    nbytes, count = client.run_on_scheduler(held)
    us = (busy - idle) / n * 1e6 if n else float("nan")
    print(f"bench dask_path_scheduler_cpu_per_chunk_us: {us:.1f} us (scheduler process CPU "
          f"less idle, {n} events at {RATE:.0f}/s; idle {idle / SECONDS * 1000:.1f} ms/s)")
    print(f"bench dask_path_held_bytes: {nbytes} bytes ({count} payloads held after "
          f"{SECONDS:.0f} s at {RATE:.0f}/s, {nbytes / max(count, 1):.0f} bytes each; "
          f"bound 64 MiB)")


def start_roastop(cluster, out):
    err = out / "roastop.stderr"
    p = subprocess.Popen([str(ROASTOP), "--headless", "--no-auth", "--listen", "127.0.0.1:0",
                          "--scheduler", cluster.dashboard_url, "--output", str(out / "m"),
                          "--checkpoint", "0"], stdout=subprocess.DEVNULL,
                         stderr=open(err, "w"), stdin=subprocess.DEVNULL)
    m = wait_for(lambda: re.search(r"on udp 127\.0\.0\.1:(\d+)", err.read_text()), timeout=30)
    return p, int(m.group(1))


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
    udp, dask, seq = [], [], 0
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _ in range(TRIALS):
                for path in ("udp", "dask"):
                    time.sleep(random.uniform(0.05, 1.0))
                    before, dg = applied(port), chunk_datagram(seq)
                    seq += 1
                    if path == "udp":
                        t0 = time.time()
                        s.sendto(dg, ("127.0.0.1", port))
                        udp.append(seen_after(port, before) - t0)
                    else:
                        fut = client.submit(log_one, DATAGRAM_TOPIC, port, dg, pure=False)
                        t = seen_after(port, before)
                        dask.append(t - fut.result())
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    for name, xs, note in (("udp", udp, "its socket"), ("dask", dask, "roastop's poll, 1 s")):
        print(f"bench dask_path_latency_{name}_ms: {statistics.median(xs) * 1000:.1f} ms "
              f"(median of {len(xs)}, max {max(xs) * 1000:.1f}; by {note})")


def main():
    work = Path(tempfile.mkdtemp(prefix="bench-dask-path-"))
    cluster = Cluster(work, n_workers=1)
    try:
        client = cluster.client()
        routes, why = route.install_on(client)
        assert routes, why
        scheduler_cost(cluster, client)
        latencies(cluster, client, work)
        client.close()
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
