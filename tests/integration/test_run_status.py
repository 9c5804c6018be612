"""How a run ended, end to end: the real collector and emitter (python/roastop,
no Dask cluster: a MetricsCollector without a client) into the real roastop.
A with-block that raises makes the run `failed` with the exception's type and
message; one that finishes, `completed`; a client killed with SIGKILL mid-run,
`incomplete` after --run-idle-timeout; roastop quitting while chunks still
arrive, `stopped`. Each status is checked where a user reads it: metrics.json
(run_status, run_status_reason), the summary's status line on stdout, the
lines a headless roastop prints, and the dashboard's header (a tmux pane). A
recording replays roastop's own decision. docs/metrics.md has the keys."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import Listener, load_metrics, roastop
from dask_cluster import wait_for

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

# argv: python dir, mode (complete | fail | forever), chunks before the end
SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from roastop import MetricsCollector, track_metrics

    class Events(list):
        def __init__(self, i):
            super().__init__(range(100))
            self.metadata = {"dataset": "ds", "filename": "f%d.root" % (i % 5),
                             "entrystart": 0, "entrystop": 100}
            self.attrs = {}

    class DimuonProcessor:
        @track_metrics
        def process(self, events):
            return {"n": len(events)}

    mode, n = sys.argv[2], int(sys.argv[3])
    p = DimuonProcessor()
    with MetricsCollector(None, processor_instance=p, run_name="status-run") as mc:
        i = 0
        while mode == "forever" or i < n:
            p.process(Events(i))
            i += 1
            if mode == "forever":
                print("chunk", i, flush=True)
                time.sleep(0.02)
        if mode == "fail":
            raise ValueError("chunk 7 had no muons: 'pt' missing")
    print("done", mc.datagrams_sent, mc.datagrams_lost)
""")

DEADLINE = 60


def client(tmp_path, lst, mode, n=20, **kw):
    script = tmp_path / "client.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, ROASTOP_ADDR="%s:%d" % lst.addr, ROASTOP_KEY=lst.key.hex())
    return subprocess.Popen([sys.executable, str(script), str(PYTHON_DIR), mode, str(n)],
                            env=env, text=True, **kw)


def status_line(stdout):
    """The summary's status line: the one after its title."""
    lines = stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("roastop ") and "summary" in line)
    return lines[i + 1]


def checkpoint(out):
    try:
        return load_metrics(out)
    except (OSError, ValueError):
        return None  # not written yet


def wait_checkpoint(lst, cond):
    """The first checkpoint for which cond(metrics) holds (the one read then)."""
    return wait_for(lambda: (lambda m: m if m and cond(m) else None)(checkpoint(lst.out)),
                    timeout=DEADLINE)


def wait_chunks(lst, n=5):
    return wait_checkpoint(lst, lambda m: (m.get("num_chunks") or 0) >= n)


def test_failed_run_says_the_exception(tmp_path):
    lst = Listener(tmp_path, "--exit-on-run-end")
    p = client(tmp_path, lst, "fail", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=DEADLINE)
    assert p.returncode == 1  # the collector let the user's exception through
    assert "ValueError: chunk 7 had no muons" in err and "done" not in out
    stdout, _ = lst.proc.communicate(timeout=DEADLINE)  # --exit-on-run-end, also when failed
    assert lst.proc.returncode == 0, lst.err_path.read_text()
    m = load_metrics(lst.out)
    assert m["run_status"] == "failed"
    assert m["run_status_reason"] == "ValueError: chunk 7 had no muons: 'pt' missing"
    assert m["num_chunks"] == 20
    assert status_line(stdout) == \
        "run ended: failed - ValueError: chunk 7 had no muons: 'pt' missing"


def test_completed_run(tmp_path):
    lst = Listener(tmp_path, "--exit-on-run-end")
    p = client(tmp_path, lst, "complete", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=DEADLINE)
    assert p.returncode == 0, err
    stdout, _ = lst.proc.communicate(timeout=DEADLINE)
    assert lst.proc.returncode == 0, lst.err_path.read_text()
    m = load_metrics(lst.out)
    assert (m["run_status"], m["run_status_reason"]) == ("completed", None)
    assert status_line(stdout) == "run ended: completed"


def test_old_emitter_run_end_means_completed(tmp_path):
    lst = Listener(tmp_path, "--checkpoint", "1")
    env = {"host": "h", "pid": 7, "instance": 1, "sent": time.time()}
    lst.send({"type": "run_start", "run_id": "old", "seq": 0, **env})
    lst.send({"type": "run_end", "run_id": "old", "seq": 1, **env})  # no status: an old emitter
    stdout, m = stop_when_applied(lst, "run_end")
    assert m["run_status"] == "completed"
    assert status_line(stdout) == "run ended: completed"


