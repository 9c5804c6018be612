"""roastop compare (issue 35, item 4; docs/compare.md) on real measurements:
the same coffea workload (examples/run_dimuon.py: coffea's Runner with its
DaskExecutor on a real `dask scheduler` and two workers, 4 uproot-written
files of 20,000 events) measured live by roastop at two chunk sizes, 20,000
and 1,000 events, and once by roastcoffea 0.1.2's own collector. compare
prints each side's numbers as its metrics.json holds them, the change, n/a
where a side lacks a number, and the findings each run had (n/a for a
measurement without roastop.findings)."""
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import load_metrics, measuring, roastop, run_dir
from dask_cluster import EXAMPLES, Cluster, client_env, run_example

EVENTS = 80000
DEADLINE = 300


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("compare-files")
    subprocess.run([sys.executable, str(EXAMPLES / "make_files.py"), str(d),
                    "--events-per-file", "20000", "--files-per-dataset", "2"],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    return d


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, files):
    c = Cluster(tmp_path_factory.mktemp("compare-cluster"))
    try:  # warmed up: both measured runs find coffea imported and the files read
        run_example(c, files, tmp_path_factory.mktemp("warmup") / "r.json",
                    "--collector", "none", "--chunksize", 20000)
        yield c
    finally:
        c.stop()


def measured(tmp_path_factory, cluster, files, chunksize):
    """The workload measured live by roastop: its output root."""
    d = tmp_path_factory.mktemp(f"chunks{chunksize}")
    out = d / "measurement"
    with measuring(d, out, "--scheduler", cluster.dashboard_url, "--duration", DEADLINE) as live:
        run_example(cluster, files, d / "result.json", "--collector", "roastop",
                    "--chunksize", chunksize, env=client_env(**live.env))
    return out


@pytest.fixture(scope="module")
def big(tmp_path_factory, cluster, files):
    return measured(tmp_path_factory, cluster, files, 20000)


@pytest.fixture(scope="module")
def small(tmp_path_factory, cluster, files):
    return measured(tmp_path_factory, cluster, files, 1000)


# A processor whose own time is per event (it spins PER_EVENT CPU seconds for
# each event, nothing per chunk): at CHUNKS_TINY events a chunk the task's
# time outside process() (Dask's task, uproot's read) outweighs it, at
# CHUNKS_FIT it does not. (The dimuon example at 1,000 events is no such
# workload: its process() has a large fixed cost per call, inside process(),
# which no rule on the time outside it can see.)
PER_EVENT = 20e-6
CHUNKS_TINY, CHUNKS_FIT = 100, 10000
SPIN_CLIENT = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    scheduler, files, chunksize, per_event = sys.argv[1:5]
    from coffea import processor
    from coffea.nanoevents import NanoAODSchema
    from distributed import Client
    from roastop import MetricsCollector, track_metrics

    class PerEvent(processor.ProcessorABC):
        @track_metrics
        def process(self, events):
            spent = time.thread_time() + len(events) * float(per_event)
            while time.thread_time() < spent:
                pass
            return {"entries": len(events)}

        def postprocess(self, accumulator):
            return accumulator

    fileset = json.loads((Path(files) / "fileset.json").read_text())
    client = Client(scheduler)
    proc = PerEvent()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=int(chunksize))
    with MetricsCollector(client, processor_instance=proc, run_name="per-event"):
        out = runner(fileset, processor_instance=proc, treename="Events")
    print("done", out["entries"], flush=True)
    client.close()
""")


def measured_spin(tmp_path_factory, cluster, files, chunksize):
    """The per-event workload measured live by roastop: its metrics.json's
    directory's root."""
    d = tmp_path_factory.mktemp(f"spin{chunksize}")
    out = d / "measurement"
    script = d / "client.py"
    script.write_text(SPIN_CLIENT)
    with measuring(d, out, "--scheduler", cluster.dashboard_url, "--duration", DEADLINE) as live:
        p = subprocess.run([sys.executable, str(script), cluster.address, str(files),
                            str(chunksize), str(PER_EVENT)], env=client_env(**live.env),
                           capture_output=True, text=True, timeout=DEADLINE)
        assert p.returncode == 0 and f"done {EVENTS}" in p.stdout, p.stdout + p.stderr
    return out


@pytest.fixture(scope="module")
def spin_fit(tmp_path_factory, cluster, files):
    return measured_spin(tmp_path_factory, cluster, files, CHUNKS_FIT)


@pytest.fixture(scope="module")
def spin_tiny(tmp_path_factory, cluster, files):
    return measured_spin(tmp_path_factory, cluster, files, CHUNKS_TINY)


def row(text, label):
    """compare's row for label: (A, B, change) as printed."""
    for line in text.splitlines():
        if line.startswith(label + " ") and line[len(label):len(label) + 2] == "  ":
            cells = re.split(r"\s{2,}", line[25:].strip())
            return cells[0], cells[1], cells[2]
    raise AssertionError(f"no {label!r} row:\n{text}")


