"""A session of several runs (issue 18, items 1-3), end to end: one roastop
--headless measures, against one real Dask cluster (2 workers x 1 thread),
the example's coffea analysis over ROOT files written by uproot twice, then a
third time with a processor that raises on one chunk while another chunk
sleeps, so that chunk arrives after the run's end. Each run has its own
directory under the --output root (ROOT/<timestamp>[_name]/, ROOT/latest the
newest) with exactly its own chunks and events (the files' ground truth, and
for the failed run what its workers processed), its status and every
invariant of docs/metrics.md; the summary on stdout lists the three runs.

Without a collector the chunks make implicit runs: one per burst, ended by
--run-idle-timeout (incomplete) or by roastop's exit (stopped); watching a
cluster with no chunk at all still writes one measurement, with the
scheduler's figures. A client killed with SIGKILL leaves an incomplete run;
the next run of the session is separate and completed. The run list (view 8)
in a tmux pane at 80x24 and 200x60 lists the runs and opens one."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import (CHUNKSIZE, Listener, no_nan, recorded_events, roastop, run_dirs,
                      start_roastop_live)
from dask_cluster import EXAMPLES, client_env, run_example, wait_for
from test_metrics_invariants import assert_invariants
from test_screen import screen  # noqa: F401 - the fixture, used by name

DEADLINE = 120  # generous: CI is a loaded 2-core machine
STRAGGLE = 6.0  # seconds the straggler of the failing run sleeps
STATUS_WORDS = ("completed", "failed", "incomplete", "stopped", "running")
EXIT_LINE = re.compile(r"^roastop: stopped \((.+)\); (\d+) measurements? written under "
                       r"(.+) \(latest: (\S+)\)$", re.M)


def read_metrics(d: Path):
    """A run directory's metrics.json, or None while it is not (whole) there."""
    try:
        return no_nan((d / "metrics.json").read_text())
    except (OSError, ValueError):
        return None


def runs(root: Path):
    """(directory, metrics) of every run under root, oldest first."""
    return [(d, read_metrics(d)) for d in run_dirs(root)]


def statuses(root: Path):
    return [(m or {}).get("run_status") for _, m in runs(root)]


def wait_runs(root: Path, want, timeout=DEADLINE):
    """Until the runs under root have the statuses want (a list), in order;
    the runs read then (not read again: a checkpoint may have come since)."""
    def read():
        got = runs(root)
        return got if [(m or {}).get("run_status") for _, m in got] == want else None
    try:
        return wait_for(read, timeout=timeout, step=0.2)
    except AssertionError:
        raise AssertionError(f"runs {statuses(root)}, expected {want}") from None


def check_invariants(m):
    """docs/metrics.md, "Invariants", on one run's metrics.json (the
    tolerance there is for clock granularity; beyond it the value is null)."""
    assert_invariants(m)
    tol = 1 + 0.02 + 0.1 / (m["rate_window_seconds"] or 1)
    threads = m["total_cores"]
    if m.get("efficiency_ratio") is not None and threads is not None:
        assert 0 <= m["efficiency_ratio"] <= threads * tol, m["efficiency_ratio"]
    if m.get("io_overhead_pct") is not None:
        assert 0 <= m["io_overhead_pct"] <= 100
    for k in ("data_rate_mb_per_s", "chunks_per_second"):
        assert m.get(k) is None or m[k] >= 0, k
    if m["event_rate_elapsed_khz"] is not None and m["rate_window_seconds"]:
        # what the rates count is part of the totals
        in_rate = m["event_rate_elapsed_khz"] * 1000 * m["rate_window_seconds"]
        assert in_rate <= m["total_events"] * (1 + 1e-9)


def summary_rows(stdout):
    """The rows of the session's run table on stdout: (number, line). Only
    the table's own lines, from its title to the blank line after it: a
    finding's evidence further down may begin with a count and say
    "failed"."""
    rows = []
    lines = stdout.splitlines()
    start = lines.index("Runs of this session") if "Runs of this session" in lines else len(lines)
    for line in lines[start:]:
        if not line.strip() and rows:
            break
        m = re.match(r"^\s*(\d+)\s+\S", line)
        if m and any(re.search(rf"\b{w}\b", line) for w in STATUS_WORDS):
            rows.append((int(m.group(1)), line))
    return rows


