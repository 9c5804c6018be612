"""A scheduler that fails as real ones do: roastop keeps running, keeps
applying chunk datagrams, says what is wrong, recovers by itself and still
writes the measurement."""
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import Listener, memory_env  # noqa: E402
from dask_cluster import wait_for  # noqa: E402
from fake_scheduler import FakeScheduler  # noqa: E402


@pytest.fixture
def sched():
    s = FakeScheduler()
    yield s
    s.close()


def watch(tmp_path, sched, env=None):
    return Listener(tmp_path, "--no-auth", "--scheduler", sched.url, "--interval", "0.5",
                    env=env)


def err(lst):
    return lst.err_path.read_text()


def chunk(seq):
    return {"type": "chunk", "run_id": "r", "host": "h", "pid": 1, "seq": seq,
            "duration": 0.5, "num_events": 100, "dataset": "d"}


def vm_hwm_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_500_everywhere_is_degraded_and_retried(tmp_path, sched):
    sched.mode = "500"
    lst = watch(tmp_path, sched)
    wait_for(lambda: "HTTP 500" in err(lst))
    # a fourth identity.json asked: roastop polls in rounds, one at a time,
    # so the three answers before it were taken in
    wait_for(lambda: sum(path == "/json/identity.json" for path, _ in sched.seen) >= 4,
             timeout=60)
    _, m = lst.stop()
    s = m["roastop"]["scheduler"]
    assert s["rounds"] >= 3 and s["identity_500"] >= 3
    assert m["roastop"]["sources"]["scheduler"]["state"] == "degraded"
    assert m["peak_workers"] is None


def test_slow_scheduler_does_not_stall_chunks(tmp_path, sched):
    sched.mode = "slow"  # 12 s per answer: past roastop's 10 s request timeout
    lst = watch(tmp_path, sched)
    wait_for(lambda: sched.requests >= 1)  # a request under way, answered in 12 s
    t0 = time.monotonic()
    for i in range(200):
        lst.send(chunk(i), tagged=False)
    lst.wait_received(200)  # read by the loop while the request hangs, not by the stop's drain
    _, m = lst.stop()  # within ~2 s of the first datagram, mid-request
    assert time.monotonic() - t0 < 5
    assert m["num_chunks"] == 200


def test_timeout_then_recovery(tmp_path, sched):
    sched.mode = "hang"  # a partition: nothing comes back
    lst = watch(tmp_path, sched)
    wait_for(lambda: "scheduler lost" in err(lst), timeout=20)
    assert "Timeout" in err(lst) or "timed out" in err(lst)
    sched.mode = "ok"
    wait_for(lambda: "scheduler connected" in err(lst), timeout=20)
    _, m = lst.stop()
    assert m["peak_workers"] == 2
    assert m["roastop"]["scheduler_gaps"] >= 1


@pytest.mark.parametrize("mode", ["truncated", "short", "drop"])
def test_broken_bodies_are_counted_and_survived(tmp_path, sched, mode):
    sched.mode = mode
    lst = watch(tmp_path, sched)
    wait_for(lambda: lst.proc.poll() is None and ("degraded" in err(lst) or "lost" in err(lst)))
    asked = sched.requests
    wait_for(lambda: sched.requests >= asked + 2, timeout=60)  # a few more broken answers
    sched.mode = "ok"
    wait_for(lambda: "scheduler connected" in err(lst), timeout=40)
    _, m = lst.stop()
    s = m["roastop"]["scheduler"]
    if mode == "truncated":  # a whole HTTP answer whose JSON is cut: rejected
        assert s["rejected"] >= 1
    else:  # the transfer itself broke
        assert s["failures"] >= 1
    assert m["peak_workers"] == 2


@pytest.mark.parametrize("mode", ["huge", "huge_stream"])
def test_200_mb_body_is_refused_with_memory_bounded(tmp_path, sched, mode):
    sched.mode = mode
    lst = watch(tmp_path, sched, env=memory_env())
    wait_for(lambda: "size limit" in err(lst), timeout=60)
    hwm_mb = vm_hwm_kb(lst.proc.pid) / 1024
    _, m = lst.stop()
    assert m["roastop"]["scheduler"]["too_large"] >= 1
    assert hwm_mb < 150, hwm_mb  # the 64 MB cap, not the 200 MB body
