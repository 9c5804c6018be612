"""Physically possible numbers on the paths physicists walk (issue 18, item 4):
hand-written recordings of a failed run with a chunk that finished after the
run's end, and of a run whose coffea report contradicts the cluster, are
replayed headless; metrics.json must hold every invariant of docs/metrics.md
("Invariants") and say in roastop.warnings why a value is null."""
import json
import shutil

import pytest

from conftest import load_metrics, roastop
from test_screen import Screen

T0 = 1767225600.0
HEADER = {"type": "recording", "format": "roastop-recording", "version": 1,
          "roastop": "0.1.0", "created": int(T0)}


def sample(t, n_workers=2, threads=1):
    workers = [{"id": f"tcp://10.0.0.{i}:4000", "name": f"w{i}", "nthreads": threads,
                "memory_bytes": 1e8, "memory_limit": 4e9} for i in range(n_workers)]
    return {"type": "sample", "t": T0 + t, "worker_count": n_workers, "workers": workers}


def chunk(t, duration, events, error=None):
    c = {"type": "chunk", "t": T0 + t, "dataset": "a", "duration": duration,
         "num_events": events, "bytes_read": 1000000}
    if error:
        c["error"] = error
    return c


def replay(tmp_path, events):
    rec = tmp_path / "run.jsonl"
    rec.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *events]))
    out = tmp_path / "m"
    p = roastop("--replay", rec, "--speed", 0, "--headless", "--output", out)
    assert p.returncode == 0, p.stderr
    return p, load_metrics(out)


def assert_invariants(m):
    threads = m["total_cores"]
    if m["core_efficiency"] is not None:
        assert 0 <= m["core_efficiency"] <= 1
    if m["speedup_factor"] is not None and threads is not None:
        assert 0 <= m["speedup_factor"] <= threads
    for k in ("data_rate_gbps", "event_rate_elapsed_khz", "event_rate_cpu_total_khz",
              "event_rate_core_khz"):
        assert m[k] is None or m[k] >= 0, k
    assert m["num_successful_chunks"] + m["num_failed_chunks"] == m["num_chunks"]
    for w in m["roastop"]["warnings"]:
        assert m.get(w["key"]) is None and w["reason"], w


def test_failed_run_with_a_straggler(tmp_path):
    """The seen case: 2 one-thread workers; one chunk raised, another slept
    and finished 3.1 s after the run's end. It used to read 147 % and a 2.9x
    speedup; 2.9 s of the straggler lie in the 3 s window: (1.4 + 1.4 + 2.9) /
    (2 x 3) = 0.95, and its events are not in the rate."""
    events = [{"type": "run_start", "t": T0, "run_id": "r1", "processor": "P"}]
    events += [sample(t) for t in (0, 1, 2)]
    events += [chunk(1.5, 1.4, 100000), chunk(2.0, 0.5, 100000, error="ValueError"),
               chunk(2.9, 1.4, 100000), sample(3),
               {"type": "run_end", "t": T0 + 3, "run_id": "r1"}]
    events += [sample(t) for t in (4, 5, 6)]
    events += [chunk(6.1, 6.0, 100000)]
    _, m = replay(tmp_path, events)
    assert_invariants(m)
    # epoch-sized times: about 1e-7 s resolution
    assert abs(m["core_efficiency"] - 0.95) < 1e-6
    assert abs(m["speedup_factor"] - 1.9) < 1e-6
    assert abs(m["event_rate_elapsed_khz"] - 200 / 3) < 1e-6
    assert m["total_events"] == 300000  # processed, straggler included
    assert m["num_failed_chunks"] == 1
    assert m["roastop"]["warnings"] == []


def test_report_over_core_time_is_null_with_a_reason(tmp_path):
    """coffea's processtime (50 s) cannot fit 2 threads x 10 s: the
    efficiencies are null, metrics.json and stderr say why."""
    events = [{"type": "run_start", "t": T0, "run_id": "r1", "processor": "P"},
              sample(0), sample(10),
              {"type": "report", "t": T0 + 10, "bytesread": 1e6, "entries": 1000,
               "processtime": 50, "chunks": 10},
              {"type": "run_end", "t": T0 + 10, "run_id": "r1"}]
    p, m = replay(tmp_path, events)
    assert m["core_efficiency"] is None and m["speedup_factor"] is None
    keys = {w["key"] for w in m["roastop"]["warnings"]}
    assert {"core_efficiency", "speedup_factor"} <= keys
    assert "core_efficiency n/a: coffea's processtime 50.0 s exceeds" in p.stderr
    assert "n/a" in p.stdout  # the summary


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_datasets_rate_fits_its_column(tmp_path):
    """310,977 events in 1 ms of chunk time: 311 MHz, whole, where the
    column used to show `310977.13 kH`."""
    rec = tmp_path / "run.jsonl"
    events = [HEADER, {"type": "run_start", "t": T0, "run_id": "r1"}, sample(0),
              chunk(1, 0.001, 310977), {"type": "run_end", "t": T0 + 2, "run_id": "r1"}]
    rec.write_text("".join(json.dumps(e) + "\n" for e in events))
    s = Screen(tmp_path, ["--replay", rec, "--speed", 0], cols=80, rows=24)
    try:
        s.wait_for("end reached", timeout=60)
        s.keys("Escape")
        s.keys("3")
        # the dataset's row under the header, drawn whole (the replay has
        # ended: the frame that stayed the same)
        screen = s.wait_still("SHARE", timeout=60)
        row = next(line for line in screen.splitlines() if line.strip().startswith("a "))
        assert "311 MHz" in row, row
        assert "kH" not in row.replace("kHz", ""), row
    finally:
        s.close()
