"""Two more findings on real coffea runs (issue 35; docs/diagnosis.md), the
Sleepy client of test_findings.py on the session's cluster (two 1-thread
workers), measured live by roastop --headless:

- a worker made slow: every chunk on one worker spins four times longer
  than on the other: bad_worker names that worker, with the rates;
- on three 1-thread workers (a cluster of this module's), one worker five
  times slower (five times the CPU an event), which Dask gives only 2 (or
  3) of the run's 12 chunks because it is slow: bad_worker names it from
  those chunks, and no file it read is called slow;
- on the same three workers, one file's chunks ten times slower on every
  worker that read them: slow_file names the file, and no worker;
- one long chunk, the last of the last file, thirty times the others':
  tail says how much of the run the idle thread cost and names that file;
  one chunk is a straggler, not a slow file nor a slow worker;
- fewer chunks than threads: one file read as one chunk on two threads:
  idle_cluster says 1 chunk for 2 threads and how many never had one;
- a leak: every chunk on one worker keeps 40 MiB until the run ends:
  memory_growth names that worker, with the growth a chunk."""
import json
import re

import pytest
from distributed import Client

from conftest import warm_cluster
from test_findings import measured_run


def findings(run, rule):
    return [f for f in run["metrics"]["roastop"]["findings"] if f["id"] == rule]


def worker_names(cluster):
    with Client(cluster.address, timeout=30) as c:
        return sorted(str(w["name"]) for w in c.scheduler_info()["workers"].values())


def chunk_records(run, **where):
    """The run's chunk records (metrics.json's raw_chunk_metrics) whose
    fields have the values given (worker="w2", file=...)."""
    return [c for c in run["metrics"]["raw_chunk_metrics"]
            if all(c.get(k) == v for k, v in where.items())]


@pytest.fixture(scope="module")
def three_workers(tmp_path_factory, dimuon_files):
    """A warm cluster of three 1-thread workers, w0, w1 and w2, without
    work stealing: a worker keeps the two tasks the scheduler queues on it
    (one running, one waiting), so that how many chunks a slow worker runs
    depends on its pace, not on when an idle worker takes its waiting one."""
    no_stealing = {"DASK_DISTRIBUTED__SCHEDULER__WORK_STEALING": "False"}
    with warm_cluster(tmp_path_factory, dimuon_files, n_workers=3, env=no_stealing) as c:
        assert worker_names(c) == ["w0", "w1", "w2"]
        yield c


def test_slow_worker_with_few_chunks_is_named(tmp_path, three_workers, dimuon_files):
    """w2 spins five times longer per chunk; chunks of 25,000 events (2 a
    file, 12 in all) leave it the 2 queued on it first, by the time the
    second ends the other two workers have run the other 10 (or 9, when the
    load eases as it runs alone: a third). Two are too few for a median:
    each is far beyond the other workers' slowest (on a loaded machine, in
    CPU time: the others' durations spread from 0.4 to 2.9 s for the same
    0.35 s of CPU)."""
    files, _ = dimuon_files
    run = measured_run(tmp_path, three_workers, files, "w2", factor=5, chunksize=20000)
    mine = chunk_records(run, worker="w2")
    assert 2 <= len(mine) <= 3, [(c["worker"], c["duration"]) for c in chunk_records(run)]
    bad = findings(run, "bad_worker")
    assert len(bad) == 1, run["metrics"]["roastop"]["findings"]
    f = bad[0]
    assert f["title"] == "slow worker: w2", f
    assert f["evidence"].startswith(f"w2: {len(mine)} chunks "), f
    ratio = float(re.search(r"\(([\d.]+)x slower", f["evidence"]).group(1))
    assert ratio >= 2, f
    # the files of its chunks are the worker's, not slow files
    assert not findings(run, "slow_file"), run["metrics"]["roastop"]["findings"]
    assert not findings(run, "slow_site"), run["metrics"]["roastop"]["findings"]


def test_slow_file_on_three_workers_is_the_file(tmp_path, three_workers, dimuon_files):
    """DYJetsToLL_1.root's 5 chunks spin ten times longer on whichever of
    the three workers reads them: the file, not a worker, is named."""
    files, _ = dimuon_files
    slow = "DYJetsToLL_1.root"
    run = measured_run(tmp_path, three_workers, files, slow, factor=10)
    readers = {c["worker"] for c in run["metrics"]["raw_chunk_metrics"]
               if c["file"].endswith(slow)}
    assert len(readers) >= 2, readers  # read by more than one worker
    named = findings(run, "slow_file")
    assert len(named) == 1 and named[0]["title"] == f"slow file: {slow}", \
        run["metrics"]["roastop"]["findings"]
    assert not findings(run, "bad_worker"), run["metrics"]["roastop"]["findings"]


def test_slow_worker_is_named(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    names = worker_names(dask_cluster)
    assert len(names) == 2, names
    slow = names[0]
    run = measured_run(tmp_path, dask_cluster, files, slow, factor=4)
    bad = findings(run, "bad_worker")
    assert len(bad) == 1, run["metrics"]["roastop"]["findings"]
    assert bad[0]["evidence"].startswith(slow + ":"), bad[0]
    assert names[1] not in bad[0]["evidence"].split(" against ")[0], bad[0]
    assert "slower" in bad[0]["evidence"], bad[0]


def test_one_chunk_on_two_threads_is_an_idle_cluster(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    one = tmp_path / "one-file"
    one.mkdir()
    first = json.loads((files / "fileset.json").read_text())["DYJetsToLL"][0]
    (one / "fileset.json").write_text(json.dumps({"DYJetsToLL": [first]}))
    run = measured_run(tmp_path, dask_cluster, one, "none", chunksize=50000)
    assert run["metrics"]["num_chunks"] == 1, run["metrics"]["num_chunks"]
    idle = findings(run, "idle_cluster")
    assert len(idle) == 1, run["metrics"]["roastop"]["findings"]
    assert idle[0]["title"] == "idle cluster: 1 chunk for 2 threads", idle[0]
    assert "the run had 1 chunk (50,000 events)" in idle[0]["evidence"], idle[0]
    assert "at least 1 thread (50%) never had a chunk" in idle[0]["evidence"], idle[0]


def test_one_long_last_chunk_is_a_tail(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    run = measured_run(tmp_path, dask_cluster, files, "TTbar_2.root@40000", factor=30)
    tail = findings(run, "tail")
    assert len(tail) == 1, run["metrics"]["roastop"]["findings"]
    assert "TTbar_2.root" in tail[0]["evidence"], tail[0]
    # one straggling chunk: its file's other 4 chunks ran as fast as any
    assert not findings(run, "slow_file"), run["metrics"]["roastop"]["findings"]
    assert not findings(run, "bad_worker"), run["metrics"]["roastop"]["findings"]


def test_memory_kept_per_chunk_is_growth(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    names = worker_names(dask_cluster)
    leaky = names[1]
    run = measured_run(tmp_path, dask_cluster, files, leaky, how="leak", factor=40)
    growth = findings(run, "memory_growth")
    assert len(growth) == 1, run["metrics"]["roastop"]["findings"]
    f = growth[0]
    assert f["title"] == f"memory grows chunk after chunk on {leaky}", f
    m = re.search(r"after its (\d+) chunks \(\+([\d.]+) MiB a chunk\), up after (\d+) of them",
                  f["evidence"])
    assert m, f
    chunks, per_chunk, up = int(m.group(1)), float(m.group(2)), int(m.group(3))
    assert chunks >= 6 and up >= 0.7 * (chunks - 1), f
    assert 30 <= per_chunk <= 50, f  # 40 MiB kept, give or take the chunk's own