def exit_line(stdout):
    m = EXIT_LINE.search(stdout)
    assert m, stdout[-2000:]
    return m


def stop(proc, timeout=DEADLINE):
    """SIGTERM; roastop's stdout once it is gone (exit status 0)."""
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, proc.returncode
    return stdout


# The third run: the example's processor on the same files, one chunk raising
# and another sleeping STRAGGLE s and then until the run has ended. The failing
# chunk waits until the straggler has started, and the straggler until the
# client has left the collector's block, so the straggler always outlives the
# run, however slowly the other chunks go. Every chunk that
# process()ed leaves a mark: the workers' own count for the measurement.
FAILING_CLIENT = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    examples, scheduler, files, marks = sys.argv[1:5]
    STRAGGLE = float(sys.argv[5])
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
    STRAGGLER = (fileset["DYJetsToLL"][0], 0)
    FAILING = (fileset["TTbar"][-1], 20000)

    class FailingDimuon(dimuon.DimuonProcessor):
        @track_metrics
        def process(self, events):
            where = (events.metadata["filename"], events.metadata["entrystart"])
            if where == STRAGGLER:
                (MARKS / "straggler-started").touch()
            if where == FAILING:
                deadline = time.monotonic() + 60
                while not (MARKS / "straggler-started").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                (MARKS / "failed").touch()
                raise ValueError("chunk had no muons")
            out = dimuon.DimuonProcessor.process.__wrapped__(self, events)
            if where == STRAGGLER:  # at least STRAGGLE s, and past the run's end
                time.sleep(STRAGGLE)
                deadline = time.monotonic() + 240
                while not (MARKS / "run-ended").exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            (MARKS / ("done-%s-%d" % (os.path.basename(where[0]), where[1]))).touch()
            return out

    client = Client(scheduler)
    proc = FailingDimuon()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False,
                                                              retries=0),
                              schema=NanoAODSchema, chunksize=int(sys.argv[6]),
                              savemetrics=True)
    mc = MetricsCollector(client, processor_instance=proc, run_name="dimuon failing")
    mc.set_fileset(fileset)
    try:
        with mc:
            print("run_id", mc.run_id, flush=True)
            runner(fileset, processor_instance=proc, treename="Events")
    except Exception as exc:
        (MARKS / "run-ended").touch()  # the collector has sent run_end
        print("raised", type(exc).__name__, flush=True)
    client.close()
""")


@pytest.fixture(scope="module")
def session(tmp_path_factory, dask_cluster, dimuon_files):
    """One roastop session over three runs of the example on one cluster:
    completed, completed, failed with a straggler. roastop records the session
    and is stopped (SIGTERM) once the straggler's chunk has arrived."""
    d = tmp_path_factory.mktemp("session")
    root, rec, marks = d / "measurements", d / "session.jsonl", d / "marks"
    marks.mkdir()
    files, truth = dimuon_files
    proc, env = start_roastop_live(d, "--scheduler", dask_cluster.dashboard_url,
                                   "--duration", 900, "--output", root, "--checkpoint", 1,
                                   "--record", rec)
    try:
        results = []
        for i in range(2):
            results.append(run_example(dask_cluster, files, d / f"result{i}.json",
                                       "--collector", "roastop", "--chunksize", CHUNKSIZE,
                                       env=client_env(**env)))
            wait_runs(root, ["completed"] * (i + 1))  # its directory, written at its end
        script = d / "failing_client.py"
        script.write_text(FAILING_CLIENT)
        p = subprocess.run([sys.executable, str(script), str(EXAMPLES), dask_cluster.address,
                            str(files), str(marks), str(STRAGGLE), str(CHUNKSIZE)],
                           env=client_env(**env), capture_output=True, text=True,
                           timeout=DEADLINE * 2)
        assert "raised Exception" in p.stdout, p.stdout + p.stderr
        run_id3 = re.search(r"^run_id (\S+)$", p.stdout, re.M).group(1)
        wait_runs(root, ["completed", "completed", "failed"])
        # the straggler's chunk reached roastop (the recording shows it)
        wait_for(lambda: any(e.get("type") == "chunk" and e.get("duration", 0) >= STRAGGLE
                             for e in recorded_events(rec)), timeout=DEADLINE, step=0.2)
        stdout = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = sorted(f.name for f in marks.iterdir() if f.name.startswith("done-"))
    return {"root": root, "rec": rec, "stdout": stdout, "results": results, "truth": truth,
            "run_id3": run_id3, "done3": done, "marks": marks, "files": files}


