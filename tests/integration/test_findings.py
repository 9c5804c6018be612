"""Findings (issue 35; docs/diagnosis.md) on real coffea runs: coffea's
Runner with its Dask executor on the session's cluster (two 1-thread
workers) over the example's uproot-written files, measured live by roastop
--headless, which also records the run; the recording is then replayed in
tmux for the screen.

- a slow file: one file's chunks spin on the CPU ten times longer than the
  others' (CPU work, not a sleep: a process() that sleeps waits off the CPU,
  which is the io_bound finding):
  metrics.json's roastop.findings holds slow_file naming that file, with its
  rate and the share of the run's time it cost; summary.txt and report.html
  (rendered in headless Chromium) a Findings section naming it; the replay's
  top line at 80x24 and 200x60 names it, and view f lists it with evidence;
- a waiting run (every chunk sleeps in process()): io_bound;
- a healthy run (every chunk spins alike, one chunk per thread at a time):
  no finding anywhere, and each place says "no finding"."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import CHUNKSIZE, load_metrics, measuring, run_dir
from dask_cluster import EXAMPLES, client_env
from test_screen import pytestmark, screen  # noqa: F401 (tmux or skip; the fixture)

SLOW = "DYJetsToLL_1.root"
BASE_SLEEP = 0.3  # CPU seconds a chunk spins in process(); the slow file's, 10 x

SLEEPY_CLIENT = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    examples, scheduler, files, chunksize, slow, base, how, factor = sys.argv[1:9]
    sys.path.insert(0, examples)
    os.environ["DIMUON_METRICS"] = "roastop"
    import cloudpickle
    import dimuon
    cloudpickle.register_pickle_by_value(dimuon)
    from coffea import processor
    from coffea.nanoevents import NanoAODSchema
    from distributed import Client, get_worker
    from roastop import MetricsCollector, track_metrics

    fileset = json.loads((Path(files) / "fileset.json").read_text())

    def keep(here):  # how "leak": factor MiB a chunk ("MiBxN": at most N); "hold": once
        kept = get_worker().__dict__.setdefault("sleepy_leak", [])
        mib, _, cap = factor.partition("x")
        if slow in here and len(kept) < (1 if how == "hold" else int(cap or 1 << 30)):
            kept.append(b"\x01" * (int(mib) << 20))

    class Sleepy(dimuon.DimuonProcessor):
        @track_metrics
        def process(self, events):
            name = os.path.basename(events.metadata["filename"])
            here = (name, f"{name}@{events.metadata['entrystart']}", str(get_worker().name))
            if how == "empty":  # nothing but the task around it
                return {}
            if how in ("leak", "hold"):
                keep(here)
            slower = slow in here and how in ("spin", "sleep")
            seconds = float(base) * (float(factor) if slower else 1)
            if how == "sleep":  # waiting off the CPU, as on a slow read
                time.sleep(seconds)
            spent = time.thread_time() + (0 if how == "sleep" else seconds)
            while time.thread_time() < spent:  # CPU work: a sleep would read as I/O
                pass
            return dimuon.DimuonProcessor.process.__wrapped__(self, events)

    client = Client(scheduler)
    proc = Sleepy()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=int(chunksize))
    with MetricsCollector(client, processor_instance=proc, run_name="sleepy"):
        runner(fileset, processor_instance=proc, treename="Events")
    client.run(lambda dask_worker: dask_worker.__dict__.pop("sleepy_leak", None))
    print("done", flush=True)
    client.close()
""")


