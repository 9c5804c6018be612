"""A benchmark ends every process it starts, also when it is interrupted
(scripts/bench.sh): started in its smoke mode with a mark in its
environment, which every process it starts inherits, it is stopped by a
signal once what it starts runs, and then no process with the mark is left.

bench_scheduler_cost.py (a Dask cluster, then roastop watching it) by
SIGINT, as Ctrl-C sends it, and by SIGTERM, as a timeout does: it stops its
processes through its finally blocks and exits 128 + the signal
(dask_cluster.end_with_me). bench_poll (a forked fake scheduler) by SIGTERM,
which ends it at once: its child goes with it (bench.h, bench_die_with)."""
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import ROASTOP
from dask_cluster import wait_for

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", "build"))


def marked(mark):
    """{pid: command line} of the processes whose environment holds mark."""
    found = {}
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and mark.encode() in (d / "environ").read_bytes():
                found[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # gone, or not ours
            continue
    return found


def cluster_and_roastop(procs):
    cmds = procs.values()
    return any("dask scheduler" in c for c in cmds) and any(
        c.startswith(str(Path(ROASTOP).resolve()) + " ") for c in cmds)


def forked_child(procs):
    return len(procs) >= 2  # the benchmark and its fake scheduler


CASES = [
    ([sys.executable, str(REPO / "bench" / "bench_scheduler_cost.py")], signal.SIGINT,
     cluster_and_roastop),
    ([sys.executable, str(REPO / "bench" / "bench_scheduler_cost.py")], signal.SIGTERM,
     cluster_and_roastop),
    ([str(BUILD / "bench" / "bench_poll")], signal.SIGTERM, forked_child),
]


@pytest.mark.parametrize("args,sig,up", CASES, ids=["cost-INT", "cost-TERM", "poll-TERM"])
def test_interrupted_benchmark_leaves_no_process(tmp_path, args, sig, up):
    mark = uuid.uuid4().hex
    env = dict(os.environ, BENCH_SMOKE="1", BENCH_CLEANUP_MARK=mark, BUILD=str(BUILD),
               ROASTOP=str(Path(ROASTOP).resolve()))
    with open(tmp_path / "stderr", "w") as err:
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=err,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: up(marked(mark)) or p.poll() is not None, timeout=300, step=0.05)
        assert p.poll() is None, "the benchmark ended before what it starts was seen running"
        p.send_signal(sig)
        code = p.wait(timeout=120)
        if args[0] == sys.executable:  # through its finally blocks
            assert code == 128 + sig, (tmp_path / "stderr").read_text()
        try:
            wait_for(lambda: not marked(mark), timeout=30)
        except AssertionError:
            raise AssertionError(f"left running after the benchmark: {marked(mark)}") from None
    finally:  # a failure: what it left is ended here
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.wait()
