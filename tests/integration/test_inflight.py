"""Chunks in flight (issue 19, item 2; docs/metrics.md, "Chunks in flight"),
end to end with the real decorator, coffea's Runner and Dask workers:

- a stuck chunk (the example's processor, one chunk held until the test
  lets it go) is named on the main view, with its worker, file, entry range
  and age, in the alert colour, no later than 2 s after it became a
  straggler, at 80x24 and 200x60; view 9 lists it; once released it leaves
  the set and the measurement has nothing left running;
- the worker running a chunk is killed (its process, SIGKILL): the chunk is
  marked lost with that worker within two scheduler polls, logged, and the
  measurement counts it; Dask's rerun of the chunk elsewhere completes the run.
"""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import CHUNKSIZE, load_metrics, start_roastop_live
from dask_cluster import EXAMPLES, Cluster, client_env, wait_for
from test_screen import COLOUR_SGR, SGR, pytestmark, screen  # noqa: F401 (tmux or skip; the fixture)

DEADLINE = 120  # generous: CI is a loaded 2-core machine
HOLD = 240  # the longest a held chunk waits for the test's release, seconds
DURATION = r"(?:\d+h )?(?:\d+m )?\d+(?:\.\d+)?(?: ms|s)"

# The example's processor with one chunk held: it marks where it runs
# (its process id) and waits for MARKS/release (at most HOLD s).
HOLDING_CLIENT = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    examples, scheduler, files, marks, chunksize, hold = sys.argv[1:7]
    sys.path.insert(0, examples)
    os.environ["DIMUON_METRICS"] = "roastop"
    import cloudpickle
    import dimuon
    cloudpickle.register_pickle_by_value(dimuon)
    from coffea import processor
    from coffea.nanoevents import NanoAODSchema
    from distributed import Client
    from roastop import MetricsCollector, track_metrics

    fileset = json.loads((Path(files) / "fileset.json").read_text())
    MARKS = Path(marks)
    HELD = (fileset["DYJetsToLL"][1], 20000)

    class HeldDimuon(dimuon.DimuonProcessor):
        @track_metrics
        def process(self, events):
            where = (events.metadata["filename"], events.metadata["entrystart"])
            if where == HELD:
                (MARKS / ("held-%d" % os.getpid())).touch()
                deadline = time.monotonic() + float(hold)
                while not (MARKS / "release").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            return dimuon.DimuonProcessor.process.__wrapped__(self, events)

    client = Client(scheduler)
    proc = HeldDimuon()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=int(chunksize))
    with MetricsCollector(client, processor_instance=proc, run_name="held"):
        runner(fileset, processor_instance=proc, treename="Events")
    print("done", flush=True)
    client.close()
