"""Stops of every kind, a full disk and a week-long run: the measurement is
whole, or the summary is on stdout and the exit status says it was not
written; memory does not grow with the length of the run."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import (ROASTOP, TOOLS, Listener, generate, load_metrics,  # noqa: E402
                      memory_env, run_dir)


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    """A run whose checkpoint takes a while to write (20,000 files)."""
    d = tmp_path_factory.mktemp("big")
    rec = d / "run.jsonl"
    generate(rec, d / "truth.json", chunks=60000, workers=200, hours=2, sample_interval=5,
             datasets=20, files=20000, seed=3)
    return rec


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.55, 0.8])
def test_signal_during_checkpoints_leaves_a_whole_measurement(big_run, tmp_path, delay):
    out = tmp_path / "m"
    p = subprocess.Popen([ROASTOP, "--replay", big_run, "--speed", "400", "--headless",
                          "--checkpoint", "1", "--output", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (out / "latest" / "metrics.json").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1 + delay)  # somewhere in or between the next checkpoint's writes
    p.send_signal(signal.SIGHUP)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 0, stderr
    m = load_metrics(out)
    assert m["num_chunks"] > 0
    d = run_dir(out).resolve()
    assert sorted(f.name for f in d.iterdir()) == [
        "metadata.json", "metrics.json", "report.html", "start_end_time.txt",
        "summary.txt"]  # no temporaries
    assert sorted(f.name for f in out.iterdir()) == sorted([d.name, "latest"])
    assert "Hangup" in stdout


def test_sigkill_leaves_a_checkpoint_at_most_10_s_old(tmp_path):
    lst = Listener(tmp_path, "--no-auth", "--scheduler", "http://127.0.0.1:9")
    sent_at = []
    t0 = time.monotonic()
    seq = 0
    while time.monotonic() - t0 < 13:
        lst.send({"type": "chunk", "run_id": "r", "host": "h", "pid": 1, "seq": seq,
                  "duration": 0.1, "num_events": 10, "dataset": "d"}, tagged=False)
        sent_at.append(time.monotonic())
        seq += 1
        time.sleep(0.02)
    killed = time.monotonic()
    lst.proc.kill()
    lst.proc.wait()
    path = run_dir(lst.out) / "metrics.json"
    age = time.time() - path.stat().st_mtime
    m = load_metrics(lst.out)  # whole: written to a temporary and renamed
    assert age <= 10.5, age
    sent_10s_before = sum(1 for t in sent_at if t <= killed - 10.5)
    assert m["num_chunks"] >= sent_10s_before


def test_full_disk_prints_summary_and_fails(tmp_path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs",
                                            str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a 16 kB tmpfs (CI runs as root)")
    try:
        rec = tmp_path / "run.jsonl"
        generate(rec, tmp_path / "truth.json", chunks=3000, workers=8, hours=0.2,
                 sample_interval=5, datasets=2, files=2000, seed=5)
        p = subprocess.run([ROASTOP, "--replay", rec, "--speed", "0", "--headless", "--output",
                            mnt / "m"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1
        assert "Throughput" in p.stdout  # the summary is not lost
        assert "No space left on device" in p.stderr
        assert not list((mnt / "m").glob("*/metrics.json"))  # never a torn file
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def replay_peak_rss_kb(rec):
    p = subprocess.Popen([ROASTOP, "--replay", rec, "--speed", "0", "--headless", "--output",
                          rec.parent / "m", "--checkpoint", "0"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=memory_env())
    _, status, usage = os.wait4(p.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss


def test_week_long_recording_memory_flat(tmp_path):
    rss = {}
    for hours in (24, 168):
        d = tmp_path / f"h{hours}"
        d.mkdir()
        rec = d / "run.jsonl"
        generate(rec, d / "truth.json", chunks=200000, workers=200, hours=hours,
                 sample_interval=60, datasets=5, files=2000, seed=11)
        rss[hours] = replay_peak_rss_kb(rec)
    # 7x the samples and duration: bounded timelines, so (nearly) the same memory
    assert rss[168] <= rss[24] * 1.10 + 2048, rss
