"""Each rule on another run shape than the one it was written from
(docs/diagnosis.md, "The rules"; the first shapes are in test_findings.py,
test_findings_runs.py, test_findings_cpu.py, test_retries.py and
test_compare.py): real coffea runs of test_findings.py's Sleepy client on
this module's three 1-thread workers (test_findings_runs.three_workers, no
work stealing), measured live by roastop --headless.

- a straggler from the run's start: the second chunk spins sixty times
  longer than the others while the other two workers run every other chunk;
  the chunk queued behind it ends last: tail names the straggler, and
  neither its file nor its worker is slow;
- the run's last chunk stuck off the CPU (a sleep thirty times the others',
  as a read that hangs): tail, naming that chunk's file;
- a leak on one of three workers (60 MiB a chunk): memory_growth names it;
- 500-event chunks of a process() that returns at once: the time outside
  process() is the run: small_chunks, with a bigger chunk size;
- one chunk for three threads: idle_cluster, two threads never had one;
- three worker processes on one core (too many workers for the node) running
  CPU-bound chunks: cpu_starved, no io_bound;
- one file of each dataset on a slow site (a second HTTP server, 127.0.0.2),
  the others on a fast one: slow_site names that host over two files."""
import json
import os
import re

import pytest
from distributed import Client

from http_files import fileset_over, serving
from test_findings import measured_run
from test_findings_cpu import pin
from test_findings_runs import chunk_records, findings, three_workers  # noqa: F401 (fixture)


def ids(run):
    return [f["id"] for f in run["metrics"]["roastop"]["findings"]]


def test_straggler_from_the_start_is_the_tail(tmp_path, three_workers,  # noqa: F811
                                              dimuon_files):
    """The chunk queued behind the straggler on its worker ends last, in a
    moment: the tail names the straggler that held it."""
    files, _ = dimuon_files
    run = measured_run(tmp_path, three_workers, files, "DYJetsToLL_0.root@10000", factor=60)
    mine = max(chunk_records(run), key=lambda c: c["duration"])
    last = max(chunk_records(run), key=lambda c: c["t_end"])
    assert mine["file"].endswith("DYJetsToLL_0.root") and last is not mine, (mine, last)
    tail = findings(run, "tail")
    assert len(tail) == 1, ids(run)
    assert tail[0]["evidence"].endswith(
        f"its longest chunk: {mine['duration']:.3g} s on {mine['worker']}, file {mine['file']}"), \
        (tail[0], mine)
    assert not findings(run, "slow_file") and not findings(run, "bad_worker"), ids(run)


def test_stuck_last_chunk_is_a_tail(tmp_path, three_workers, dimuon_files):  # noqa: F811
    files, _ = dimuon_files
    run = measured_run(tmp_path, three_workers, files, "TTbar_2.root@40000", how="sleep",
                       factor=30)
    tail = findings(run, "tail")
    assert len(tail) == 1, ids(run)
    held = re.search(r"its longest chunk: ([\d.]+) s on \S+, file (\S+)$", tail[0]["evidence"])
    assert held and held.group(2).endswith("TTbar_2.root"), tail[0]
    assert float(held.group(1)) >= 9, tail[0]  # the chunk that slept 9 s
    assert not findings(run, "slow_file") and not findings(run, "bad_worker"), ids(run)


def test_leak_on_one_of_three_is_growth(tmp_path, three_workers, dimuon_files):  # noqa: F811
    files, _ = dimuon_files
    # 60 MiB: a loaded machine leaves w1 as few as 7 of the 30 chunks, and
    # the growth is judged without its largest step (6 x 60 MiB > 256 MiB)
    run = measured_run(tmp_path, three_workers, files, "w1", how="leak", factor=60)
    growth = findings(run, "memory_growth")
    assert len(growth) == 1, ids(run)
    assert growth[0]["title"] == "memory grows chunk after chunk on w1", growth[0]
    m = re.search(r"\(\+([\d.]+) MiB a chunk\)", growth[0]["evidence"])
    assert m and 45 <= float(m.group(1)) <= 75, growth[0]


def one_dataset(files, tmp_path, ds, n=None):
    """A directory with a fileset.json of ds's files (its first n)."""
    d = tmp_path / f"{ds}-files"
    d.mkdir()
    fl = json.loads((files / "fileset.json").read_text())[ds]
    (d / "fileset.json").write_text(json.dumps({ds: fl[:n] if n else fl}))
    return d


def test_tiny_chunks_of_nothing_are_small_chunks(tmp_path, three_workers,  # noqa: F811
                                                 dimuon_files):
    files, _ = dimuon_files
    run = measured_run(tmp_path, three_workers, one_dataset(files, tmp_path, "TTbar"), "none",
                       how="empty", chunksize=500)
    assert run["metrics"]["num_chunks"] == 300, run["metrics"]["num_chunks"]
    small = findings(run, "small_chunks")
    assert len(small) == 1, ids(run)
    size = int(re.search(r"chunksize of at least ([\d,]+) events", small[0]["suggestion"])
               .group(1).replace(",", ""))
    assert size > 500, small[0]


def test_one_chunk_on_three_threads_is_an_idle_cluster(tmp_path, three_workers,  # noqa: F811
                                                      dimuon_files):
    files, _ = dimuon_files
    run = measured_run(tmp_path, three_workers, one_dataset(files, tmp_path, "TTbar", 1),
                       "none", chunksize=50000)
    idle = findings(run, "idle_cluster")
    assert len(idle) == 1, ids(run)
    assert idle[0]["title"] == "idle cluster: 1 chunk for 3 threads", idle[0]
    assert "at least 2 threads (67%) never had a chunk" in idle[0]["evidence"], idle[0]


@pytest.mark.skipif(os.environ.get("ROASTOP_SANITIZED") == "1",
                    reason="the rule's C runs under the sanitizers in test_diagnosis.c")
def test_three_workers_on_one_core_are_starved(tmp_path, three_workers, dimuon_files):  # noqa: F811
    files, _ = dimuon_files
    every = os.sched_getaffinity(0)
    with Client(three_workers.address, timeout=30) as c:
        workers = list(c.run(os.getpid).values())
    try:
        for pid in workers:
            pin(pid, {max(every)})
        run = measured_run(tmp_path, three_workers, files, "none")
    finally:
        for pid in workers:
            pin(pid, every)
    starved = findings(run, "cpu_starved")
    assert len(starved) == 1, ids(run)
    assert int(re.search(r"\((\d+)%\)", starved[0]["evidence"]).group(1)) >= 40, starved[0]
    assert not findings(run, "io_bound"), ids(run)


def test_one_file_a_dataset_on_a_slow_site(tmp_path, three_workers, dimuon_files):  # noqa: F811
    files, _ = dimuon_files
    slow_files = {"DYJetsToLL_2.root", "TTbar_0.root"}
    with serving(files, "127.0.0.1") as fast, serving(files, "127.0.0.2", delay=0.5) as slow:
        over = fileset_over(files, tmp_path / "over-http",
                            lambda name: slow if name in slow_files else fast)
        run = measured_run(tmp_path, three_workers, over, "none")
    site = findings(run, "slow_site")
    assert len(site) == 1, ids(run)
    assert "127.0.0.2" in site[0]["title"], site[0]
    assert "over 2 files" in site[0]["evidence"], site[0]
    assert not findings(run, "bad_worker"), ids(run)