""")


def start_client(d: Path, cluster, files, env):
    """The holding client as a process; its marks directory."""
    marks = d / "marks"
    marks.mkdir()
    script = d / "holding_client.py"
    script.write_text(HOLDING_CLIENT)
    p = subprocess.Popen([sys.executable, str(script), str(EXAMPLES), cluster.address,
                          str(files), str(marks), str(CHUNKSIZE), str(HOLD)],
                         env=client_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    return p, marks


def held_pid(marks: Path):
    """The process id of the worker holding the chunk, once it holds it."""
    held = [f.name for f in marks.iterdir() if f.name.startswith("held-")]
    return int(held[0].split("-")[1]) if held else None


def finish_client(p):
    out, err = p.communicate(timeout=DEADLINE * 2)
    assert p.returncode == 0 and "done" in out, out + err


def emitter_env(screen_tmp: Path, text: str):
    """ROASTOP_ADDR from the header's udp address, ROASTOP_KEY from the
    per-user key file (the pane's XDG_CONFIG_HOME is the test's tmp_path)."""
    port = re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1)
    key = (screen_tmp / "roastop" / "key").read_text().strip()
    return {"ROASTOP_ADDR": f"127.0.0.1:{port}", "ROASTOP_KEY": key}


@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_stuck_chunk_named_on_the_main_view(screen, tmp_path, dask_cluster, dimuon_files,
                                            cols, rows):  # noqa: F811 - the fixture
    files, _ = dimuon_files
    s = screen(["--listen", "127.0.0.1:0", "--scheduler", dask_cluster.dashboard_url,
                "--checkpoint", "1"], cols=cols, rows=rows)
    # the port read whole: the counts follow it on the header's line
    text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:\d+ rx "), timeout=30)
    env = emitter_env(tmp_path, text)
    p, marks = start_client(tmp_path, dask_cluster, files, env)
    try:
        wait_for(lambda: held_pid(marks) is not None, timeout=DEADLINE, step=0.1)
        oldest = re.compile(r"running \d+ · oldest (" + DURATION + r") \((w\d), DYJetsToLL_1\.root"
                            r" 20000-30000\) · 1 straggler\b")
        def oldest_row(screen):
            """the main view's in-flight row, whole, with its escapes"""
            for row in screen.splitlines():
                m = oldest.search(SGR.sub("", row))
                if m:
                    return row, m
            return None
        # the age, the worker and the row's colours from one capture
        row, m = s.wait_for(oldest_row, timeout=DEADLINE, escapes=True)
        age, worker = seconds(m.group(1)), m.group(2)
        # the age in the alert colour
        assert COLOUR_SGR.search(row[row.index("oldest"):]), row
        # view 9: the held chunk first, marked, and the rule's threshold
        s.keys("9")
        threshold = re.compile(r"straggler past (" + DURATION + ")")

        def title_and_first_row(text):
            """view 9's title with the rule's threshold (read whole: it ends in
            its unit) and its first straggler row drawn whole to its entry
            range, right-aligned under ENTRIES (the rows come after the title)"""
            lines = text.splitlines()
            t = threshold.search(text)
            head = next((line for line in lines if "WORKER" in line and "ENTRIES" in line), None)
            first = next((r for r in lines if "straggler " in r and ".root" in r), None)
            if not (t and head and first):
                return None
            end = head.index("ENTRIES") + len("ENTRIES")
            return (t.group(1), first) if len(first) >= end and first[end - 1].isdigit() else None
        after, first = s.wait_for(title_and_first_row, timeout=30)
        after = seconds(after)
        assert worker in first and "DYJetsToLL_1.root" in first and "20000-30000" in first, first
        print(f"{cols}x{rows}: first shown as a straggler at {age:.1f} s, threshold {after:.2f} s")
        assert age - after <= 2.2, f"named {age - after:.1f} s after it became a straggler"
        s.keys("1")
    finally:
        (marks / "release").touch()
        finish_client(p)
    s.wait_for(re.compile(r"running 0\b"), timeout=DEADLINE)
    s.keys("q")
    s.wait_for("roastop-exit=0", timeout=DEADLINE)
    m = load_metrics(s.out)
    fl = m["roastop"]["in_flight"]
    assert fl["running"] == 0 and fl["oldest_running"] == [] and fl["lost_with_worker"] == 0
    # a start for the held chunk and for those still running at a heartbeat, each matched
    assert m["num_chunks"] == 30 and 1 <= fl["chunk_starts"] == fl["matched"] <= 30, fl
    assert fl["unmatched_ends"] == 0 and fl["overflow"] == 0


def seconds(text):
    """'1m 3s', '59.3s', '850 ms' -> seconds."""
    if text.endswith(" ms"):
        return float(text[:-3]) / 1000
    return sum(float(p[:-1]) * {"h": 3600, "m": 60, "s": 1}[p[-1]] for p in text.split())


def recorded(rec: Path):
    out = []
    for line in rec.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # the line being written
    return out


def started_ends(events):
    """The successful chunk ends recorded, and the (host, pid, seq) of every
    chunk_start recorded."""
    ends = [e for e in events if e["type"] == "chunk" and not e.get("error")]
    starts = {(e["host"], e["pid"], e["seq"]) for e in events if e["type"] == "chunk_start"}
    return ends, starts


def checkpoint(root: Path):
    try:
        return load_metrics(root)
    except (OSError, ValueError, AssertionError):
        return None


@pytest.fixture
def own_cluster(tmp_path):
    """Two workers of their own: one is killed."""
    logs = tmp_path / "cluster"
    logs.mkdir()
    c = Cluster(logs, n_workers=2)
    try:
        yield c
    finally:
        c.stop()


