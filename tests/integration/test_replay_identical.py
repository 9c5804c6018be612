"""A replay of a recorded live session reproduces its event log and its
metrics.json (docs/recording.md, "What a replay reproduces"): a real
listener fed by a raw sender (a loss, a forged datagram, a run) and by the
Python emitter (a collector's run of 300 decorated chunks), recorded with
--record; then the recording replayed headless. Every run's log lines (text,
level, time, order) and its whole metrics.json must be the live one's, but
for the blocks docs/recording.md names as the replay's or the live
session's own."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import Listener, generate, no_nan, roastop, run_dirs
from test_emitter_roundtrip import PYTHON_DIR, SCRIPT

# docs/recording.md, "What a replay reproduces": the blocks only one side has
LIVE_ONLY = ("serve",)  # the live session's HTTP server
REPLAY_ONLY = ("replay",)  # the replay's own block: its reading of the file


def chunk(seq, **kw):
    return dict({"type": "chunk", "run_id": "raw", "host": "h", "pid": 7, "seq": seq,
                 "duration": 0.25, "num_events": 1000, "dataset": "ds"}, **kw)


def wait_for(what, check, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def runs(out: Path):
    """{directory name: metrics.json} of every run under an output root."""
    return {d.name: no_nan((d / "metrics.json").read_text()) for d in run_dirs(out)}


def runs_so_far(out: Path):
    """runs() while roastop writes: a run's directory is made before its
    first metrics.json, which is renamed into place whole."""
    return {d.name: no_nan((d / "metrics.json").read_text()) for d in run_dirs(out)
            if (d / "metrics.json").exists()}


def live_log(out: Path, needle):
    """Some run's log has a line containing needle (read from the checkpoints)."""
    for d in run_dirs(out):
        try:
            m = no_nan((d / "metrics.json").read_text())
        except (OSError, ValueError):
            continue
        if any(needle in line["text"] for line in m["roastop"].get("log", [])):
            return True
    return False


def comparable(m, drop):
    ro = dict(m["roastop"])
    for key in drop:
        ro.pop(key, None)
    return dict(m, roastop=ro)


