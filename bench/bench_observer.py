"""bench observer_*: the observer effect, what each way of watching costs
the Dask scheduler per task while tasks run (issue 33, bench/RESULTS.md).

A real `dask scheduler` and two one-thread `dask worker` processes on
loopback (tests/integration/dask_cluster.py). Each round runs TASKS tiny
tasks (client.map of a function returning its argument) under one watcher,
the watchers alternating round after round, and measures the scheduler
process's CPU (user+sys from /proc/PID/stat) from the map to the gather,
divided by TASKS, and the wall time. Medians over ROUNDS rounds per arm.

Arms:
  unwatched        nobody watching
  roastop_plain    roastop --scheduler, default flags, no roastop code in
                   the analysis (no route on the scheduler)
  roastop_stream   the same with --task-stream (/eventstream, per task)
  roastcoffea      roastcoffea 0.1.2's MetricsCollector(client) around the work
  bokeh            Dask's /status page open in headless Chromium
  roastop_route    roastop --scheduler and roastop's MetricsCollector(client)
                   around the work, as README shows: it installs the route

The route cannot be removed from a scheduler once installed (tornado), so
the rounds run in two phases on one cluster: first every arm without the
route, alternating; then `unwatched` and `roastop_route`, alternating. Each
arm's ratio is to the `unwatched` median of its own phase.

Run with the test venv's python: `make bench`. BENCH_OBSERVER_TASKS and
BENCH_OBSERVER_ROUNDS change the defaults (4,000 tasks, 4 rounds).
BENCH_SMOKE=1: 40 tasks, 1 round, short settles: every line printed, no
figure meaning anything."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "integration"))

from dask_cluster import Cluster, wait_for  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
TASKS = int(os.environ.get("BENCH_OBSERVER_TASKS", "40" if SMOKE else "4000"))
ROUNDS = int(os.environ.get("BENCH_OBSERVER_ROUNDS", "1" if SMOKE else "4"))
# a watcher's start before the work: roastop's first polls; Chromium's page load
SETTLE = {"bokeh": 4 if SMOKE else 12, "other": 0.5 if SMOKE else 2}
ROASTOP = Path(os.environ.get("ROASTOP", REPO / os.environ.get("BUILD", "build") / "roastop"))
PHASE1 = ("unwatched", "roastop_plain", "roastop_stream", "roastcoffea", "bokeh")
PHASE2 = ("unwatched", "roastop_route")
SKIPPED = {}


def ident(x):
    return x


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def line(name, value, unit, note):
    print(f"bench {name}: {value} {unit} ({note})", flush=True)


def spawn(args, **kw):
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True, **kw)


def stop(p):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def start_roastop(cluster, tmp, *extra):
    """roastop --headless on the scheduler; (process, its UDP address)."""
    err = tmp / f"roastop.{time.monotonic_ns()}.stderr"
    p = spawn([str(ROASTOP), "--headless", "--no-auth", "--listen", "127.0.0.1:0",
               "--scheduler", cluster.dashboard_url, "--interval", "1", "--checkpoint", "0",
               "--output", str(tmp / "m"), *extra],
              stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    pat = re.compile(r"udp 127\.0\.0\.1:(\d+)[ \n]")
    m = wait_for(lambda: pat.search(err.read_text()), timeout=60)
    return p, f"127.0.0.1:{m.group(1)}"


def start_bokeh(cluster, tmp):
    exe = shutil.which("chromium")
    if exe is None:
        SKIPPED["bokeh"] = "skipped: no chromium; apt-get install chromium"
        return None
    return spawn([exe, "--headless", "--no-sandbox", "--disable-gpu",
                  "--remote-debugging-port=0", f"--user-data-dir={tmp / 'chromium'}",
                  cluster.dashboard_url + "/status"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Watch:
    """One arm's watcher, started before the work and stopped after it;
    around() is the context the work runs in (a collector, or nothing)."""

    def __init__(self, arm, cluster, client, tmp):
        self.arm, self.cluster, self.client, self.tmp = arm, cluster, client, tmp
        self.proc, self.addr = None, None

    def __enter__(self):
        if self.arm.startswith("roastop"):
            extra = ("--task-stream",) if self.arm == "roastop_stream" else ()
            self.proc, self.addr = start_roastop(self.cluster, self.tmp, *extra)
        elif self.arm == "bokeh":
            self.proc = start_bokeh(self.cluster, self.tmp)
        if self.arm != "unwatched":
            time.sleep(SETTLE.get(self.arm, SETTLE["other"]))
        return self

    def around(self):
        if self.arm == "roastcoffea":
            from roastcoffea import MetricsCollector
            return MetricsCollector(self.client)
        if self.arm == "roastop_route":
            from roastop import MetricsCollector
            return MetricsCollector(self.client, addr=self.addr, hello=False)
        return _Nothing()

    def alive(self):
        return self.proc is None or self.proc.poll() is None

    def __exit__(self, *exc):
        if self.proc is not None:
            stop(self.proc)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def one_round(cluster, client, tmp, arm):
    """(scheduler CPU us per task, wall s) of TASKS tasks under arm; None
    when the arm cannot run here."""
    from distributed import wait
    pid = cluster.scheduler.pid
    with Watch(arm, cluster, client, tmp) as w:
        if arm == "bokeh" and w.proc is None:
            return None
        with w.around():
            c0, t0 = cpu_seconds(pid), time.monotonic()
            futs = client.map(ident, range(TASKS), pure=False)
            wait(futs)
            wall = time.monotonic() - t0
            cpu = cpu_seconds(pid) - c0
            del futs
        if not w.alive():
            SKIPPED[arm] = "the watcher exited during the round"
            return None
    client.run_on_scheduler(lambda: None)  # the forgets are behind us
    return cpu * 1e6 / TASKS, wall


def phase(cluster, client, tmp, arms, out):
    for _ in range(ROUNDS):
        for arm in arms:
            r = one_round(cluster, client, tmp, arm)
            if r is not None:
                out.setdefault(arm, []).append(r)
            print(f"  {arm}: {r}", file=sys.stderr, flush=True)


def report(results):
    """results: {phase: {arm: [(us, wall), ...]}}."""
    targets = {"roastop_route": "target <= 1.02; and below roastcoffea and bokeh"}
    rows = {}
    for ph, arms in results.items():
        base = statistics.median(us for us, _ in arms["unwatched"])
        for arm, runs in arms.items():
            us = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            name = arm if arm != "unwatched" else f"unwatched_phase{ph}"
            rows[name] = (us, wall, us / base)
    for arm in ("unwatched_phase1", "unwatched_phase2", *PHASE1[1:], *PHASE2[1:]):
        if arm not in rows:
            line(f"observer_{arm}_us_per_task", "n/a", "us", SKIPPED.get(arm, "did not run"))
            if not arm.startswith("unwatched"):
                line(f"observer_{arm}_ratio", "n/a", "ratio", SKIPPED.get(arm, "did not run"))
            continue
        us, wall, ratio = rows[arm]
        line(f"observer_{arm}_us_per_task", f"{us:.0f}", "us",
             f"scheduler CPU per task; wall {wall:.2f} s for {TASKS} tasks, "
             f"median of {ROUNDS}")
        if not arm.startswith("unwatched"):
            line(f"observer_{arm}_ratio", f"{ratio:.3f}", "ratio",
                 targets.get(arm, "peer") + "; to unwatched of its phase")


def main():
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench_observer") as d:
        tmp = Path(d)
        cluster = Cluster(tmp, n_workers=2)
        try:
            client = cluster.client()
            from distributed import wait
            wait(client.map(ident, range(20), pure=False))  # warm the workers
            client.run_on_scheduler(lambda: None)
            phase(cluster, client, tmp, PHASE1, results.setdefault(1, {}))
            phase(cluster, client, tmp, PHASE2, results.setdefault(2, {}))
            client.close()
        finally:
            cluster.stop()
    report(results)


if __name__ == "__main__":
    main()