def stop_when_applied(lst, event_type):
    """SIGTERM once a checkpoint shows the event applied (needs --checkpoint 1)."""
    def applied():
        m = checkpoint(lst.out)
        return m and m["roastop"]["events_applied"].get(event_type, 0) >= 1
    wait_for(applied, timeout=DEADLINE)
    return lst.stop()


def test_killed_client_is_incomplete_after_idle_timeout(tmp_path):
    rec = tmp_path / "session.jsonl"
    lst = Listener(tmp_path, "--run-idle-timeout", "2", "--checkpoint", "1", "--record", rec)
    t0 = time.monotonic()
    p = client(tmp_path, lst, "forever", stdout=subprocess.DEVNULL)
    try:
        assert wait_chunks(lst)["run_status"] == "running"
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=DEADLINE)
    t_kill = time.monotonic()
    m = wait_checkpoint(lst, lambda m: m.get("run_status") == "incomplete")
    assert "no datagram from the run for 2 s" in m["run_status_reason"]
    # the run ends at its last datagram: the idle wait is not in its elapsed time
    assert m["elapsed_time_seconds"] <= t_kill - t0 + 0.5
    stdout, m = lst.stop()  # and at exit it stays incomplete, not stopped
    assert m["run_status"] == "incomplete"
    assert status_line(stdout).startswith("run ended: incomplete - no datagram from the run")
    assert "roastop: run incomplete" in lst.err_path.read_text()
    # roastop's decision is in the recording: a replay ends the run the same way
    r = roastop("--replay", rec, "--speed", "0", "--headless", "--output", tmp_path / "replayed")
    assert r.returncode == 0, r.stderr
    assert load_metrics(tmp_path / "replayed")["run_status"] == "incomplete"
    assert any(json.loads(line).get("status") == "incomplete"
               for line in rec.read_text().splitlines() if '"run_end"' in line)


def test_exit_on_run_end_also_after_a_dead_client(tmp_path):
    """--exit-on-run-end: a batch roastop whose client was killed exits once
    the run is marked incomplete, instead of waiting for --duration."""
    lst = Listener(tmp_path, "--exit-on-run-end", "--run-idle-timeout", "1", "--checkpoint", "1")
    p = client(tmp_path, lst, "forever", stdout=subprocess.DEVNULL)
    try:
        wait_chunks(lst)
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=DEADLINE)
    stdout, _ = lst.proc.communicate(timeout=DEADLINE)  # long before --duration 60
    assert lst.proc.returncode == 0, lst.err_path.read_text()
    assert "stopped (run ended)" in stdout
    assert load_metrics(lst.out)["run_status"] == "incomplete"


def test_roastop_quitting_first_is_stopped(tmp_path):
    lst = Listener(tmp_path, "--checkpoint", "1")
    p = client(tmp_path, lst, "forever", stdout=subprocess.DEVNULL)
    try:
        wait_chunks(lst)
        stdout, m = lst.stop()  # SIGTERM while the chunks still arrive
        assert p.poll() is None
    finally:
        p.kill()
        p.wait(timeout=DEADLINE)
    assert m["run_status"] == "stopped"
    assert m["run_status_reason"] == "roastop stopped (Terminated) while the run was going"
    assert status_line(stdout) == \
        "run ended: stopped - roastop stopped (Terminated) while the run was going"


def test_header_says_the_run_failed(tmp_path):
    """The dashboard's header (a tmux pane, as test_screen.py) after a replay
    of a failed run: the status and the exception, not "run ended"."""
    import shutil
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    from test_screen import Screen
    rec = tmp_path / "failed.jsonl"
    lines = [{"type": "recording", "format": "roastop-recording", "version": 1},
             {"type": "run_start", "t": 1767225600, "run_id": "r", "name": "dimuon"}]
    lines += [{"type": "chunk", "t": 1767225601 + i, "duration": 0.5, "num_events": 100,
               "dataset": "ds"} for i in range(5)]
    lines.append({"type": "run_end", "t": 1767225610, "run_id": "r", "status": "failed",
                  "error_type": "ValueError", "error_message": "chunk 7 had no muons"})
    rec.write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = Screen(tmp_path, ["--replay", rec, "--speed", "0"])
    try:
        # "end reached" is on the header's first line: the status line below it
        # is read off the last frame, which stays, drawn whole
        screen = s.wait_still("end reached", timeout=DEADLINE)
        header = next(line for line in screen.splitlines() if line.startswith(" run dimuon"))
        assert "run failed: ValueError: chunk 7 had no muons" in header
        assert "run ended" not in screen
        s.keys("q")
        s.wait_for("roastop-exit=0", timeout=DEADLINE)
    finally:
        s.close()
