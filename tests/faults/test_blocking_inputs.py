"""Inputs that can block: a replay from a pipe or FIFO whose writer is quiet
or absent, a key file or a recording target that is a FIFO, a recording with one far-future time.
Nothing of it may hold the loop: signals are answered within a second, the
dashboard redraws and `q` quits while a writer is quiet, and the measurement
is written. A key file holds exactly 64 hex digits and at most one newline
(the emitter's rule for ROASTOP_KEY), or roastop refuses it at once."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
import test_screen  # noqa: E402
from conftest import ROASTOP, generate, load_metrics, run_dir, sigterm_seconds  # noqa: E402

HEADER = '{"type":"recording","format":"roastop-recording","version":1}\n'
NO_SCHEDULER = ["--scheduler", "http://127.0.0.1:9"]


@pytest.fixture(scope="module")
def rec(tmp_path_factory):
    """A short run: 60 chunks over 36 s, 4 workers."""
    d = tmp_path_factory.mktemp("blocking")
    path = d / "run.jsonl"
    generate(path, d / "truth.json", chunks=60, workers=4, hours=0.01, sample_interval=1,
             datasets=1, files=3, seed=11)
    return path


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def stop_within_a_second(p, out):
    """SIGTERM: exit 0 within 1 s, the measurement written."""
    took = sigterm_seconds(p)
    assert p.returncode == 0 and took < 1.0, (p.returncode, took)
    return load_metrics(out)


def chunk_lines(path, n):
    """The recording's lines up to and including its n-th chunk."""
    lines = []
    for line in path.read_text().splitlines(keepends=True):
        lines.append(line)
        n -= '"type":"chunk"' in line
        if n == 0:
            return lines
    raise AssertionError("recording too short")


def events_text(lines):
    """What the main view's progress line says of these lines' chunks."""
    n = sum(json.loads(line).get("num_events", 0) for line in lines if '"chunk"' in line)
    return f"events {n:,} of "