def test_replay_reproduces_the_live_log_and_metrics(tmp_path):
    rec = tmp_path / "live.jsonl"
    lst = Listener(tmp_path, "--record", str(rec), "--checkpoint", "1")
    try:
        lst.send({"type": "run_start", "run_id": "raw", "host": "h", "pid": 7, "seq": 0,
                  "processor": "RawProcessor"})
        for seq in [s for s in range(1, 21) if s not in (11, 12)]:  # 11, 12: lost
            lst.send(chunk(seq))
        lst.send(chunk(100000), key=b"k" * 32)  # signed with a wrong key: rejected
        wait_for("the loss in the live log", lambda: live_log(lst.out, "datagrams lost"))
        wait_for("the rejection in the live log",
                 lambda: live_log(lst.out, "datagrams rejected"))
        lst.send({"type": "run_end", "run_id": "raw", "host": "h", "pid": 7, "seq": 21,
                  "status": "completed"})
        env = dict(os.environ, ROASTOP_ADDR="%s:%d" % lst.addr, ROASTOP_KEY=lst.key.hex())
        script = tmp_path / "emit.py"
        script.write_text(SCRIPT)
        p = subprocess.run([sys.executable, str(script), str(PYTHON_DIR), "300"], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        wait_for("both runs ended in the checkpoints", lambda: sum(
            m["roastop"]["run_ended"] for m in runs_so_far(lst.out).values()) == 2)
    finally:
        lst.stop()
    live = runs(lst.out)
    assert len(live) == 2

    out = tmp_path / "replayed"
    r = roastop("--replay", rec, "--speed", 0, "--headless", "--output", out)
    assert r.returncode == 0, r.stderr
    replayed = runs(out)
    assert sorted(replayed) == sorted(live)

    for name, lm in live.items():
        rm = replayed[name]
        assert rm["roastop"]["log"] == lm["roastop"]["log"], name
        assert rm["roastop"]["log_lines"] == lm["roastop"]["log_lines"]
        assert rm["roastop"]["udp"] == lm["roastop"]["udp"], name
        assert comparable(rm, REPLAY_ONLY) == comparable(lm, LIVE_ONLY), name
    logs = [line["text"] for m in live.values() for line in m["roastop"]["log"]]
    for needle in ("datagrams lost", "datagrams rejected", "run started", "run completed"):
        assert any(needle in t for t in logs), (needle, logs)
    udp = next(iter(live.values()))["roastop"]["udp"]
    assert udp["rejected"]["bad_tag"] == 1
    # counters lines: at most one a second per source, but the stop's and those
    # brought just before a run closes, its settle (1 s after its end) over
    # (docs/recording.md, "counters")
    lines = [json.loads(line) for line in rec.read_text().splitlines()[1:]]
    settles = [e["t"] + 1.0 for e in lines if e["type"] == "run_end"]
    times = {}
    for e in lines:
        if e["type"] == "counters":
            times.setdefault(e["source"], []).append(e["t"])
    assert set(times) >= {"udp"} and settles
    for source, ts in times.items():
        early = [(a, b) for a, b in zip(ts, ts[1:-1]) if b - a < 0.99]
        at_close = [(a, b) for a, b in early if any(s <= b <= s + 2.0 for s in settles)]
        assert early == at_close, (source, early, settles)
    assert sum(e["type"] == "log" for e in lines) >= 2
    replay_header_counts(tmp_path, rec, udp)


def replay_header_counts(tmp_path, rec, udp):
    """The replay's header shows the recorded listener's counts as the live
    header had them at the end: its address and the datagrams lost."""
    if shutil.which("tmux") is None:
        return
    from test_screen import Screen
    s = Screen(tmp_path, ["--replay", rec, "--speed", "0"], cols=200, rows=60,
               out=tmp_path / "replayed-tmux")
    # the counts drawn after "(end reached" on the header's line, read whole
    # (the separator after them): the last frame, which stays
    counts = re.compile(r"udp (\S+) rx \S+ lost (\d+) · ")
    try:
        text = s.wait_still(["(end reached", counts], timeout=60)
    finally:
        s.close()
    got = counts.search(text)
    assert got, text
    assert got.group(1) == udp["listen"], text
    assert int(got.group(2)) == udp["missing"] + udp.get("kernel_drops", 0) == 2, udp



def contradicting(src: Path, dst: Path):
    """src's events with every chunk 50 times longer (its cpu time too):
    the chunks' time then exceeds the threads times the window all along,
    and core_efficiency, speedup_factor and efficiency_ratio are n/a with a
    warning (docs/metrics.md, "Invariants") from the first chunks to the
    end."""
    lines = src.read_text().splitlines()
    for i, line in enumerate(lines):
        if '"type":"chunk"' in line:
            e = json.loads(line)
            e["duration"] *= 50
            e["cpu_time"] *= 50
            lines[i] = json.dumps(e, separators=(",", ":"))
    dst.write_text("\n".join(lines) + "\n")


def written(out: Path):
    """{run directory: (metrics.json, summary.txt)} as bytes."""
    return {d.name: ((d / "metrics.json").read_bytes(), (d / "summary.txt").read_bytes())
            for d in run_dirs(out)}


def test_drawing_changes_nothing_written(tmp_path):
    """The issue's done-when ("One owner for state"): a replay of the same
    recording, headless and with the dashboard drawing in tmux, writes
    byte-identical metrics.json and summary.txt, on a run with metric
    warnings: the loop's tick notes them in the event log at event times,
    never a frame (before, the frames noted them, and a headless replay had
    them on stderr only)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    from test_screen import Screen
    gen = tmp_path / "gen.jsonl"
    generate(gen, tmp_path / "truth.json", chunks=300, workers=4, hours=0.02,
             sample_interval=2, datasets=2, files=6, seed=7)
    rec = tmp_path / "warned.jsonl"
    contradicting(gen, rec)
    speed = ["--speed", "20"]  # ~4 s: frames are drawn while the run goes on

    headless = tmp_path / "headless"
    r = roastop("--replay", rec, *speed, "--headless", "--output", headless)
    assert r.returncode == 0, r.stderr

    drawn = tmp_path / "drawn"
    s = Screen(tmp_path, ["--replay", rec, *speed], cols=200, rows=60, out=drawn)
    try:
        s.wait_for("end reached", timeout=120)
        s.keys("q")
        s.wait_for("roastop-exit=0", timeout=60)
    finally:
        s.close()

    want, got = written(headless), written(drawn)
    assert len(want) == 1 and sorted(got) == sorted(want)
    for name in want:
        assert got[name][0] == want[name][0], (name, "metrics.json")
        assert got[name][1] == want[name][1], (name, "summary.txt")
    log = no_nan(next(iter(want.values()))[0])["roastop"]["log"]
    assert any(line["text"].startswith("core_efficiency n/a: ") for line in log), log
