"""Numbers at the edge of what a scheduler can report: a value out of range
is a counted rejection, never a wrapped integer or undefined behaviour, and
one range table (include/roastop/range.h, docs/recording.md "Ranges") binds
the live decoders and the recording decoder alike, so a recorded live
session replays with no line rejected and to the same metrics."""
import collections
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import Listener, load_metrics, roastop  # noqa: E402
from dask_cluster import wait_for  # noqa: E402
from fake_scheduler import FIX, FakeScheduler  # noqa: E402

# the metrics a replay must reproduce from the scheduler samples it recorded
SCHEDULER_KEYS = ("avg_workers", "peak_workers", "total_cores", "cores_per_worker",
                  "peak_memory_bytes", "avg_memory_per_worker_bytes")


class HostileScheduler(FakeScheduler):
    """Serves its own /metrics and identity.json bodies; identity None: 404."""

    def __init__(self, metrics=None, identity=None):
        super().__init__()
        self.hostile_metrics = metrics
        self.hostile_identity = identity
        self.hits = collections.Counter()

    def body_for(self, path):
        self.hits[path] += 1
        if path == "/metrics" and self.hostile_metrics is not None:
            return self.hostile_metrics
        if path == "/json/identity.json":
            return self.hostile_identity
        return super().body_for(path)


def err(lst):
    return lst.err_path.read_text()


def watch(tmp_path, sched, *extra):
    return Listener(tmp_path, "--no-auth", "--scheduler", sched.url, "--interval", "0.3",
                    *extra)


def eight_billion_workers():
    """The probe's body: the scheduler's /metrics with every worker state at
    1e9 (each in range alone), summing to 8e9 workers."""
    states = ("idle", "partially_saturated", "saturated", "paused", "retiring",
              "closing", "closed", "init")
    lines = [f'dask_scheduler_workers{{state="{s}"}} 1e9' for s in states]
    return ("\n".join(lines) + '\ndask_scheduler_tasks{state="processing"} 3.0\n').encode()


def test_workers_summing_past_the_range_are_rejected_and_counted(tmp_path):
    # identity.json 404s, so the scheduler's /metrics is the only source
    sched = HostileScheduler(metrics=eight_billion_workers(), identity=None)
    try:
        lst = watch(tmp_path, sched)
        wait_for(lambda: sched.hits["/metrics"] >= 3 or lst.proc.poll() is not None,
                 timeout=30)
        text = err(lst)
        # under UBSan the old cast aborted roastop: "runtime error: 8e+09 is
        # outside the range of representable values of type 'unsigned int'"
        assert "runtime error" not in text and "Sanitizer" not in text, text
        _, m = lst.stop()
    finally:
        sched.close()
    assert m["peak_workers"] is None, m["peak_workers"]  # not 3,705,032,704
    s = m["roastop"]["scheduler"]
    assert s["out_of_range"] >= 1 and s["rejected"] >= s["out_of_range"]


def identity_with(**worker):
    """The captured identity.json with the first worker's fields replaced
    (metrics_ keys go into its metrics{})."""
    doc = json.loads((FIX / "identity-idle.json").read_text())
    w = next(iter(doc["workers"].values()))
    for key, value in worker.items():
        if key.startswith("metrics_"):
            w["metrics"][key[len("metrics_"):]] = value
        else:
            w[key] = value
    return json.dumps(doc).encode()


# Values live used to take and the recording format refused. Above the
# table's maximum live now rejects them too (counted); below it (CPU), the
# recording format takes them.
BAND = {
    "nthreads": (dict(nthreads=5e6), True),
    "memory": (dict(memory_limit=1e17), True),
    "cpu": (dict(metrics_cpu=5e5), False),
}


@pytest.mark.parametrize("case", sorted(BAND))
def test_a_recorded_live_session_replays_whole(tmp_path, case):
    fields, live_rejects = BAND[case]
    sched = HostileScheduler(identity=identity_with(**fields))
    rec = tmp_path / "live.jsonl"
    try:
        lst = watch(tmp_path, sched, "--record", rec)
        wait_for(lambda: sched.hits["/json/identity.json"] >= 3, timeout=30)
        _, live = lst.stop()
    finally:
        sched.close()
    out = tmp_path / "replayed"
    p = roastop("--replay", rec, "--speed", 0, "--headless", "--output", out, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "runtime error" not in p.stderr, p.stderr
    replayed = load_metrics(out)
    rejected = replayed["roastop"]["replay"]["rejected"]
    assert rejected["total"] == 0, (rejected, p.stderr)
    assert replayed["roastop"]["scheduler_samples"] == live["roastop"]["scheduler_samples"] > 0
    for key in SCHEDULER_KEYS:
        assert replayed.get(key) == live.get(key), key
    counted = live["roastop"]["scheduler"]["out_of_range"] if "out_of_range" in \
        live["roastop"]["scheduler"] else 0
    assert (counted > 0) == live_rejects, live["roastop"]["scheduler"]