def test_three_runs_three_directories(session):
    root = session["root"]
    dirs = run_dirs(root)
    assert len(dirs) == 3, sorted(p.name for p in root.iterdir())
    assert sorted(p.name for p in root.iterdir()) == sorted([*(p.name for p in dirs), "latest"])
    assert os.readlink(root / "latest") == dirs[2].name  # relative, to the newest
    for d in dirs:
        assert sorted(f.name for f in d.iterdir()) == [
            "metadata.json", "metrics.json", "report.html", "start_end_time.txt", "summary.txt"]
        start = float((d / "start_end_time.txt").read_text().split(",")[0])
        # named by the run's start in local time (within a second: the stamp is
        # taken from the start's receive time), then its name, sanitised
        stamps = {time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(start + dt))
                  for dt in (-1, 0, 1)}
        assert d.name[:19] in stamps, (d.name, start)
        assert re.fullmatch(r"[A-Za-z0-9._-]+", d.name) and "dimuon" in d.name, d.name
    ms = [read_metrics(d) for d in dirs]
    assert [m["run_status"] for m in ms] == ["completed", "completed", "failed"]
    ids = [m["run_id"] for m in ms]
    assert ids == [session["results"][0]["run_id"], session["results"][1]["run_id"],
                   session["run_id3"]]
    assert len(set(ids)) == 3
    for m, run_id in zip(ms, ids):
        assert m["roastop"]["run_id"] == run_id
    assert [m["run_name"] for m in ms] == ["dimuon example", "dimuon example", "dimuon failing"]


