"""What roastop writes, when the writing goes wrong: a SIGKILL loses at most
the last second of a recording; a full disk stops a recording at a whole
line and fails the exit; a failing checkpoint shows on the dashboard at once
and clears when a write succeeds; a full standard output fails the exit; a
symlinked --output is refused; planted temporaries do not block a write."""
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import ROASTOP, Listener, generate, load_metrics  # noqa: E402

FLUSH_BOUND = 1.0  # docs/recording.md: a recorded line waits at most this long in memory
MARGIN = 0.5  # scheduling slack on a loaded 2-core machine
FINAL_NAMES = ["metadata.json", "metrics.json", "report.html", "start_end_time.txt",
               "summary.txt"]


@pytest.fixture(scope="module")
def small_rec(tmp_path_factory):
    """3,000 chunks of 8 workers: far more than 16 KiB once recorded again."""
    d = tmp_path_factory.mktemp("outrec")
    rec = d / "run.jsonl"
    generate(rec, d / "truth.json", chunks=3000, workers=8, hours=0.2, sample_interval=5,
             datasets=2, files=200, seed=5)
    return rec


@contextlib.contextmanager
def tmpfs(mnt: Path, size: str):
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                                            str(mnt)], capture_output=True).returncode != 0:
        pytest.skip(f"needs root to mount a {size} tmpfs (CI runs as root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(path: Path, leave: int = 0):
    """Writes path until the file system is full, then gives back `leave` bytes."""
    with open(path, "wb", buffering=0) as f:
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 4096)
        f.truncate(max(0, f.tell() - leave) // 4096 * 4096)


def whole_json_lines(path: Path):
    data = path.read_bytes()
    assert data.endswith(b"\n"), data[-80:]  # never a torn last line
    return [json.loads(line) for line in data.splitlines()]


def test_sigkill_loses_at_most_the_last_second_of_a_recording(tmp_path):
    rec = tmp_path / "rec.jsonl"
    lst = Listener(tmp_path, "--no-auth", "--scheduler", "http://127.0.0.1:9", "--record", rec)
    lst.send({"type": "run_start", "run_id": "r", "host": "h", "pid": 1, "seq": 0}, tagged=False)
    sent_at = {}
    t0 = time.monotonic()
    seq = 1
    while time.monotonic() - t0 < 4:  # 20 chunks a second: never 64 KiB
        lst.send({"type": "chunk", "run_id": "r", "host": "h", "pid": 1, "seq": seq,
                  "duration": 0.1, "num_events": 10, "dataset": "d"}, tagged=False)
        sent_at[seq] = time.monotonic()
        seq += 1
        time.sleep(0.05)
    killed = time.monotonic()
    lst.proc.kill()
    lst.proc.wait()
    lines = rec.read_text().splitlines()
    assert lines, "not even the header survived the SIGKILL"
    assert json.loads(lines[0])["type"] == "recording"
    events = [json.loads(line) for line in lines[1:] if line.endswith("}")]
    assert "run_start" in [e["type"] for e in events]  # written at once, as a run boundary
    got = {e["seq"] for e in events if e["type"] == "chunk"}
    due = {s for s, t in sent_at.items() if t <= killed - FLUSH_BOUND - MARGIN}
    assert due and due <= got, sorted(due - got)


def test_recording_to_a_full_disk_fails_the_exit_at_a_whole_line(small_rec, tmp_path):
    with tmpfs(tmp_path / "full", "16k") as mnt:
        rec = mnt / "rec.jsonl"
        p = subprocess.run([ROASTOP, "--replay", small_rec, "--speed", "0", "--headless",
                            "--record", rec, "--output", tmp_path / "m"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, p.stderr
        assert "recording stopped: No space left on device" in p.stderr
        assert f"the recording {rec} is incomplete" in p.stderr
        assert "Throughput" in p.stdout  # the run itself is not lost
        load_metrics(tmp_path / "m")
        lines = whole_json_lines(rec)
        assert lines[0]["type"] == "recording"


def alert_colour(screen_escapes: str, text: str) -> str:
    """The SGR sequences right before text on the screen."""
    m = re.search(r"((?:\x1b\[[0-9;]*m)+)" + re.escape(text), screen_escapes)
    assert m, f"{text!r} not on screen"
    return m.group(1)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_failing_checkpoints_and_recording_shown_at_once_on_the_dashboard(small_rec, tmp_path):
    from test_screen import COLOUR_SGR, SGR, Screen
    with tmpfs(tmp_path / "full", "1m") as mnt:
        fill(mnt / "filler", leave=4096)  # one page: the recording's header fits
        s = Screen(tmp_path, ["--replay", small_rec, "--speed", "60", "--checkpoint", "1",
                              "--record", mnt / "rec.jsonl"], out=mnt / "m")
        try:
            alert = "checkpoint failed, recording stopped: No space left on device"
            s.wait_for(alert, timeout=30)
            # its colours read off a capture that has it (one of its own: waited for)
            escaped = s.wait_for(lambda e: e if alert in SGR.sub("", e) else None,
                                 timeout=30, escapes=True)
            assert COLOUR_SGR.search(alert_colour(escaped, alert))
            s.keys("7")
            s.wait_for("checkpoint failed: cannot", timeout=30)
            s.wait_for("recording stopped: No space left on device (", timeout=30)
            (mnt / "filler").unlink()  # room again: the next checkpoint succeeds
            s.wait_for("measurement written again, after", timeout=30)
            s.keys("1")
            # the main view again (view 7's lines say "recording stopped" too),
            # its header drawn above its panels: the alert read whole, and the
            # whole state waited for (a frame drawn before the alert's next tick
            # still says "checkpoint failed, recording stopped")
            s.wait_for(lambda t: t if "event log" not in t and "runtime" in t and
                       "recording stopped: No space left on device" in t and
                       "checkpoint failed" not in t else None, timeout=30)
            load_metrics(mnt / "m")
            s.keys("q")
            s.wait_for("roastop-exit=1", timeout=30)  # the recording is incomplete
        finally:
            s.close()
        whole_json_lines(mnt / "rec.jsonl")


def test_summary_to_a_full_stdout_fails_the_exit(small_rec, tmp_path):
    with open("/dev/full", "w") as full:
        p = subprocess.run([ROASTOP, "--replay", small_rec, "--speed", "0", "--headless",
                            "--output", tmp_path / "m"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    assert p.returncode == 1, p.stderr
    assert "could not print the summary on standard output: No space left on device" in p.stderr
    load_metrics(tmp_path / "m")  # written all the same; summary.txt holds the summary


def test_symlinked_output_is_refused_and_its_target_untouched(small_rec, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "metrics.json").write_text("precious")
    link = tmp_path / "link"
    link.symlink_to(victim)
    for out in (str(link), str(link) + "/"):
        p = subprocess.run([ROASTOP, "--replay", small_rec, "--speed", "0", "--headless",
                            "--output", out], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, p.stderr
        assert "it is a symbolic link" in p.stderr
    assert os.listdir(victim) == ["metrics.json"]
    assert (victim / "metrics.json").read_text() == "precious"


def test_planted_temporaries_do_not_block_the_write(small_rec, tmp_path):
    """Temporaries planted where the run will write (its directory's name is
    known in advance: the run's start in local time and its name) neither
    block the write nor get replaced by roastop's own."""
    lines = small_rec.read_text().splitlines(keepends=True)
    start = json.loads(lines[1])
    assert start["type"] == "run_start"
    rec = tmp_path / "planted.jsonl"
    rec.write_text(lines[0] + json.dumps(dict(start, name="planted")) + "\n" +
                   "".join(lines[2:]))
    out = tmp_path / "m"
    target = out / (time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(start["t"])) + "_planted")
    target.mkdir(parents=True)
    err = tmp_path / "stderr.txt"
    p = subprocess.Popen([ROASTOP, "--replay", rec, "--speed", "1", "--headless",
                          "--checkpoint", "0", "--output", out], stdout=subprocess.PIPE,
                         stderr=open(err, "w"), text=True)
    planted = {f".{name}.{p.pid}.{k}.tmp" for name in FINAL_NAMES for k in range(16)}
    for name in planted:  # every name the writer used to derive from its pid
        (target / name).write_text("")
    deadline = time.monotonic() + 30
    while "collecting" not in err.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode == 0, err.read_text()
    load_metrics(out)
    written = (out / "latest").resolve()
    # the planted directory itself, or a fresh one beside it ("-2": a clash)
    assert written in (target, target.with_name(target.name + "-2")), written
    assert set(os.listdir(target)) >= planted
    own = set(os.listdir(written)) - planted
    assert own == set(FINAL_NAMES)  # and no temporary of its own
