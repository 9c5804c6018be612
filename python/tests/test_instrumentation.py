"""track_time, track_memory, track_bytes: roastcoffea 0.1.2's sections."""
import mmap
import os
import threading
import time

import pytest
import roastop_testutil  # noqa: F401 - puts python/ on sys.path
from roastop_fakes import Events, Factory

from roastop import track_bytes, track_memory, track_time
from roastop.instrumentation import cpu_wait_seconds, process_memory_mb


class P:
    pass


def tracked():
    p = P()
    p._roastcoffea_current_chunk = {"timing": {}, "memory": {}, "bytes": {}}
    return p


def test_track_time_fills_timing():
    p = tracked()
    with track_time(p, "sleep"):
        time.sleep(0.02)
    assert 0.015 < p._roastcoffea_current_chunk["timing"]["sleep"] < 1


def test_track_time_records_even_when_the_block_raises():
    p = tracked()
    with pytest.raises(ValueError):
        with track_time(p, "bad"):
            raise ValueError
    assert "bad" in p._roastcoffea_current_chunk["timing"]


def test_track_memory_fills_memory():
    if process_memory_mb() is None:
        pytest.skip("no /proc/self/statm")
    p = tracked()
    # a fresh anonymous mapping: a bytearray may reuse heap pages already
    # resident (glibc raises its mmap threshold after a big free), and then
    # RSS does not grow
    with track_memory(p, "alloc"):
        block = mmap.mmap(-1, 64 * 1024 * 1024)
        for off in range(0, len(block), 4096):
            block[off] = 1
    assert p._roastcoffea_current_chunk["memory"]["alloc"] > 30
    block.close()


def test_memory_left_out_when_unreadable(monkeypatch):
    import roastop.instrumentation as ins
    monkeypatch.setattr(ins, "process_memory_mb", lambda: None)
    p = tracked()
    with track_memory(p, "x"):
        pass
    assert p._roastcoffea_current_chunk["memory"] == {}


def test_process_memory_reads_fresh_through_one_descriptor():
    """pread at offset 0 of the descriptor kept open reads the file afresh:
    RSS grows with a mapping touched page by page, through the same fd."""
    from roastop._state import shared
    before = process_memory_mb()
    if before is None:
        pytest.skip("no /proc/self/statm")
    fd = shared("statm", list)[1]
    block = mmap.mmap(-1, 64 * 1024 * 1024)
    for off in range(0, len(block), 4096):
        block[off] = 1
    grown = process_memory_mb()
    block.close()
    assert grown - before > 30 and shared("statm", list)[1] == fd
    assert process_memory_mb() < grown - 30            # and falls back after the unmap


def test_process_memory_falls_back_when_pread_fails(monkeypatch):
    """A descriptor closed under it (a daemon closing every fd): the file is
    read the old way, then opened afresh."""
    from roastop._state import shared
    if process_memory_mb() is None:
        pytest.skip("no /proc/self/statm")
    statm = shared("statm", list)
    os.close(statm[1])
    mb = process_memory_mb()
    assert mb is not None and statm == [None, None]
    assert abs(process_memory_mb() - mb) < 5 and statm[1] is not None
    monkeypatch.delattr(os, "pread")                      # a platform without pread
    assert abs(process_memory_mb() - mb) < 5


def test_process_memory_is_rss_in_mib():
    mb = process_memory_mb()
    if mb is None:
        pytest.skip("no /proc/self/statm")
    with open("/proc/self/status") as f:
        rss_kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    assert abs(mb - rss_kb / 1024) < 5


def test_track_bytes_fills_bytes():
    p, factory = tracked(), Factory()
    events = Events(3, factory)
    with track_bytes(p, events, "muons"):
        factory.read("Muon_pt", 4096)
    assert p._roastcoffea_current_chunk["bytes"] == {"muons": 4096}


def test_track_bytes_without_source_leaves_it_out():
    p = tracked()
    with track_bytes(p, Events(3), "x"):
        pass
    assert p._roastcoffea_current_chunk["bytes"] == {}


def test_no_ops_without_a_tracked_chunk():
    p = P()
    with track_time(p, "a"), track_memory(p, "b"), track_bytes(p, Events(1, Factory()), "c"):
        pass
    assert not hasattr(p, "_roastcoffea_current_chunk")
    with track_time(None, "a"):
        pass


def test_missing_section_dict_is_created():
    p = P()
    p._roastcoffea_current_chunk = {}
    with track_time(p, "a"):
        pass
    assert "a" in p._roastcoffea_current_chunk["timing"]


def test_cpu_wait_is_the_threads_own_and_not_a_sleep():
    """The run delay of the calling thread: it does not grow while the thread
    sleeps (a sleeping thread waits for no CPU), never goes back, and each
    thread reads its own (a new thread starts near 0)."""
    first = cpu_wait_seconds()
    if first is None:
        pytest.skip("this kernel has no /proc/thread-self/schedstat")
    time.sleep(0.2)
    after = cpu_wait_seconds()
    assert first <= after < first + 0.1
    seen = []
    t = threading.Thread(target=lambda: seen.append(cpu_wait_seconds()))
    t.start()
    t.join()
    assert seen and 0 <= seen[0] < 0.5
