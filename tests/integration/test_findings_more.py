"""More rules on more run shapes (docs/diagnosis.md, "The rules"): real
coffea runs of test_findings.py's Sleepy client, measured live by roastop
--headless.

On the session's cluster (two 1-thread workers), the files served over
HTTP (http_files.py), as from a site's storage:
- DYJetsToLL's three files on a slow site (127.0.0.2, every request half a
  second late), TTbar's on a fast one (127.0.0.1): slow_site names the slow
  host over three files, and no worker;
- every file on the slow site: process() waits on its reads off the CPU:
  io_bound (and cpu_starved only if the machine's other tests took the CPU).

On two 1-thread workers of 2 GiB that Dask does not pause (this module's):
- one chunk keeps 1.6 GiB until the run ends (a cache filled at once):
  memory_pressure names its worker, near its limit;
- each chunk on w1 keeps 160 MiB, ten at most (a cache that grows to its
  cap): memory_pressure names w1, and memory_growth too."""
import re

import pytest

from conftest import warm_cluster
from http_files import fileset_over, serving
from test_findings import measured_run, starved
from test_findings_runs import findings, worker_names

NEAR = r"of its 2(\.0+)? GiB limit \((8[5-9]|9\d)%\)"


def ids(run):
    return [f["id"] for f in run["metrics"]["roastop"]["findings"]]


@pytest.fixture(scope="module")
def no_pause(tmp_path_factory, dimuon_files):
    with warm_cluster(tmp_path_factory, dimuon_files,
                      env={"DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE": "False"}) as c:
        yield c


def over_http(tmp_path, files, slow_names, delay=0.5):
    """The files served by a fast site and a slow one (slow_names: the
    files it holds, None: all); yields the fileset's directory."""
    import contextlib

    @contextlib.contextmanager
    def sites():
        with serving(files, "127.0.0.1") as fast, \
                serving(files, "127.0.0.2", delay=delay) as slow:
            yield fileset_over(files, tmp_path / "over-http",
                               lambda n: slow if slow_names is None or n in slow_names
                               else fast)
    return sites()


def test_slow_site_is_named(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    dy = {f"DYJetsToLL_{i}.root" for i in range(3)}
    with over_http(tmp_path, files, dy) as fs:
        run = measured_run(tmp_path, dask_cluster, fs, "none")
    site = findings(run, "slow_site")
    assert len(site) == 1 and "127.0.0.2" in site[0]["title"], ids(run)
    assert "over 3 files" in site[0]["evidence"], site[0]
    assert not findings(run, "bad_worker"), ids(run)


def test_slow_reads_are_io_bound(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    with over_http(tmp_path, files, None, delay=0.3) as fs:
        run = measured_run(tmp_path, dask_cluster, fs, "none", base=0.05)
    assert findings(run, "io_bound"), ids(run)
    # waiting for a CPU too only when the machine's other tests took it
    assert not findings(run, "cpu_starved") or starved(run), ids(run)


def test_memory_held_near_the_limit_is_pressure(tmp_path, no_pause, dimuon_files):
    files, _ = dimuon_files
    holder = worker_names(no_pause)[0]
    run = measured_run(tmp_path, no_pause, files, holder, how="hold", factor=1600)
    p = findings(run, "memory_pressure")
    assert len(p) == 1 and p[0]["title"] == f"memory pressure on {holder}", ids(run)
    assert re.search(NEAR, p[0]["evidence"]), p[0]
    assert not findings(run, "memory_growth"), ids(run)  # held once, not grown


def test_cache_grown_to_its_cap_is_pressure_and_growth(tmp_path, no_pause, dimuon_files):
    files, _ = dimuon_files
    run = measured_run(tmp_path, no_pause, files, "w1", how="leak", factor="160x10")
    p = findings(run, "memory_pressure")
    assert len(p) == 1 and p[0]["title"] == "memory pressure on w1", ids(run)
    assert re.search(NEAR, p[0]["evidence"]), p[0]
    growth = findings(run, "memory_growth")
    assert len(growth) == 1 and growth[0]["title"].endswith(" on w1"), ids(run)