def test_chunk_lost_with_its_killed_worker(tmp_path, own_cluster, dimuon_files):
    files, _ = dimuon_files
    root, rec = tmp_path / "measurements", tmp_path / "session.jsonl"
    proc, env = start_roastop_live(tmp_path, "--scheduler", own_cluster.dashboard_url,
                                   "--interval", 1, "--checkpoint", 1, "--output", root,
                                   "--record", rec, "--duration", 900)
    try:
        p, marks = start_client(tmp_path, own_cluster, files, env)
        wait_for(lambda: held_pid(marks) is not None, timeout=DEADLINE * 2, step=0.1)
        pid = held_pid(marks)
        # the held chunk's start has reached roastop before the kill: listed
        # among those running (another chunk's start is not the one killed)
        def held_running():
            fl = (checkpoint(root) or {}).get("roastop", {}).get("in_flight", {})
            return any((c.get("file") or "").endswith("DYJetsToLL_1.root")
                       and c.get("entry_start") == 20000 for c in fl.get("oldest_running", []))
        wait_for(held_running, timeout=DEADLINE, step=0.2)
        killed_at = time.time()
        os.kill(pid, signal.SIGKILL)

        def lost():
            fl = (checkpoint(root) or {}).get("roastop", {}).get("in_flight", {})
            return fl if fl.get("lost_with_worker") else None
        fl = wait_for(lost, timeout=DEADLINE, step=0.2)  # the checkpoint waited for, not a later one
        chunk = fl["lost"][0]
        assert chunk["file"].endswith("DYJetsToLL_1.root"), chunk
        assert (chunk["entry_start"], chunk["entry_stop"]) == (20000, 30000), chunk
        assert chunk["worker"] in ("w0", "w1"), chunk
        # within two scheduler polls of the kill; the recording is written behind the
        # checkpoint that showed the loss: wait until it holds the poll that found it
        def polls():
            samples = [e["t"] for e in recorded(rec) if e["type"] == "sample"]
            if not any(t >= chunk["lost_at"] - 1e-6 for t in samples):
                return None
            return ([t for t in samples if killed_at < t <= chunk["lost_at"] + 1e-6],)
        samples, = wait_for(polls, timeout=DEADLINE, step=0.2)
        print(f"lost {chunk['lost_at'] - killed_at:.2f} s after the kill, "
              f"{len(samples)} scheduler poll(s)")
        assert 1 <= len(samples) <= 2, samples
        # Dask runs the chunk again; released, the run completes
        (marks / "release").touch()
        finish_client(p)
        wait_for(lambda: (checkpoint(root) or {}).get("run_status") == "completed",
                 timeout=DEADLINE, step=0.2)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0
    m = load_metrics(root)
    fl = m["roastop"]["in_flight"]
    assert fl["lost_with_worker"] == 1 and len(fl["lost"]) == 1, fl
    assert fl["running"] == 0, fl
    # every start ended or was lost; the lost one never ended. Dask also
    # recomputes the finished chunks whose results the killed worker held,
    # so there are 30 chunks or more
    counts = {k: v for k, v in fl.items() if not isinstance(v, list)}
    assert fl["chunk_starts"] == fl["matched"] + fl["lost_with_worker"], counts
    assert fl["replaced"] == 0 and fl["overflow"] == 0, counts
    # each end is matched exactly when the recording (what reached roastop)
    # holds its start: a start lost on the way leaves its end unmatched
    ends, starts = started_ends(recorded(rec))
    unheld = [e for e in ends if (e["host"], e["pid"], e.get("start_seq")) not in starts]
    assert m["num_chunks"] == len(ends) >= 30, (counts, m["num_chunks"], len(ends))
    assert fl["matched"] == len(ends) - len(unheld), (counts, unheld)
    assert fl["unmatched_ends"] == sum("start_seq" in e for e in unheld), (counts, unheld)
    # most ends carry no start_seq: their chunks ended before a heartbeat announced them
    lost_starts = [e for e in unheld if "start_seq" in e]
    if lost_starts:  # never seen on a quiet machine: say which, with the loss counted
        print(f"{len(lost_starts)} chunk(s) whose start did not reach roastop: {lost_starts}; "
              f"udp: {m['roastop'].get('udp')}")
    held = [e for e in recorded(rec) if e["type"] == "chunk"
            and e.get("file", "").endswith("DYJetsToLL_1.root") and e.get("entry_start") == 20000]
    assert len(held) == 1, held  # the rerun's, on the other worker
    assert held[0]["worker"] != chunk["worker"] or held[0]["pid"] != pid, (held, chunk)
