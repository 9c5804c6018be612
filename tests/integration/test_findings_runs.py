"""Two more findings on real coffea runs (issue 35; docs/diagnosis.md), the
Sleepy client of test_findings.py on the session's cluster (two 1-thread
workers), measured live by roastop --headless:

- a worker made slow: every chunk on one worker spins four times longer
  than on the other: bad_worker names that worker, with the rates;
- one long chunk, the last of the last file, thirty times the others':
  tail says how much of the run the idle thread cost and names that file;
- fewer chunks than threads: one file read as one chunk on two threads:
  idle_cluster says 1 chunk for 2 threads and how many never had one;
- a leak: every chunk on one worker keeps 40 MiB until the run ends:
  memory_growth names that worker, with the growth a chunk."""
import json
import re

from distributed import Client

from test_findings import measured_run


def findings(run, rule):
    return [f for f in run["metrics"]["roastop"]["findings"] if f["id"] == rule]


def worker_names(cluster):
    with Client(cluster.address, timeout=30) as c:
        return sorted(str(w["name"]) for w in c.scheduler_info()["workers"].values())


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