def measured_run(d: Path, cluster, files, slow: str, how: str = "spin", factor=10,
                 chunksize=CHUNKSIZE, base=BASE_SLEEP):
    """A Sleepy run measured and recorded by roastop --headless: its
    metrics.json, its measurement directory and the recording. slow: the
    file name, the chunk (file@entrystart) or the worker name whose chunks
    take factor times longer (how "spin" on the CPU, "sleep" off it, base
    seconds a chunk otherwise), or, how "leak", keep factor MiB each on their
    worker until the run ends ("MiBxN": at most N; "hold": once, on the first
    such chunk); how "empty": process() returns at once."""
    out, rec = d / "measurement", d / "run.jsonl"
    script = d / "sleepy_client.py"
    script.write_text(SLEEPY_CLIENT)
    with measuring(d, out, "--scheduler", cluster.dashboard_url, "--duration", 600,
                   "--record", rec) as live:
        p = subprocess.run([sys.executable, str(script), str(EXAMPLES), cluster.address,
                            str(files), str(chunksize), slow, str(base), how, str(factor)],
                           env=client_env(**live.env), capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0 and "done" in p.stdout, p.stdout + p.stderr
    return {"metrics": load_metrics(out), "dir": run_dir(out), "recording": rec}


@pytest.fixture(scope="module")
def slow_run(tmp_path_factory, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    return measured_run(tmp_path_factory.mktemp("slowfile"), dask_cluster, files, SLOW)


@pytest.fixture(scope="module")
def healthy_run(tmp_path_factory, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    return measured_run(tmp_path_factory.mktemp("healthy"), dask_cluster, files, "none")


@pytest.fixture(scope="module")
def waiting_run(tmp_path_factory, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    return measured_run(tmp_path_factory.mktemp("waiting"), dask_cluster, files, "none", "sleep")


def test_waiting_process_is_io_bound(waiting_run):
    """Every chunk sleeps in process() (the 1-thread workers' process off
    the CPU, as on a slow read): io_bound, with its shares in evidence."""
    found = waiting_run["metrics"]["roastop"]["findings"]
    io = [f for f in found if f["id"] == "io_bound"]
    assert len(io) == 1, found
    f = io[0]
    share = float(re.search(r"waits (\d+)% of its time off the CPU", f["title"]).group(1))
    assert share >= 60 and f["severity"] == "warning", f
    assert "a worker process of 1 thread used" in f["evidence"] and "per core" in f["evidence"]
    assert not [g for g in found if g["id"] in ("slow_file", "bad_worker")], found


def test_slow_file_named_in_metrics_json(slow_run):
    found = slow_run["metrics"]["roastop"]["findings"]
    slow = [f for f in found if f["id"] == "slow_file"]
    assert len(slow) == 1, found
    f = slow[0]
    assert f["title"] == f"slow file: {SLOW}"
    assert SLOW in f["evidence"] and "x slower" in f["evidence"]
    ratio = float(re.search(r"\(([\d.]+)x slower\)", f["evidence"]).group(1))
    assert 5 <= ratio <= 12, f  # 10 x the sleep, the processor's own time beside it
    assert 0.3 < f["cost_share"] < 1 and f["severity"] == "warning"
    assert f["since_run_seconds"] > 0 and f["suggestion"]
    # no worker blamed for the file's chunks
    assert not [g for g in found if g["id"] == "bad_worker"], found


def test_slow_file_in_summary_and_report(slow_run):
    text = (slow_run["dir"] / "summary.txt").read_text()
    section = text.split("\nFindings\n--------\n", 1)[1]
    assert section.startswith("[warning] slow file: " + SLOW) or \
        f"slow file: {SLOW} (slow_file)" in section.split("\n\n")[0], text
    html = (slow_run["dir"] / "report.html").read_text()
    assert '<section id="findings"><h2>Findings</h2>' in html
    assert f'data-id="slow_file"><b class="warn">slow file: {SLOW}</b>' in html


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed")
def test_report_findings_rendered_in_chromium(slow_run, tmp_path):
    from test_report_html import CHROMIUM_DEADLINE
    args = ["chromium", "--headless=new", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
            (slow_run["dir"] / "report.html").resolve().as_uri()]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")
    p = subprocess.run(args, capture_output=True, text=True, timeout=CHROMIUM_DEADLINE)
    assert p.returncode == 0, p.stderr[-3000:]
    dom = p.stdout
    i = dom.index('<section id="findings">')
    section = dom[i:dom.index("</section>", i)]
    assert "<h2>Findings</h2>" in section and f"slow file: {SLOW}" in section
    assert "x slower" in section


def wait_share(run):
    """The share of process()'s time its chunk records say it waited for a
    CPU, as cpu_starved counts it (a wait at most the time off the CPU)."""
    chunks = run["metrics"]["raw_chunk_metrics"]
    assert chunks and all("cpu_wait" in c for c in chunks), chunks[:2]
    off = [c["duration"] - min(c["cpu_time"], c["duration"]) for c in chunks]
    return (sum(min(c["cpu_wait"], o) for c, o in zip(chunks, off))
            / sum(c["duration"] for c in chunks))


def starved(run):
    """Whether the run's threads waited for a CPU (a loaded CI machine's other
    tests beside it): cpu_starved is then its true finding, not a healthy run's."""
    return wait_share(run) >= 0.3


def test_healthy_run_has_no_finding(healthy_run):
    m = healthy_run["metrics"]
    ids = [f["id"] for f in m["roastop"]["findings"]]
    assert ids == (["cpu_starved"] if starved(healthy_run) else []), m["roastop"]["findings"]
    assert m["num_failed_chunks"] == 0 and m["roastop"]["run_ended"] is True
    text = (healthy_run["dir"] / "summary.txt").read_text()
    html = (healthy_run["dir"] / "report.html").read_text()
    said = "CPU starved: process() waits" if ids else "No finding"
    assert said in html and (ids or "\nFindings\n--------\nNo finding" in text), text
    assert said in text, text


TAB_NAMES = {"Main", "Workers", "Datasets", "Slowest", "Sections", "Files", "Log", "Runs",
             "Running", "Tasks", "Findings"}


def tabs_whole(row: str):
    """The tab bar's words: keys, whole view names, the program's name."""
    words = row.replace("PAUSED", "").split()
    return all(w in TAB_NAMES or re.fullmatch(r"[0-9f]", w) or w == "roastop" for w in words)


@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_slow_file_on_screen(screen, slow_run, cols, rows):  # noqa: F811 - the fixture
    s = screen(["--replay", slow_run["recording"], "--speed", "0"], cols=cols, rows=rows)
    # the top line is metrics.json's first finding: the slow file, unless a loaded
    # machine starved the run of CPU for longer than the file cost (cpu_starved)
    first = slow_run["metrics"]["roastop"]["findings"][0]
    assert first["id"] == "slow_file" or starved(slow_run), first
    title = re.escape(first["title"] if cols > 80 else first["title"][:40])
    top = re.compile(r"^ warning: " + title + r".*\(f(: \d+ more)?\)", re.M)
    text = s.wait_still(top, timeout=120)
    lines = text.splitlines()
    assert top.match(lines[1]), text  # the line under the tabs, whole at 80 columns
    assert tabs_whole(lines[0]) and "1 Main" in lines[0], lines[0]
    assert re.search(r"1-9(/0)?/f views", lines[-1]) or cols == 80, lines[-1]
    s.keys("f")
    text = s.wait_for(["findings: ", "most severe first", f"slow file: {SLOW}",
                       re.compile(r"\dx\s+slower"),
                       "slow_file  since"])
    lines = text.splitlines()
    assert "f Findings" in lines[0] and tabs_whole(lines[0]), lines[0]
    assert any(SLOW in ln and "ev/s" in ln for ln in lines) or cols == 80, text


@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_healthy_run_says_no_finding_on_screen(screen, healthy_run, cols, rows):  # noqa: F811
    if starved(healthy_run):
        pytest.skip("this machine starved the run of CPU: cpu_starved is its finding")
    s = screen(["--replay", healthy_run["recording"], "--speed", "0"], cols=cols, rows=rows)
    text = s.wait_still(re.compile(r"^ no finding\s*$", re.M), timeout=120)
    assert text.splitlines()[1].strip() == "no finding", text
    s.keys("f")
    s.wait_for(["findings: no finding", "no rule of docs/diagnosis.md holds"])
