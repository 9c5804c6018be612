"""Time that never steps back: a wall-clock step of a minute either way in
the middle of a live run (the LD_PRELOAD shim tests/tools/clockstep.c shifts
CLOCK_REALTIME, gettimeofday and time, not CLOCK_MONOTONIC) changes neither
the elapsed time, nor the peak worker count, nor the event rate; a recording
whose lines are shuffled replays with the elapsed time and peaks of the
unshuffled one, each line whose time goes back counted as a time_regression
(docs/recording.md, "Time going back"; docs/metrics.md, "Time")."""
import copy
import json
import os
import random
import sys
import time
from pathlib import Path

import pytest

from conftest import TOOLS, Listener, generate, load_metrics, roastop
from dask_cluster import wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
from fake_scheduler import FIX, FakeScheduler  # noqa: E402

POLL = 0.5  # roastop's scheduler poll interval in the live test, seconds
PEAK = 16  # workers at the end of the live run


class ScaledScheduler(FakeScheduler):
    """The fake dashboard serving a cluster of n workers (identity.json and
    /metrics agree), counting the identity polls."""

    def __init__(self):
        super().__init__()
        self.template = json.loads((FIX / "identity-idle.json").read_text())
        self.metrics_text = self.metrics.decode()
        self.identity_polls = 0
        self.scale(1)

    def scale(self, n):
        ident = copy.deepcopy(self.template)
        w0 = next(iter(ident["workers"].values()))
        ident["workers"] = {}
        for i in range(n):
            addr = f"tcp://127.0.0.1:{40000 + i}"
            ident["workers"][addr] = dict(w0, id=addr, name=addr)
        ident["n_workers"] = n
        ident["total_threads"] = n * w0["nthreads"]
        self.identity = json.dumps(ident).encode()
        self.metrics = self.metrics_text.replace(
            'dask_scheduler_workers{state="idle"} 2.0',
            f'dask_scheduler_workers{{state="idle"}} {n}.0').encode()

    def body_for(self, path):
        if path == "/json/identity.json":
            self.identity_polls += 1
        return super().body_for(path)


def chunk(seq):
    return {"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
            "duration": 0.25, "num_events": 1000, "dataset": "ds"}


@pytest.mark.parametrize("step", [60, -60])
def test_wall_clock_step_moves_neither_elapsed_nor_peaks(tmp_path, step):
    offset = tmp_path / "clock_offset"
    offset.write_text("0\n")
    env = dict(os.environ, LD_PRELOAD=str(Path(TOOLS).resolve() / "clockstep.so"),
               CLOCKSTEP_FILE=str(offset))
    sched = ScaledScheduler()
    try:
        t_launch = time.monotonic()
        lst = Listener(tmp_path, "--scheduler", sched.url, "--interval", str(POLL), env=env)
        t_first = time.monotonic()
        seq = 0
        for second in range(12):  # 10 chunks a second, one more worker a second
            sched.scale(second + 1)
            if second == 4:
                offset.write_text(f"{step}\n")
            for _ in range(10):
                seq += 1
                lst.send(chunk(seq))
                t_last_chunk = time.monotonic()
                time.sleep(0.1)
        sched.scale(PEAK)
        polls = sched.identity_polls
        wait_for(lambda: sched.identity_polls >= polls + 3, timeout=60)
        t_stop = time.monotonic()
        _, m = lst.stop()
        t_exit = time.monotonic()
    finally:
        sched.close()
    # roastop's first event comes after its launch and before the first chunk
    lo, hi = t_stop - t_first, t_exit - t_launch
    assert lo - POLL <= m["elapsed_time_seconds"] <= hi + POLL, (lo, hi, m["elapsed_time_seconds"])
    assert m["peak_workers"] == PEAK
    assert m["num_chunks"] == seq and m["total_events"] == seq * 1000
    # rates are over the run's window: without run markers, from the first
    # chunk's start (0.25 s before it arrived) to the last chunk's arrival
    span = t_last_chunk - t_first + 0.25
    assert m["rate_window_seconds"] == pytest.approx(span, abs=POLL)
    rate = m["event_rate_elapsed_khz"] * 1000
    assert seq * 1000 / (span + POLL) <= rate <= seq * 1000 / (span - POLL), (rate, span)
    assert f"system clock moved {step:+.1f} s" in lst.err_path.read_text()


def line_time(line):
    return json.loads(line)["t"]


def test_shuffled_recording_counts_regressions_keeps_elapsed_and_peaks(tmp_path):
    rec, sample_interval = tmp_path / "run.jsonl", 1
    truth = generate(rec, tmp_path / "truth.json", chunks=2000, workers=16, hours=0.2,
                     sample_interval=sample_interval, datasets=3, files=30, fail_every=97,
                     seed=11)
    header, *body = rec.read_text().splitlines(keepends=True)
    random.Random(18).shuffle(body)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text(header + "".join(body))
    regressions, latest = 0, None
    for line in body:
        t = line_time(line)
        regressions += latest is not None and t < latest
        latest = t if latest is None else max(latest, t)

    def replay(path, out):
        p = roastop("--replay", path, "--speed", 0, "--headless", "--output", out)
        assert p.returncode == 0, p.stderr
        return load_metrics(out)

    m0, m1 = replay(rec, tmp_path / "out0"), replay(shuffled, tmp_path / "out1")
    assert m1["elapsed_time_seconds"] == pytest.approx(m0["elapsed_time_seconds"],
                                                       abs=sample_interval)
    assert m1["elapsed_time_seconds"] == pytest.approx(truth["elapsed_time_seconds"],
                                                       abs=sample_interval)
    for key in ("peak_workers", "peak_memory_bytes", "num_chunks", "total_events"):
        assert m1[key] is not None and m1[key] == m0[key], key
    # sums in another order
    assert m1["total_cpu_time"] == pytest.approx(m0["total_cpu_time"], rel=1e-9)
    # the samples read before the first chunk line but timed before that chunk's
    # start are left out when it begins the (implicit) run, which the run_start
    # read later takes over (docs/recording.md, "Time going back"): a few of 721
    assert m1["cpu_utilization_mean_percent"] == pytest.approx(
        m0["cpu_utilization_mean_percent"], rel=1e-4)
    assert m1["peak_workers"] == truth["peak_workers"]
    # with samples out of order a series averages its samples: within a sample's worth
    for key in ("avg_workers", "total_cores", "core_efficiency"):
        assert m1[key] == pytest.approx(m0[key], rel=0.02), key
    assert m0["roastop"]["time_regressions"] == 0
    assert m1["roastop"]["time_regressions"] == regressions > len(body) // 2
    assert m1["roastop"]["replay"]["rejected"]["total"] == 0  # applied in part, not skipped
