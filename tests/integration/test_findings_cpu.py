"""The CPU a chunk waited for, on real coffea runs (docs/diagnosis.md,
cpu_starved and io_bound): the Sleepy client of test_findings.py on the
session's cluster (two 1-thread workers), measured live by roastop
--headless, while busy processes beside the workers take their core.

- CPU-bound chunks beside a CPU hog (the workers and two busy loops pinned to
  one core):
  process()'s threads wait for a CPU, and cpu_starved says so with its share;
  io_bound, which would send the physicist to their branches and replicas,
  does not speak; every chunk record carries the wait it measured.
A process() that sleeps (test_findings.py's waiting run) waits, but not for
a CPU: io_bound, not cpu_starved."""
import os
import re
import subprocess
import sys
from contextlib import contextmanager

import pytest
from distributed import Client

from test_findings import measured_run, wait_share

# the rule's C runs under the sanitizers in the unit tests (test_diagnosis.c); here
# the ASan pass would only take a core from the machine's other tests for another minute
pytestmark = pytest.mark.skipif(os.environ.get("ROASTOP_SANITIZED") == "1",
                                reason="a minute of CPU hog, for no code the unit tests miss")

HOG = "import time\nend = time.monotonic() + 900\nwhile time.monotonic() < end:\n    pass\n"


def pin(pid, cpus):
    """Every thread of process pid onto cpus (a new thread inherits its creator's)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except (ProcessLookupError, FileNotFoundError):
            pass  # a thread that ended meanwhile


@contextmanager
def cpu_hog(cluster):
    """A node of one core with more busy processes than cores: the cluster's
    worker processes and two busy loops, all pinned to this machine's last
    CPU until the block ends (so the tests running beside keep the others)."""
    one, every = {max(os.sched_getaffinity(0))}, os.sched_getaffinity(0)
    with Client(cluster.address, timeout=30) as c:
        workers = list(c.run(os.getpid).values())
    procs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    try:
        for pid in workers + [p.pid for p in procs]:
            pin(pid, one)
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=30)
        for pid in workers:
            pin(pid, every)


def ids(run):
    return [f["id"] for f in run["metrics"]["roastop"]["findings"]]


def test_cpu_bound_beside_a_hog_is_starved(tmp_path, dask_cluster, dimuon_files):
    files, _ = dimuon_files
    with cpu_hog(dask_cluster):
        run = measured_run(tmp_path, dask_cluster, files, "none")
    found = run["metrics"]["roastop"]["findings"]
    assert "io_bound" not in ids(run), found
    starved = [f for f in found if f["id"] == "cpu_starved"]
    assert len(starved) == 1, found
    share = int(re.search(r"waits (\d+)% of its time for a CPU", starved[0]["title"]).group(1))
    assert share >= 30 and abs(share - 100 * wait_share(run)) <= 1, (starved, wait_share(run))
    assert "lower nthreads" in starved[0]["suggestion"], starved
    warnings = {f["id"] for f in found if f["severity"] != "info"}
    assert warnings == {"cpu_starved"}, found
