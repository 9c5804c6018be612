"""Retries told apart from failures (issue 35, item 3; docs/metrics.md,
"Retries"), on a real coffea Runner with its DaskExecutor (default
retries=3) on a real `dask scheduler` and two workers, over 4 uproot-written
ROOT files of 20,000 events in 16 chunks, measured live by roastop:

- a processor that raises OSError on the first attempt of each file's first
  chunk (a transient read error) and succeeds on Dask's retry: every event
  counted, no failed chunk, 4 retries (the chunks that failed first), the run
  completed;
- a chunk that raises on every attempt (skipbadfiles off): Dask gives up
  after its 4 attempts, the Runner raises; that chunk is failed (once), its
  three retried attempts counted, the run failed;
- the same with skipbadfiles=True: coffea's automatic_retries runs inside the
  task with no retry of its own under the DaskExecutor and swallows the
  OSError on the first attempt, so Dask never retries: the chunk's events are
  skipped, the chunk is failed, no retry, the run completed.
"""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import load_metrics, measuring
from dask_cluster import EXAMPLES, Cluster, client_env

EVENTS_PER_FILE = 20000
CHUNKSIZE = 5000  # 4 chunks a file, 16 in all
DEADLINE = 300

# The example's processor, raising where MODE says: "once" (each file's first
# chunk, on its first attempt: the marks directory remembers attempts across
# worker processes) or "always" (the first file's second chunk, every attempt).
CLIENT = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    examples, scheduler, files, marks, chunksize, mode, skip, result = sys.argv[1:9]
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
    ALWAYS = (fileset["DYJetsToLL"][0], int(chunksize))

    class FlakyDimuon(dimuon.DimuonProcessor):
        @track_metrics
        def process(self, events):
            where = (events.metadata["filename"], events.metadata["entrystart"])
            if mode == "always" and where == ALWAYS:
                raise OSError("unreadable basket")
            if mode == "once" and where[1] == 0:
                mark = MARKS / Path(where[0]).name
                try:
                    mark.touch(exist_ok=False)
                except FileExistsError:
                    pass
                else:
                    raise OSError("transient read error")
            return dimuon.DimuonProcessor.process.__wrapped__(self, events)

    client = Client(scheduler)
    proc = FlakyDimuon()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=int(chunksize),
                              savemetrics=True, skipbadfiles=skip == "skip")
    out = {"raised": None, "always": ALWAYS[0]}
    try:
        with MetricsCollector(client, processor_instance=proc, run_name="flaky"):
            output, report = runner(fileset, processor_instance=proc, treename="Events")
        out["entries"] = int(report["entries"])
        out["chunks"] = int(report["chunks"])
    except Exception as exc:
        out["raised"] = type(exc).__name__
    Path(result).write_text(json.dumps(out))
    client.close()
""")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("flaky-files")
    subprocess.run([sys.executable, str(EXAMPLES / "make_files.py"), str(d),
                    "--events-per-file", str(EVENTS_PER_FILE), "--files-per-dataset", "2"],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    return d


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("flaky-cluster"))
    yield c
    c.stop()


def measure(tmp_path, cluster, files, mode, skip=False):
    """One Runner run measured by roastop: its metrics.json, summary.txt and
    what the client saw."""
    out = tmp_path / "measurement"
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    result = tmp_path / "result.json"
    with measuring(tmp_path, out, "--duration", DEADLINE) as live:
        p = subprocess.run([sys.executable, str(script), str(EXAMPLES), cluster.address,
                            str(files), str(marks), str(CHUNKSIZE), mode,
                            "skip" if skip else "noskip", str(result)],
                           env=client_env(**live.env), capture_output=True, text=True,
                           timeout=DEADLINE)
        assert p.returncode == 0, p.stdout + p.stderr
    m = load_metrics(out)
    summary = (out / "latest" / "summary.txt").read_text()
    return m, summary, json.loads(result.read_text())


def summary_value(summary, label):
    for line in summary.splitlines():
        if line.strip().startswith(label):
            return line.split()[-1]
    raise AssertionError(f"no {label!r} row in summary.txt:\n{summary}")


def finding(m, fid):
    found = [f for f in m["roastop"]["findings"] if f["id"] == fid]
    assert len(found) == 1, m["roastop"]["findings"]
    return found[0]


def test_transient_failures_are_retries_not_failures(tmp_path, cluster, files):
    m, summary, client = measure(tmp_path, cluster, files, "once")
    assert client["raised"] is None and client["entries"] == 4 * EVENTS_PER_FILE
    assert client["chunks"] == 16
    assert m["total_events"] == 4 * EVENTS_PER_FILE  # every event, once
    assert m["num_chunks"] == 16 and m["num_successful_chunks"] == 16
    assert m["num_failed_chunks"] == 0
    assert m["run_status"] == "completed"
    rt = m["roastop"]["retries"]
    assert rt["count"] == 4 and rt["recovered_chunks"] == 4, rt
    assert rt["by_type"] == {"OSError": 4} and rt["untracked"] == 0 and rt["overflow"] == 0
    assert m["roastop"]["chunk_errors"] == {}
    # each of the four attempts kept, marked retried
    latest = m["roastop"]["failed_chunks"]["latest"]
    assert len(latest) == 4 and all(c["retried"] and c["entry_start"] == 0 for c in latest)
    assert summary_value(summary, "Failed") == "0"
    assert summary_value(summary, "Retries") == "4"
    # the finding says retries, not failures (docs/diagnosis.md, failures)
    f = finding(m, "failures")
    assert f["severity"] == "info" and f["cost_share"] is None, f
    assert f["title"].startswith("retries: 4 attempts retried, no chunk lost; "), f
    assert ("retried by a later attempt 4 (chunks recovered 4), "
            "chunks lost (their last attempt failed) 0") in f["evidence"]


def test_chunk_failing_every_attempt_is_failed(tmp_path, cluster, files):
    m, summary, client = measure(tmp_path, cluster, files, "always")
    assert client["raised"] is not None  # Dask gave up: the Runner raised
    assert m["run_status"] == "failed"
    assert m["num_failed_chunks"] == 1
    rt = m["roastop"]["retries"]
    # retries=3: four attempts, the first three each followed by another
    assert rt["count"] == 3 and rt["recovered_chunks"] == 0, rt
    assert m["roastop"]["chunk_errors"] == {"OSError": 1}
    assert summary_value(summary, "Failed") == "1"
    # one chunk of one file lost after its retries: the finding names the file
    f = finding(m, "failures")
    assert f["severity"] == "warning", f
    assert f["title"] == f"failures: 1 chunk lost, 4 of 4 on file {Path(client['always']).name}", f


def test_skipbadfiles_skips_without_retry(tmp_path, cluster, files):
    m, summary, client = measure(tmp_path, cluster, files, "always", skip=True)
    assert client["raised"] is None
    assert client["entries"] == 4 * EVENTS_PER_FILE - CHUNKSIZE  # the chunk's events skipped
    assert m["run_status"] == "completed"
    assert m["num_failed_chunks"] == 1 and m["num_successful_chunks"] == 15
    assert m["total_events"] == 4 * EVENTS_PER_FILE - CHUNKSIZE
    rt = m["roastop"]["retries"]
    assert rt["count"] == 0 and rt["recovered_chunks"] == 0, rt
    assert summary_value(summary, "Failed") == "1"