def test_completed_runs_hold_exactly_their_own_chunks(session):
    truth = session["truth"]
    per_file = -(-truth["total_events"] // truth["files"] // CHUNKSIZE)
    for (d, m), r in zip(runs(session["root"])[:2], session["results"]):
        assert m["num_chunks"] == r["report"]["chunks"] == per_file * truth["files"], d.name
        assert m["num_successful_chunks"] == m["num_chunks"] and m["num_failed_chunks"] == 0
        assert m["total_events"] == truth["total_events"] == r["report"]["entries"]
        assert m["total_events_from_chunks"] == truth["total_events"]
        assert set(m["per_dataset"]) == set(truth["events_per_dataset"])
        for ds, n in truth["events_per_dataset"].items():
            assert m["per_dataset"][ds]["total_events"] == n, (d.name, ds)
        # the third run's straggler went to the third run, not to the newest
        # completed one nor to anything else
        assert m["chunk_duration_max"] < STRAGGLE, d.name
        assert m["roastop"]["processor"] == "DimuonProcessor"
        # the scheduler's figures are the run's own
        assert m["peak_workers"] == 2 and m["total_cores"] > 0
        check_invariants(m)


def test_failed_run_holds_what_its_workers_did(session):
    (_, m), = runs(session["root"])[2:]
    done = session["done3"]
    assert (session["marks"] / "failed").exists()
    fileset = json.loads((session["files"] / "fileset.json").read_text())
    assert f"done-{os.path.basename(fileset['TTbar'][-1])}-20000" not in done  # it raised
    assert f"done-{os.path.basename(fileset['DYJetsToLL'][0])}-0" in done  # the straggler
    assert m["run_status"] == "failed"
    assert m["run_status_reason"].startswith("Exception: Failed processing file"), \
        m["run_status_reason"]
    assert m["roastop"]["processor"] == "FailingDimuon"
    # every chunk the workers processed, the straggler included; the failed one
    assert m["num_successful_chunks"] == len(done) >= 1
    assert m["num_failed_chunks"] == 1
    assert m["num_chunks"] == len(done) + 1
    assert m["total_events"] == m["total_events_from_chunks"] == CHUNKSIZE * len(done)
    assert m["roastop"]["chunk_errors"] == {"ValueError": 1}
    # the straggler ran past the run's end (the recording has it after run_end):
    # in the totals, not in the rates, whose window is the run's own
    events = recorded_events(session["rec"])
    end3 = max(i for i, e in enumerate(events) if e.get("type") == "run_end")
    assert any(e.get("type") == "chunk" and e.get("duration", 0) >= STRAGGLE
               for e in events[end3:])
    assert m["chunk_duration_max"] >= STRAGGLE
    window = m["rate_window_seconds"]
    assert window and abs(window - m["elapsed_time_seconds"]) < 1e-6
    in_rate = m["event_rate_elapsed_khz"] * 1000 * window
    assert in_rate <= CHUNKSIZE * (len(done) - 1) * (1 + 1e-9)
    check_invariants(m)


def test_summary_lists_the_three_runs(session):
    stdout, root = session["stdout"], session["root"]
    rows = summary_rows(stdout)
    assert [n for n, _ in rows] == [1, 2, 3], rows
    ms = [m for _, m in runs(root)]
    for (n, line), m, status in zip(rows, ms, ("completed", "completed", "failed")):
        assert re.search(rf"\b{status}\b", line), line
        cells = line.split()
        assert f"{m['num_chunks']:,}" in cells, (line, m["num_chunks"])
        assert f"{m['total_events']:,}" in cells, (line, m["total_events"])
    e = exit_line(stdout)
    assert e.group(2) == "3" and e.group(3) == str(root)
    assert e.group(4) == run_dirs(root)[2].name
    # then the newest run in full: its own summary.txt
    assert (run_dirs(root)[2] / "summary.txt").read_text().strip() in stdout


def test_recording_replays_the_same_runs(session, tmp_path):
    """roastop's decisions are in the recording: replayed, the session gives
    the same three runs with the same statuses, chunks and events."""
    out = tmp_path / "replayed"
    p = roastop("--replay", session["rec"], "--speed", 0, "--headless", "--output", out)
    assert p.returncode == 0, p.stderr
    live = [m for _, m in runs(session["root"])]
    again = [m for _, m in runs(out)]
    key = ("run_id", "run_status", "num_chunks", "num_failed_chunks", "total_events")
    assert [[m[k] for k in key] for m in again] == [[m[k] for k in key] for m in live]


# Runs without a collector: chunks from the emitter's own chunk API (what
# track_metrics sends), no run_start, no run_id.

def send_chunks(lst, n, events=100, dataset="implicit"):
    from roastop.emitter import emitter_for
    e = emitter_for("%s:%d" % lst.addr, lst.key.hex())
    for _ in range(n):
        t = time.time()
        assert e.send_chunk((t - 0.05, t, t, 0.04, None, None),
                            {"dataset": dataset, "num_events": events})
    return e


def test_implicit_run_stopped_at_exit(tmp_path):
    lst = Listener(tmp_path, "--checkpoint", "1", "--duration", "600")
    send_chunks(lst, 12)
    wait_for(lambda: (read_metrics(lst.out / "latest") or {}).get("num_chunks") == 12,
             timeout=DEADLINE)
    stdout, _ = lst.stop()
    ((d, m),) = runs(lst.out)
    assert m["run_status"] == "stopped"
    assert m["run_id"].startswith("implicit-")  # roastop's own id
    assert m["num_chunks"] == 12 and m["total_events"] == 1200
    assert m["per_dataset"]["implicit"]["num_chunks"] == 12
    check_invariants(m)
    e = exit_line(stdout)
    assert (e.group(2), e.group(4)) == ("1", d.name)


def test_implicit_runs_end_after_the_idle_timeout(tmp_path):
    """A burst, nothing for --run-idle-timeout (incomplete: no collector
    said it ended), a second burst: a second implicit run."""
    lst = Listener(tmp_path, "--run-idle-timeout", "2", "--checkpoint", "1", "--duration", "600")
    send_chunks(lst, 5, dataset="first")
    ((d1, m1),) = wait_runs(lst.out, ["incomplete"])
    assert m1["num_chunks"] == 5 and m1["run_id"].startswith("implicit-")
    assert "collector" in m1["run_status_reason"], m1["run_status_reason"]
    send_chunks(lst, 7, dataset="second")

    def second_linked():
        """the second run written whole: metrics.json is the first file a
        write renames into place, `latest` is linked after the last"""
        got = runs(lst.out)
        return ([(m or {}).get("num_chunks") for _, m in got] == [5, 7]
                and os.readlink(lst.out / "latest") == got[1][0].name)
    wait_for(second_linked, timeout=DEADLINE, step=0.2)
    assert os.readlink(lst.out / "latest") == run_dirs(lst.out)[1].name
    stdout, _ = lst.stop()
    (_, a), (_, b) = runs(lst.out)
    assert (a["run_status"], b["run_status"]) == ("incomplete", "stopped")
    assert set(a["per_dataset"]) == {"first"} and set(b["per_dataset"]) == {"second"}
    assert (a["total_events"], b["total_events"]) == (500, 700)
    for m in (a, b):
        check_invariants(m)
    assert exit_line(stdout).group(2) == "2"
    assert [n for n, _ in summary_rows(stdout)] == [1, 2]


def test_watching_only_writes_one_measurement(tmp_path, dask_cluster):
    """roastop watching a real cluster, no chunk ever: quitting writes one
    measurement with what the scheduler said."""
    rec = tmp_path / "watch.jsonl"
    proc, _ = start_roastop_live(tmp_path, "--scheduler", dask_cluster.dashboard_url,
                                 "--interval", "0.5", "--duration", 600, "--output",
                                 tmp_path / "m", "--record", rec)
    try:
        wait_for(lambda: sum(e.get("type") == "sample" and e.get("worker_count") == 2
                             for e in recorded_events(rec)) >= 3, timeout=DEADLINE, step=0.2)
        stdout = stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ((d, m),) = runs(tmp_path / "m")
    # no chunk record at all: not measured (null), and roastop's own run id
    assert m["num_chunks"] is None and m["run_id"].startswith("implicit-")
    assert m["run_status"] == "stopped"
    assert m["peak_workers"] == 2
    assert m["avg_workers"] is not None and m["avg_workers"] > 0
    assert m["total_cores"] is not None and m["total_cores"] > 0
    assert m["peak_memory_bytes"] is not None and m["peak_memory_bytes"] > 0
    assert m["elapsed_time_seconds"] is not None and m["elapsed_time_seconds"] > 0
    assert os.readlink(tmp_path / "m" / "latest") == d.name
    assert exit_line(stdout).group(2) == "1"
    ((n, row),) = summary_rows(stdout)
    assert n == 1 and "stopped" in row


def test_killed_client_then_a_new_run(tmp_path):
    """A client killed with SIGKILL mid-run: its run ends incomplete after
    --run-idle-timeout; the next run of the session is its own, completed."""
    from test_run_status import client
    lst = Listener(tmp_path, "--run-idle-timeout", "2", "--checkpoint", "1", "--duration", "600")
    printed = tmp_path / "killed.out"
    with open(printed, "w") as f:
        p = client(tmp_path, lst, "forever", stdout=f)
        try:
            wait_for(lambda: (read_metrics(lst.out / "latest") or {}).get("num_chunks", 0) >= 5,
                     timeout=DEADLINE)
        finally:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=DEADLINE)
    sent = printed.read_text().count("chunk ")  # each printed after its datagram went
    ((_, m1),) = wait_runs(lst.out, ["incomplete"])
    assert sent <= m1["num_chunks"] <= sent + 1
    q = client(tmp_path, lst, "complete", n=20, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = q.communicate(timeout=DEADLINE)
    assert q.returncode == 0, err
    wait_runs(lst.out, ["incomplete", "completed"])
    stdout, _ = lst.stop()
    (d1, a), (d2, b) = runs(lst.out)
    assert a["run_status"] == "incomplete" and b["run_status"] == "completed"
    assert "no datagram from the run for 2 s" in a["run_status_reason"]
    assert a["num_chunks"] == m1["num_chunks"]  # nothing of the new run went to the old one
    assert b["num_chunks"] == 20 and b["total_events"] == 2000
    assert a["run_id"] and b["run_id"] and a["run_id"] != b["run_id"]
    assert d1.name != d2.name and os.readlink(lst.out / "latest") == d2.name
    for m in (a, b):
        check_invariants(m)
    rows = summary_rows(stdout)
    assert [n for n, _ in rows] == [1, 2]
    assert "incomplete" in rows[0][1] and "completed" in rows[1][1]
    assert exit_line(stdout).group(2) == "2"


# The run list (view 8), on a replayed session of two runs.

T0 = 1767225600


def two_runs(tmp_path):
    lines = [{"type": "recording", "format": "roastop-recording", "version": 1}]
    for k, (name, n, events, status) in enumerate((("alpha", 5, 100, "completed"),
                                                   ("beta", 3, 1000, "failed"))):
        t, run_id = T0 + 100 * k, f"r{k + 1}"
        lines.append({"type": "run_start", "t": t, "run_id": run_id, "name": name,
                      "expected_events": n * events})
        lines += [{"type": "chunk", "t": t + 1 + i, "run_id": run_id, "duration": 0.5,
                   "num_events": events, "dataset": "ds"} for i in range(n)]
        end = {"type": "run_end", "t": t + 10, "run_id": run_id, "status": status}
        if status == "failed":
            end.update(error_type="ValueError", error_message="no muons")
        lines.append(end)
    rec = tmp_path / "two.jsonl"
    rec.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return rec


COLUMNS = ("#", "name", "start", "duration", "status", "chunks", "events", "rate")
HEADER = re.compile(r"(?i)#.*\bname\b.*\bstatus\b.*\bchunks\b")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_run_list_view(screen, tmp_path, cols, rows):  # noqa: F811 - the imported fixture
    s = screen(["--replay", two_runs(tmp_path), "--speed", "0"], cols=cols, rows=rows)
    s.wait_for("end reached", timeout=DEADLINE)
    s.keys("Escape")
    s.keys("8")
    # the rows under the header read whole: the replay has ended, the frame
    # that stayed the same is drawn whole
    text = s.wait_still(HEADER, timeout=DEADLINE)
    lines = text.splitlines()
    assert len(lines) == rows and all(len(line) <= cols for line in lines)
    header = next(line for line in lines if HEADER.search(line))
    names = header.lower().split()
    assert {"#", "name", "status", "chunks"} <= set(names), header
    if cols >= 200:
        assert set(COLUMNS) <= set(names), header
    body = lines[lines.index(header) + 1:]
    alpha = [line for line in body if "alpha" in line]
    beta = [line for line in body if "beta" in line]
    assert len(alpha) == 1 and len(beta) == 1, text
    assert "completed" in alpha[0] and re.search(r"\b5\b", alpha[0]), alpha[0]
    assert "failed" in beta[0] and re.search(r"\b3\b", beta[0]), beta[0]
    assert "q quit" in lines[-1]
    s.keys("Up")  # the list opens on the run shown, the newest
    s.keys("Enter")
    text = s.wait_still("run 1 of 2", timeout=DEADLINE)  # the run's whole frame
    assert "alpha" in text and "events 500 of" in text, text
    s.keys("q")
    s.wait_for("roastop-exit=0", timeout=DEADLINE)
    assert [m["run_status"] for _, m in runs(s.out)] == ["completed", "failed"]