def findings_said(text, side, m):
    """The findings section says for side what its metrics.json holds."""
    found = m["roastop"].get("findings")
    if found is None:
        assert re.search(rf"^  {side}  findings: n/a \(", text, re.M), text
        return
    if not found:
        assert re.search(rf"^  {side}  no finding$", text, re.M), text
        return
    assert re.search(rf"^  {side}  {len(found)} findings?$", text, re.M), text
    for f in found[:32]:
        assert f"{f['severity'][:8]:<8} {f['id']}: " in text, (f, text)


def test_two_chunk_sizes_side_by_side(big, small):
    p = roastop("compare", big, small)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    print(text)
    a, b = load_metrics(big), load_metrics(small)
    assert a["total_events"] == b["total_events"] == EVENTS
    assert (a["num_chunks"], b["num_chunks"]) == (4, 80)
    # the event rate: each side as its metrics.json holds it, and the change between
    ra, rb = a["event_rate_elapsed_khz"], b["event_rate_elapsed_khz"]
    va, vb, change = row(text, "Event rate (elapsed)")
    assert re.fullmatch(r"[\d.]+ [kM]?Hz", va) and re.fullmatch(r"[\d.]+ [kM]?Hz", vb), (va, vb)
    pct = 100 * (rb - ra) / ra
    m = re.fullmatch(r"([+-])[\d.]+ [kM]?Hz \(([+-][\d.]+) %\)", change)
    assert m, change
    assert m.group(1) == ("-" if rb < ra else "+")
    assert abs(float(m.group(2)) - pct) <= 0.05 + 1e-9, (change, pct)
    assert row(text, "Chunks") == ("4", "80", "+76 (+1900.0 %)")
    assert row(text, "Events")[2] == "+0 (+0.0 %)"
    # every line fits a terminal of 80 columns
    assert all(len(line) <= 80 for line in text.splitlines())
    findings_said(text, "A", a)
    findings_said(text, "B", b)


def test_chunks_too_small_on_one_side_only(spin_fit, spin_tiny):
    """The same per-event workload at two chunk sizes: compare shows the
    event rate's fall and small_chunks on the tiny chunks' side only."""
    p = roastop("compare", spin_fit, spin_tiny)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    print(text)
    a, b = load_metrics(spin_fit), load_metrics(spin_tiny)
    assert (a["num_chunks"], b["num_chunks"]) == (EVENTS // CHUNKS_FIT, EVENTS // CHUNKS_TINY)
    ids_a = [f["id"] for f in a["roastop"]["findings"]]
    ids_b = [f["id"] for f in b["roastop"]["findings"]]
    assert "small_chunks" not in ids_a and "small_chunks" in ids_b, (ids_a, ids_b)
    small = next(f for f in b["roastop"]["findings"] if f["id"] == "small_chunks")
    size = int(re.search(r"chunksize of at least ([\d,]+) events", small["suggestion"])
               .group(1).replace(",", ""))
    assert CHUNKS_TINY < size <= 4 * CHUNKS_FIT, small  # bigger chunks, not absurdly so
    # compare prints the finding on B's side and the rate's fall
    findings_said(text, "A", a)
    findings_said(text, "B", b)
    side_a, side_b = text.split("\nFindings\n", 1)[1].split("\n  B  ", 1)
    assert "small_chunks" not in side_a and "small_chunks: chunks too small" in side_b, text
    assert row(text, "Event rate (elapsed)")[2].startswith("-"), text
    assert b["event_rate_elapsed_khz"] < a["event_rate_elapsed_khz"]


def test_against_a_roastcoffea_measurement(tmp_path, big, cluster, files):
    rc = tmp_path / "roastcoffea"
    run_example(cluster, files, tmp_path / "result.json", "--collector", "roastcoffea",
                "--chunksize", 20000, "--roastcoffea-output", rc)
    p = roastop("compare", rc, run_dir(big))
    assert p.returncode == 0, p.stderr
    text = p.stdout
    m = load_metrics(rc)
    assert "   roastcoffea\n" in text
    assert row(text, "Events") == (f"{EVENTS:,}", f"{EVENTS:,}", "+0 (+0.0 %)")
    # roastcoffea writes no p99 and counts no retry: n/a, and no change, never 0
    assert "chunk_duration_p99" not in m
    assert row(text, "Chunk time p99")[0] == "n/a" and row(text, "Chunk time p99")[2] == "n/a"
    assert row(text, "Retries")[0] == "n/a"
    assert re.search(r"^  A  findings: n/a \(", text, re.M)


def test_unreadable_measurement_is_one_line(tmp_path, big):
    p = roastop("compare", tmp_path, big)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "metrics.json" in p.stderr, p.stderr
    p = roastop("compare", big)
    assert p.returncode == 2 and "two measurement directories" in p.stderr
