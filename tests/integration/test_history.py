"""Every run against the last run of the same analysis (docs/compare.md,
"roastop history"; docs/metrics.md, "Identity"): three real coffea runs
over the same uproot-written files into one output root, the second with
one file ten times slower, each measured live by roastop --headless.

- each measurement's roastop.identity names the processor, the files and
  the chunk size, the same key for all three;
- `roastop history` lists the three newest first with their figures, as
  plain text and as JSON; --name filters;
- the second run names the slow file first among the files whose rate
  fell, and slower_than_before names it;
- live, in a terminal: the run after the first shows the first's rate and
  an ETA from its duration before its own is known;
- another user's measurement, a corrupt metrics.json and a directory of
  unrelated files under the root are skipped and counted."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import CHUNKSIZE, ROASTOP, load_metrics, run_dirs
from dask_cluster import EXAMPLES, client_env
from test_findings import BASE_SLEEP, SLEEPY_CLIENT, SLOW, measured_run
from test_screen import Screen, until


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    d = tmp_path_factory.mktemp("history")
    runs = []
    for slow in ("none", SLOW, "none"):  # the slow file's chunks 20 x: well beyond the spread
        run = measured_run(d, dask_cluster, files, slow, factor=20)
        run["dir"] = run["dir"].resolve()  # latest, now: the run's own directory
        runs.append(run)
    return d / "measurement", runs


def history(root, *args):
    p = subprocess.run([str(ROASTOP), "history", str(root), *args], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p


def test_identity_written_with_each_measurement(three_runs):
    root, runs = three_runs
    ids = [r["metrics"]["roastop"]["identity"] for r in runs]
    for i in ids:
        assert i["processor"] == "Sleepy" and i["name"] == "sleepy"
        assert i["files"] == 6 and i["datasets"] == 2 and i["chunk_events"] == CHUNKSIZE
        assert i["t_start"] > 0
    assert len({i["key"] for i in ids}) == 1, ids
    text = (runs[0]["dir"] / "summary.txt").read_text()
    assert f"analysis {ids[0]['key']}: 2 datasets, 6 files, chunk size 10,000 events" in text


def test_history_lists_the_runs_newest_first(three_runs):
    root, runs = three_runs
    assert len(run_dirs(root)) == 3
    doc = json.loads(history(root, "--json").stdout)
    listed = doc["runs"]
    assert [r["dir"] for r in listed] == [r["dir"].name for r in reversed(runs)]
    for got, run in zip(listed, reversed(runs)):
        m = run["metrics"]
        assert got["run_name"] == "sleepy" and got["run_status"] == "completed"
        assert got["total_events"] == m["total_events"] == 300000
        assert got["event_rate_elapsed_khz"] == pytest.approx(m["event_rate_elapsed_khz"])
        assert got["elapsed_time_seconds"] == pytest.approx(m["elapsed_time_seconds"])
        assert got["identity"] == m["roastop"]["identity"]["key"]
    slow_rate, fast_rate = listed[1]["event_rate_elapsed_khz"], listed[2]["event_rate_elapsed_khz"]
    assert slow_rate < fast_rate
    assert doc["skipped"] == {"another_user": 0, "corrupt": 0, "unrelated": 0, "not_read": 0}
    lines = history(root).stdout.splitlines()
    assert lines[0].split()[:4] == ["when", "name", "status", "events"]
    assert len(lines) == 4 and all("sleepy" in l and "completed" in l and "300,000" in l
                                   for l in lines[1:]), lines
    assert history(root, "--name", "nothing-like-it").stdout.count("\n") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's directory needs chown (root); "
                    "tests/unit/test_history.c covers it as another uid")
def test_history_skips_and_counts_what_is_not_a_measurement(three_runs, tmp_path):
    root, runs = three_runs
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for run in runs:
        (mixed / run["dir"].name).symlink_to(run["dir"])  # links: skipped
    own = mixed / "2026-01-01_10-00-00_own"
    own.mkdir()
    (own / "metrics.json").write_text((runs[0]["dir"] / "metrics.json").read_text())
    foreign = mixed / "2026-01-02_10-00-00_theirs"
    foreign.mkdir()
    (foreign / "metrics.json").write_text((runs[1]["dir"] / "metrics.json").read_text())
    os.chown(foreign, 4242, 4242)
    corrupt = mixed / "2026-01-03_10-00-00_corrupt"
    corrupt.mkdir()
    (corrupt / "metrics.json").write_text('{"total_events": 3')
    (mixed / "notes").mkdir()
    (mixed / "notes" / "plot.png").write_bytes(b"\x89PNG")
    (mixed / "README").write_text("not a run")
    p = history(mixed, "--json")
    doc = json.loads(p.stdout)
    assert [r["dir"] for r in doc["runs"]] == [own.name]
    assert doc["skipped"] == {"another_user": 1, "corrupt": 1, "unrelated": 5, "not_read": 0}
    assert "skipped 1 of another user, 1 corrupt, 5 unrelated" in p.stderr


def test_each_run_names_the_previous_one(three_runs):
    """The first run has none before it; the second names the first, the
    same analysis, and its fall in rate; the third names the second."""
    root, runs = three_runs
    assert "previous" not in runs[0]["metrics"]["roastop"]
    for i in (1, 2):
        prev = runs[i]["metrics"]["roastop"]["previous"]
        assert prev["dir"] == runs[i - 1]["dir"].name and prev["analysis"] == "same", prev
        assert prev["event_rate_elapsed_khz"] == pytest.approx(
            runs[i - 1]["metrics"]["event_rate_elapsed_khz"])
        text = (runs[i]["dir"] / "summary.txt").read_text()
        assert f"Previous Run\n------------\n{prev['dir']} (same analysis)" in text, text
        html = (runs[i]["dir"] / "report.html").read_text()
        assert "Against the previous run" in html and prev["dir"] in html
    assert runs[1]["metrics"]["roastop"]["previous"]["rate_change_percent"] < -25
    per = runs[1]["metrics"]["roastop"]["previous"]["per_dataset"]
    slow_ds = [d for d in per if SLOW.startswith(d)]
    assert len(per) == 2 and len(slow_ds) == 1, per
    other = next(d for d in per if d != slow_ds[0])
    assert per[slow_ds[0]]["rate_change_percent"] < per[other]["rate_change_percent"], per
    files = runs[1]["metrics"]["roastop"]["previous"]["per_file"]  # largest fall first
    assert len(files) == 6 and files[0]["file"].endswith(SLOW), files
    now_over_then = [1 + f["rate_change_percent"] / 100 for f in files[:2]]
    assert now_over_then[0] < 0.5 and 3 * now_over_then[0] < now_over_then[1], files
    text = (runs[1]["dir"] / "summary.txt").read_text()
    assert SLOW in text.split("Files, largest fall first\n")[1].split("\n")[0], text
    assert runs[2]["metrics"]["roastop"]["previous"]["rate_change_percent"] > 25


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_live_view_shows_the_last_run(three_runs, dask_cluster, dimuon_files, tmp_path):
    """roastop in a terminal, its output root holding the first run only:
    from the run's start the main view shows that run's rate and an ETA
    from its duration, saying whose, while the slow run goes."""
    root, runs = three_runs
    files, _ = dimuon_files
    out = tmp_path / "out"
    out.mkdir()
    shutil.copytree(runs[0]["dir"], out / runs[0]["dir"].name)
    port = free_port()
    screen = Screen(tmp_path, ["--listen", f"127.0.0.1:{port}", "--scheduler",
                               dask_cluster.dashboard_url, "--exit-on-run-end", "--checkpoint",
                               0], cols=120, rows=30, out=out)
    try:
        key = tmp_path / "roastop" / "key"
        until(key.exists, "the key file")
        script = tmp_path / "sleepy_client.py"
        script.write_text(SLEEPY_CLIENT)
        env = client_env(ROASTOP_ADDR=f"127.0.0.1:{port}", ROASTOP_KEY=key.read_text().strip())
        client = subprocess.Popen([sys.executable, str(script), str(EXAMPLES),
                                   dask_cluster.address, str(files), str(CHUNKSIZE), SLOW,
                                   str(BASE_SLEEP), "spin", "20"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rate = runs[0]["metrics"]["event_rate_elapsed_khz"]
        shown = screen.wait_for(["last run ", "(last run's)"], timeout=60)
        assert "ETA" in shown, shown
        got = re.search(r"last run ([\d.]+) ([kMG]?)Hz", shown)
        assert got, shown
        scale = {"": 1e-3, "k": 1, "M": 1e3, "G": 1e6}[got.group(2)]
        assert float(got.group(1)) * scale == pytest.approx(rate, rel=0.01), shown
        text, _ = client.communicate(timeout=300)
        assert client.returncode == 0, text
        until(lambda: "roastop-exit=0" in screen.joined(), "roastop's exit", timeout=60)
    finally:
        screen.close()
    m = load_metrics(out)
    prev = m["roastop"]["previous"]
    assert prev["dir"] == runs[0]["dir"].name, prev
    # the change is that of the two runs' own rates (each measured under
    # whatever load the machine had then: slower, by how much it may vary)
    then, now = rate, m["event_rate_elapsed_khz"]
    assert prev["rate_change_percent"] == pytest.approx(100 * (now - then) / then, abs=0.1)
    assert prev["rate_change_percent"] < 0, prev


def test_slower_than_before_names_the_slow_file(three_runs):
    """The second run against the first: slower_than_before, naming the
    first run and the slow file (slow_file, new since) as the cause, in
    metrics.json and summary.txt; the third, as fast as the first, against
    the second: no such finding."""
    root, runs = three_runs
    found = [f for f in runs[1]["metrics"]["roastop"]["findings"]
             if f["id"] == "slower_than_before"]
    assert len(found) == 1, runs[1]["metrics"]["roastop"]["findings"]
    f = found[0]
    assert f["title"].endswith("slower than the last run, " + runs[0]["dir"].name), f
    assert "new since: " in f["evidence"], f
    assert "slow_file (slow file: " + SLOW in f["evidence"].split("new since: ")[1], f
    assert SLOW + ", -" in f["evidence"].split("largest fall: ")[1], f
    text = (runs[1]["dir"] / "summary.txt").read_text()
    assert "slower than the last run, " + runs[0]["dir"].name in text, text
    assert "slow_file (slow file: " + SLOW in text, text
    for run in (runs[0], runs[2]):
        assert not [g for g in run["metrics"]["roastop"]["findings"]
                    if g["id"] == "slower_than_before"], run["metrics"]["roastop"]["findings"]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_runs_view_lists_past_sessions(three_runs, tmp_path):
    """roastop started on the output root of the three runs: view 8 lists
    them below this session's (none), newest first, each with its figures
    as history gives them; Enter on one says what it is."""
    root, runs = three_runs
    listed = json.loads(history(root, "--json").stdout)["runs"]
    screen = Screen(tmp_path, ["--listen", f"127.0.0.1:{free_port()}"], cols=200, rows=60,
                    out=root)
    try:
        screen.wait_for("roastop")
        screen.keys("8")
        names = [r["dir"] for r in listed]
        shown = screen.wait_for([f"past session: {len(runs)}", *names], timeout=30)
        rows = [line for line in shown.splitlines() if any(n in line for n in names)]
        assert [next(n for n in names if n in row) for row in rows] == names, shown
        for row, r in zip(rows, listed):
            assert r["run_status"] in row and f"{r['total_events']:,}" in row, (row, r)
        screen.keys("Enter")
        screen.wait_for("a past session's run", timeout=30)
    finally:
        screen.close()