def test_quiet_pipe_replay_stops_at_sigterm(rec, tmp_path):
    out, err = tmp_path / "m", tmp_path / "stderr.txt"
    p = subprocess.Popen([ROASTOP, "--replay", "-", "--speed", "0", "--headless",
                          "--checkpoint", "1", "--output", out], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    p.stdin.write("".join(chunk_lines(rec, 5)).encode())
    p.stdin.flush()  # and the writer stays, quiet (as `(head; sleep) |` does)

    def five_chunks_checkpointed():
        try:
            return load_metrics(out)["num_chunks"] == 5
        except (OSError, ValueError, KeyError):
            return False
    try:
        wait_for(five_chunks_checkpointed, 30, "a checkpoint with the 5 chunks written so far")
        m = stop_within_a_second(p, out)
    finally:
        p.kill()
        p.stdin.close()
    assert m["num_chunks"] == 5


def test_fifo_without_writer_stops_at_sigterm(tmp_path):
    fifo, out, err = tmp_path / "fifo", tmp_path / "m", tmp_path / "stderr.txt"
    os.mkfifo(fifo)
    p = subprocess.Popen([ROASTOP, "--replay", fifo, "--headless", "--output", out],
                         stdout=subprocess.DEVNULL, stderr=open(err, "w"))
    try:
        wait_for(lambda: "collecting" in err.read_text(), 30,
                 "roastop opened the FIFO and runs its loop")
        m = stop_within_a_second(p, out)
    finally:
        p.kill()
    assert m["num_chunks"] is None  # none seen: n/a


def test_fifo_writer_arriving_later_is_replayed_whole(rec, tmp_path):
    """No writer yet is no end of input: the replay waits for one, and ends
    at its end of file."""
    fifo, out, err = tmp_path / "fifo", tmp_path / "m", tmp_path / "stderr.txt"
    os.mkfifo(fifo)
    p = subprocess.Popen([ROASTOP, "--replay", fifo, "--speed", "0", "--headless",
                          "--output", out], stdout=subprocess.PIPE,
                         stderr=open(err, "w"), text=True)
    try:
        wait_for(lambda: "collecting" in err.read_text(), 30, "roastop runs its loop")
        with open(fifo, "w") as w:
            w.write(rec.read_text())
        stdout, _ = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 0, err.read_text()
    assert "end of recording" in stdout
    assert load_metrics(out)["num_chunks"] == 60


def test_key_file_fifo_refused_at_once(tmp_path):
    fifo = tmp_path / "key"
    os.mkfifo(fifo, 0o600)
    t0 = time.monotonic()
    try:
        p = subprocess.run([ROASTOP, "--headless", "--key-file", fifo, *NO_SCHEDULER,
                            "--duration", "30", "--output", tmp_path / "m"],
                           capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError("roastop hung on a FIFO as key file")
    assert p.returncode == 1, p.stderr
    assert time.monotonic() - t0 < 5
    assert "not a regular file" in p.stderr


@pytest.mark.parametrize("reader", [False, True])
def test_record_to_a_fifo_refused_at_once(tmp_path, rec, reader):
    """With no reader the open used to block with signals masked; with one,
    the recording could not be cut back to whole lines: refused either way."""
    fifo = tmp_path / "rec.fifo"
    os.mkfifo(fifo, 0o600)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK) if reader else None
    try:
        p = subprocess.run([ROASTOP, "--headless", "--replay", rec, "--speed", "0",
                            "--record", fifo, "--output", tmp_path / "m"],
                           capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError("roastop hung on a FIFO as recording")
    finally:
        if r is not None:
            os.close(r)
    assert p.returncode == 1, p.stderr
    assert "not a regular file" in p.stderr


KEY = "0123456789abcdef" * 4


@pytest.mark.parametrize("text,ok", [
    (KEY, True), (KEY + "\n", True), (KEY + "\r\n", True),
    (KEY + "\njunk\n", False), (KEY + " # my key\n", False), (KEY + "\n\n", False),
    (KEY + "a\n", False), ("\n" + KEY, False), (KEY[:32] + "\n", False), (KEY + "\r", False)])
def test_key_file_holds_exactly_64_hex_digits(tmp_path, text, ok):
    key = tmp_path / "key"
    key.write_text(text, newline="")
    key.chmod(0o600)
    p = subprocess.run([ROASTOP, "--headless", "--key-file", key, *NO_SCHEDULER,
                        "--listen", "127.0.0.1:0", "--duration", "0.5",
                        "--output", tmp_path / "m"],
                       capture_output=True, text=True, timeout=30)
    if ok:
        assert p.returncode == 0, p.stderr
        assert f"ROASTOP_KEY=$(cat {key})" in p.stderr
    else:
        assert p.returncode == 1, p.stderr
        assert "exactly 64 hex digits" in p.stderr and "one newline" in p.stderr, p.stderr


def test_tail_f_replay_on_the_dashboard(rec, tmp_path, monkeypatch):
    """`tail -f rec | roastop --replay -`: the screen follows the lines as
    they come, says nothing of an end while the pipe is open, and `q` quits
    while roastop waits for more."""
    growing = tmp_path / "growing.jsonl"
    growing.write_text(HEADER)
    wrapper = tmp_path / "roastop-tail"
    # exec: roastop takes the shell's pid, which tail --pid watches to end with it
    wrapper.write_text(f'#!/bin/bash\nexec "{ROASTOP}" "$@" '
                       f'< <(exec tail -n +1 -f --pid=$$ "{growing}")\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(test_screen, "ROASTOP", str(wrapper))
    s = test_screen.Screen(tmp_path, ["--replay", "-", "--speed", "0"])
    try:
        s.wait_for("q quit")
        ten, thirty = chunk_lines(rec, 10)[1:], chunk_lines(rec, 30)[1:]
        with open(growing, "a") as f:
            f.writelines(ten)
        s.wait_for(events_text(ten), timeout=30)
        with open(growing, "a") as f:
            f.writelines(thirty[len(ten):])
        text = s.wait_for(events_text(thirty), timeout=30)
        assert "end reached" not in text
        s.keys("q")
        s.wait_for("roastop-exit=0", timeout=30)
    finally:
        s.close()
    assert load_metrics(tmp_path / "out")["num_chunks"] == 30


def pacing(m):
    """The replay block's pacing figures (its lines and rejections beside)."""
    return {k: m["roastop"]["replay"][k] for k in ("speed", "time_jumps")}


def test_far_future_event_is_not_waited_for(rec, tmp_path):
    """One chunk at t = 99999999999 (in range) in a paced replay: the jump
    there and back is skipped and counted, every line is applied."""
    lines = rec.read_text().splitlines(keepends=True)
    far = tmp_path / "far.jsonl"
    far.write_text("".join(lines[:len(lines) // 2]) +
                   '{"type":"chunk","t":99999999999,"duration":1}\n' +
                   "".join(lines[len(lines) // 2:]))
    out = tmp_path / "m"
    try:
        p = subprocess.run([ROASTOP, "--replay", far, "--speed", "100", "--headless",
                            "--output", out], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the paced replay waited for the far-future event")
    assert p.returncode == 0, p.stderr
    m = load_metrics(out)
    assert m["num_chunks"] == 61
    assert pacing(m) == {"speed": 100, "time_jumps": 2}
    assert p.stderr.count("not waited for") == 2, p.stderr
    assert "time jumps +9823" in p.stderr and "time jumps -9823" in p.stderr, p.stderr

    unpaced = tmp_path / "m0"
    p = subprocess.run([ROASTOP, "--replay", far, "--speed", "0", "--headless",
                        "--output", unpaced], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    m0 = json.loads((run_dir(unpaced) / "metrics.json").read_text())
    assert pacing(m0) == {"speed": 0, "time_jumps": None}  # nothing paced
    m0["roastop"].pop("replay")
    m["roastop"].pop("replay")
    # the paced replay's own log lines, its jumps (docs/recording.md, "What a replay
    # reproduces"), are not the recording's
    log = m["roastop"]["log"]
    m["roastop"]["log"] = [line for line in log if "not waited for" not in line["text"]]
    assert len(log) - len(m["roastop"]["log"]) == 2
    m["roastop"]["log_lines"] -= 2
    assert m == m0  # only the wall-clock wait was skipped, never an event or its time
