"""bench observer_*: the observer effect, what each way of watching costs
the Dask scheduler per task while tasks run (issue 33, bench/RESULTS.md).

Real `dask scheduler`s, each with two one-thread `dask worker` processes on
loopback (tests/integration/dask_cluster.py). Each round runs TASKS tiny
tasks (client.map of a function returning its argument) under one watcher
and measures the scheduler process's CPU (user+sys from /proc/PID/stat)
from the map to the gather, divided by TASKS, and the wall time.

Arms:
  unwatched        nobody watching
  roastop_plain    roastop --scheduler, default flags, no roastop code in
                   the analysis (no route on the scheduler)
  roastop_stream   the same with --task-stream (/eventstream, per task)
  roastcoffea      roastcoffea 0.1.2's MetricsCollector(client) around the work
  bokeh            Dask's /status page open in headless Chromium
  roastop_route    roastop --scheduler and roastop's MetricsCollector(client)
                   around the work, as README shows: it installs the route
  route_idle       nobody watching a scheduler that has the route installed
                   (its plugins stay once a collector ran: what it leaves)

The route, like /status (whose task stream adds distributed's
TaskStreamPlugin), leaves a plugin on the scheduler that no one can take
off. So three clusters run side by side: `plain` (the first four arms;
none adds a plugin), `bokeh` and `routed` (the route installed before the
first round). Every round runs every arm once, in an order rotated round
by round; an arm's ratio is the median over rounds of its CPU per task
over the same round's `unwatched`: the host's drift cancels within a round.
Three scheduler processes doing the same differ too, so before any plugin
is installed each cluster runs CALIBRATE bare, unwatched rounds, and an
arm's ratio is divided by its cluster's factor over `plain`.

Run with the test venv's python: `make bench`. BENCH_OBSERVER_TASKS and
BENCH_OBSERVER_ROUNDS change the defaults (4,000 tasks, 5 rounds).
BENCH_SMOKE=1: 40 tasks, 1 round, short settles: every line printed, no
figure meaning anything."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "integration"))

from dask_cluster import Cluster, end_with_me, spawn, stop_group as stop, wait_for  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
TASKS = int(os.environ.get("BENCH_OBSERVER_TASKS", "40" if SMOKE else "4000"))
ROUNDS = int(os.environ.get("BENCH_OBSERVER_ROUNDS", "1" if SMOKE else "5"))
# a watcher's start before the work: roastop's first polls; Chromium's page load
SETTLE = {"bokeh": 4 if SMOKE else 12, "other": 0.5 if SMOKE else 2}
ROASTOP = Path(os.environ.get("ROASTOP", REPO / os.environ.get("BUILD", "build") / "roastop"))
# each arm and the cluster it runs on
ARMS = {"unwatched": "plain", "roastop_plain": "plain", "roastop_stream": "plain",
        "roastcoffea": "plain", "bokeh": "bokeh", "roastop_route": "routed",
        "route_idle": "routed"}
PEERS = ("roastcoffea", "bokeh")
CALIBRATE = 1 if SMOKE else 3
SKIPPED = {}


def ident(x):
    return x


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def line(name, value, unit, note):
    print(f"bench {name}: {value} {unit} ({note})", flush=True)


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


def calibrate(clusters, tmp):
    """{cluster: its CPU per task over plain's}, nobody watching, before any
    plugin is installed: three scheduler processes differ (by up to 10 %
    here) even when they do the same, so each arm's ratio is divided by its
    cluster's factor. Median over CALIBRATE interleaved rounds."""
    ratios = {name: [] for name in clusters}
    for k in range(CALIBRATE):
        us = {name: one_round(c, client, tmp, "unwatched")[0]
              for name, (c, client) in clusters.items()}
        print(f"  calibration {k}: {us}", file=sys.stderr, flush=True)
        for name in clusters:
            ratios[name].append(us[name] / us["plain"])
    return {name: statistics.median(r) for name, r in ratios.items()}


def rounds(clusters, tmp, factor):
    """{arm: [(us, wall, ratio to the round's unwatched), ...]}, the ratio
    divided by the arm's cluster's factor (calibrate)."""
    out = {}
    names = list(ARMS)
    for k in range(ROUNDS):
        got = {}
        for arm in names[k % len(names):] + names[:k % len(names)]:
            cluster, client = clusters[ARMS[arm]]
            got[arm] = one_round(cluster, client, tmp, arm)
            print(f"  round {k} {arm}: {got[arm]}", file=sys.stderr, flush=True)
        base = got["unwatched"][0]
        for arm, r in got.items():
            if r is not None:
                out.setdefault(arm, []).append((r[0], r[1], r[0] / base / factor[ARMS[arm]]))
    return out


def report(results, factor):
    """results: {arm: [(us, wall, ratio), ...]}; factor: calibrate's."""
    for name in ("bokeh", "routed"):
        line(f"observer_calibration_{name}", f"{factor[name]:.3f}", "ratio",
             "its scheduler's CPU per task over plain's, unwatched and bare, median of "
             f"{CALIBRATE}: the arms on it are divided by it")
    notes = {"roastop_route": "target <= 1.02; and below roastcoffea and bokeh",
             "roastcoffea": "peer", "bokeh": "peer",
             "route_idle": "what a collector's route leaves on the scheduler"}
    med = {arm: [statistics.median(r[i] for r in runs) for i in range(3)]
           for arm, runs in results.items()}
    for arm in ARMS:
        if arm not in med:
            line(f"observer_{arm}_us_per_task", "n/a", "us", SKIPPED.get(arm, "did not run"))
            if arm != "unwatched":
                line(f"observer_{arm}_ratio", "n/a", "ratio", SKIPPED.get(arm, "did not run"))
            continue
        us, wall, ratio = med[arm]
        line(f"observer_{arm}_us_per_task", f"{us:.0f}", "us",
             f"scheduler CPU per task; wall {wall:.2f} s for {TASKS} tasks, "
             f"median of {len(results[arm])} rounds; cluster {ARMS[arm]}")
        if arm != "unwatched":
            note = notes.get(arm, "roastop without the route")
            line(f"observer_{arm}_ratio", f"{ratio:.3f}", "ratio",
                 f"{note}; median over rounds of its CPU per task over the round's unwatched")
    peers = [med[p][2] for p in PEERS if p in med]
    if "roastop_route" in med and peers:
        line("observer_roastop_route_vs_cheapest_peer",
             f"{med['roastop_route'][2] / min(peers):.3f}", "ratio",
             "target <= 1.0; roastop_route's ratio over the lower of roastcoffea's and bokeh's")
    else:
        line("observer_roastop_route_vs_cheapest_peer", "n/a", "ratio", "a peer did not run")


def install_route(client):
    """The collector's route on this scheduler, as a run's collector leaves
    it; its datagrams go to a port nobody listens on."""
    from roastop import MetricsCollector
    with MetricsCollector(client, addr="127.0.0.1:9", hello=False):
        pass


def main():
    end_with_me()
    clusters = {}
    with tempfile.TemporaryDirectory(prefix="bench_observer") as d:
        tmp = Path(d)
        try:
            from distributed import wait
            for name in ("plain", "bokeh", "routed"):
                (tmp / name).mkdir()
                cluster = Cluster(tmp / name, n_workers=2)
                clusters[name] = (cluster, cluster.client())
                wait(clusters[name][1].map(ident, range(20), pure=False))  # warm the workers
            factor = calibrate(clusters, tmp)
            install_route(clusters["routed"][1])
            results = rounds(clusters, tmp, factor)
            for _, client in clusters.values():
                client.close()
        finally:
            for cluster, _ in clusters.values():
                cluster.stop()
    report(results, factor)


if __name__ == "__main__":
    main()
