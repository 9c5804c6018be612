"""@track_metrics on a fake processor: the exact chunk record, the error
path, and silence when collection is off."""
import math
import os
import pickle
import sys
import types

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, check_start_of, nothing_arrives, receive, receive_chunk, fresh_process_state,
    sink)
from roastop_fakes import Events, Factory

from roastop import track_bytes, track_memory, track_metrics, track_time
from roastop.instrumentation import cpu_wait_seconds, process_memory_mb

MEM = process_memory_mb() is not None
WAIT_FIELDS = {"cpu_wait"} if cpu_wait_seconds() is not None else set()
MEM_FIELDS = {"mem_before_mb", "mem_after_mb", "mem_delta_mb"} if MEM else set()
ENVELOPE = {"host", "pid", "instance", "seq", "sent"}
BASE = {"type", "run_id", "t_start", "t_end", "duration", "timestamp", "cpu_time",
        "start_seq"} | ENVELOPE


class Failure(Exception):
    pass


class Proc:
    @track_metrics
    def process(self, events):
        factory = events.attrs.get("@events_factory")
        if not isinstance(factory, Factory):
            factory = None
        with track_time(self, "select"):
            sum(range(20000))
        with track_memory(self, "fill"):
            pass
        with track_bytes(self, events, "muons"):
            if factory is not None:
                factory.read("nMuon", 120)
                factory.read("Muon_pt", 350)
        if events.metadata.get("fail"):
            raise Failure("boom")
        if events.metadata.get("interrupt"):
            raise KeyboardInterrupt
        return {"n": len(events)}


def collecting(sink, cls=Proc, run_id="run-1"):
    p = cls()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), run_id
    return p


META = dict(dataset="ttbar", filename="root://eos//f.root", entrystart=100, entrystop=1334,
            uuid="u-1")


def test_plain_events_exact_fields(sink):
    p = collecting(sink)
    out = p.process(Events(1234, **META))
    assert out == {"n": 1234}                       # nothing injected into the output
    rec = receive_chunk(sink)
    expected = BASE | MEM_FIELDS | WAIT_FIELDS | {
        "num_events", "dataset", "file", "uuid", "entry_start", "entry_stop", "timing"}
    expected |= {"memory"} if MEM else set()
    assert set(rec) == expected
    assert rec["type"] == "chunk" and rec["run_id"] == "run-1"
    assert rec["num_events"] == 1234 and rec["dataset"] == "ttbar"
    assert rec["file"] == "root://eos//f.root" and rec["uuid"] == "u-1"
    assert (rec["entry_start"], rec["entry_stop"]) == (100, 1334)
    assert math.isclose(rec["duration"], rec["t_end"] - rec["t_start"])
    assert rec["t_start"] <= rec["t_end"] <= rec["timestamp"]
    assert 0 <= rec["cpu_time"] <= rec["duration"] + 0.01
    if WAIT_FIELDS:
        assert 0 <= rec["cpu_wait"] <= rec["duration"] + 0.01
    assert 0 < rec["timing"]["select"] <= rec["duration"]
    if MEM:
        assert rec["mem_before_mb"] > 0 and set(rec["memory"]) == {"fill"}
        assert math.isclose(rec["mem_delta_mb"], rec["mem_after_mb"] - rec["mem_before_mb"])
    assert not hasattr(p, "_roastcoffea_current_chunk")
    assert nothing_arrives(sink)


def test_file_events_exact_fields_and_file_metadata_once(sink):
    p = collecting(sink)
    factory = Factory()
    p.process(Events(10, factory, **META))
    rec = receive_chunk(sink)
    expected = BASE | MEM_FIELDS | WAIT_FIELDS | {
        "num_events", "dataset", "file", "uuid", "entry_start", "entry_stop", "timing",
        "bytes", "bytes_read", "accessed_branches", "num_branches_accessed",
        "accessed_bytes", "accessed_uncompressed_bytes", "branches_read_percent",
        "bytes_read_percent", "file_metadata"} | ({"memory"} if MEM else set())
    assert set(rec) == expected
    assert rec["bytes_read"] == 470 and rec["bytes"] == {"muons": 470}
    assert rec["accessed_branches"] == ["Muon_pt", "nMuon"]
    assert rec["num_branches_accessed"] == 2
    assert rec["accessed_bytes"] == 400 and rec["accessed_uncompressed_bytes"] == 1300
    assert math.isclose(rec["branches_read_percent"], 200 / 3)
    assert math.isclose(rec["bytes_read_percent"], 40.0)
    assert rec["file_metadata"] == {"filename": "root://eos//f.root",
                                    "compression_ratio": 1000 / 3000,
                                    "total_branches": 3, "total_tree_bytes": 1000}
    # the same file again: no file_metadata; another file: file_metadata again
    p.process(Events(10, Factory(), **META))
    assert "file_metadata" not in receive_chunk(sink)
    p.process(Events(10, Factory(), **dict(META, filename="g.root")))
    assert receive_chunk(sink)["file_metadata"]["filename"] == "g.root"


def test_custom_treename(sink):
    p = collecting(sink)
    p.process(Events(10, Factory("Delphes"), **dict(META, treename="Delphes")))
    rec = receive_chunk(sink)
    assert rec["accessed_bytes"] == 400 and rec["file_metadata"]["total_branches"] == 3


def test_broken_factory_leaves_fields_out(sink):
    class NoHandle:
        file_handle = None
        access_log = []

    class Weird:
        def __getattr__(self, name):
            raise RuntimeError(name)

    p = collecting(sink)
    p.process(Events(3, NoHandle(), **META))
    rec = receive_chunk(sink)
    assert rec["accessed_branches"] == [] and rec["num_branches_accessed"] == 0
    assert "bytes_read" not in rec and "accessed_bytes" not in rec
    assert "file_metadata" not in rec
    p.process(Events(3, Weird(), **META))
    rec = receive_chunk(sink)
    assert not {"bytes_read", "accessed_branches", "file_metadata", "bytes"} & set(rec)

    class Bare:            # no len(), no metadata, no attrs
        pass

    class BareProc:
        @track_metrics
        def process(self, events):
            return 1

    assert collecting(sink, BareProc).process(Bare()) == 1
    rec = receive_chunk(sink)
    assert not {"num_events", "dataset", "file"} & set(rec)


def test_error_is_sent_and_reraised(sink):
    p = collecting(sink)
    with pytest.raises(Failure):
        p.process(Events(5, fail=True, **META))
    rec = receive_chunk(sink)
    assert rec["error"] == "Failure" and rec["num_events"] == 5 and "select" in rec["timing"]
    assert not hasattr(p, "_roastcoffea_current_chunk")
    with pytest.raises(KeyboardInterrupt):
        p.process(Events(5, interrupt=True))
    assert receive_chunk(sink)["error"] == "KeyboardInterrupt"
    p.process(Events(5))
    assert "error" not in receive_chunk(sink)


def test_flag_off_sends_nothing(sink):
    p = collecting(sink)
    p._roastcoffea_collect_metrics = False
    assert p.process(Events(3)) == {"n": 3}
    assert nothing_arrives(sink)
    q = Proc()                       # no flag at all
    q._roastop_addr, q._roastop_key = addr_of(sink), KEY.hex()
    assert q.process(Events(3)) == {"n": 3}
    assert nothing_arrives(sink)


def test_no_address_sends_nothing(sink, monkeypatch):
    monkeypatch.delenv("ROASTOP_ADDR", raising=False)
    p = Proc()
    p._roastcoffea_collect_metrics = True
    assert p.process(Events(3)) == {"n": 3}
    assert nothing_arrives(sink)


def test_environment_address(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_ADDR", addr_of(sink))
    monkeypatch.setenv("ROASTOP_KEY", KEY.hex())
    p = Proc()
    p._roastcoffea_collect_metrics = True
    p.process(Events(3))
    rec = receive_chunk(sink)
    assert rec["num_events"] == 3 and "run_id" not in rec


def test_bad_key_does_not_break_the_analysis(sink):
    p = collecting(sink)
    p._roastop_key = "zz"
    assert p.process(Events(3)) == {"n": 3}
    assert nothing_arrives(sink)


def test_worker_name(sink, monkeypatch):
    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: types.SimpleNamespace(name="worker-7")
    monkeypatch.setitem(sys.modules, "distributed", fake)
    p = collecting(sink)
    p.process(Events(3))
    assert receive_chunk(sink)["worker"] == "worker-7"

    def not_a_worker():
        raise ValueError("No worker found")

    fake.get_worker = not_a_worker
    p.process(Events(3))
    assert "worker" not in receive_chunk(sink)


def test_sequence_and_sender_over_chunks(sink):
    p = collecting(sink)
    for i in range(5):
        p.process(Events(i + 1))
    recs = [receive_chunk(sink) for _ in range(5)]     # each after its chunk_start
    assert [r["seq"] for r in recs] == [1, 3, 5, 7, 9]
    assert [r["start_seq"] for r in recs] == [0, 2, 4, 6, 8]
    assert {r["pid"] for r in recs} == {os.getpid()}


def test_processor_pickles_with_its_address(sink):
    p = collecting(sink)
    q = pickle.loads(pickle.dumps(p))
    q.process(Events(4))
    assert receive_chunk(sink)["run_id"] == "run-1"


def test_wraps_keeps_name_and_doc():
    assert Proc.process.__name__ == "process"
    assert Proc.process.__wrapped__ is not None


def test_threads_sharing_one_processor_keep_their_sections(sink):
    import threading

    class Shared:
        @track_metrics
        def process(self, events):
            name = events.metadata["dataset"]
            barrier.wait()                  # every thread is inside a chunk at once
            with track_time(self, name):
                pass
            barrier.wait()
            return name

    barrier = threading.Barrier(4)
    p = collecting(sink, Shared)
    threads = [threading.Thread(target=p.process, args=(Events(1, dataset="d%d" % i),))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    msgs = [receive(sink) for _ in range(8)]
    starts = {m["seq"]: m for m in msgs if m["type"] == "chunk_start"}
    recs = [m for m in msgs if m["type"] == "chunk"]
    assert len(starts) == 4 and len(recs) == 4
    for r in recs:                      # every start came before every end (the barrier)
        check_start_of(starts.pop(r["start_seq"]), r)
        assert r["seq"] > max(m["seq"] for m in msgs if m["type"] == "chunk_start")
    assert sorted(recs[i]["dataset"] for i in range(4)) == ["d0", "d1", "d2", "d3"]
    for r in recs:
        assert list(r["timing"]) == [r["dataset"]]
    assert len({r["seq"] for r in recs}) == 4
    assert not hasattr(p, "_roastcoffea_current_chunk")


def test_nested_decorated_calls(sink):
    class Outer:
        @track_metrics
        def process(self, events):
            with track_time(self, "outer"):
                self.inner(events)
            return 1

        @track_metrics
        def inner(self, events):
            with track_time(self, "inner"):
                pass

    p = collecting(sink, Outer)
    p.process(Events(2))
    # outer's start, inner's start, inner's chunk, outer's chunk
    outer_start, inner_start = receive(sink), receive(sink)
    inner, outer = receive(sink), receive(sink)
    check_start_of(inner_start, inner)
    check_start_of(outer_start, outer)
    assert [outer_start["seq"], inner_start["seq"], inner["seq"], outer["seq"]] == [0, 1, 2, 3]
    assert outer["t_start"] <= inner["t_start"] <= inner["t_end"] <= outer["t_end"]
    assert list(inner["timing"]) == ["inner"] and list(outer["timing"]) == ["outer"]
    assert not hasattr(p, "_roastcoffea_current_chunk")


def test_slots_processor_is_measured(sink):
    class Slotted:
        __slots__ = ("_roastcoffea_collect_metrics", "_roastop_addr", "_roastop_key")

        @track_metrics
        def process(self, events):
            with track_time(self, "t"):
                pass
            return len(events)

    p = Slotted()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key = addr_of(sink), KEY.hex()
    assert p.process(Events(3)) == 3
    rec = receive_chunk(sink)
    assert rec["num_events"] == 3 and "t" in rec["timing"]


class CountingTree:
    """A tree that counts how often its sizes are asked for: summing them
    walks every basket of a real file."""

    def __init__(self, tree, reads):
        self._tree, self._reads = tree, reads

    def __getattr__(self, name):
        if name in ("compressed_bytes", "uncompressed_bytes", "keys"):
            self._reads.append(name)
        return getattr(self._tree, name)

    def __getitem__(self, name):
        self._reads.append(name)
        return self._tree[name]


def counted_chunk(reads, **meta):
    """A fresh factory and tree for each chunk, as coffea opens the file
    afresh for each; its tree counts the reads of its sizes."""
    factory = Factory()
    handle = factory.file_handle
    handle.trees = {"Events": CountingTree(handle.trees["Events"], reads)}
    factory.read("nMuon", 120)
    factory.read("Muon_pt", 350)
    return Events(10, factory, **dict(META, **meta))


def test_tree_sizes_read_once_per_file_and_process(sink):
    """The tree's totals and a branch's sizes are read on the file's first
    chunk in the process; its later chunks carry the same figures."""
    p = collecting(sink)
    reads = []
    p.process(counted_chunk(reads, entrystart=0, entrystop=10))
    first = receive_chunk(sink)
    assert sorted(reads) == sorted(["keys", "compressed_bytes", "uncompressed_bytes",
                                    "nMuon", "Muon_pt"])
    reads.clear()
    for i in range(1, 4):
        p.process(counted_chunk(reads, entrystart=10 * i, entrystop=10 * i + 10))
        rec = receive_chunk(sink)
        assert rec["entry_start"] == 10 * i and "file_metadata" not in rec
        for key in ("accessed_branches", "num_branches_accessed", "accessed_bytes",
                    "accessed_uncompressed_bytes", "branches_read_percent",
                    "bytes_read_percent", "run_id", "dataset", "file", "uuid"):
            assert rec[key] == first[key], key
    assert reads == []
    # another file, or a new set of branches: read (and sent) again
    p.process(counted_chunk(reads, filename="g.root"))
    assert receive_chunk(sink)["file_metadata"]["filename"] == "g.root" and reads


def test_repeated_fields_reach_roastop(sink):
    """The fields a file's chunks repeat reach roastop with every chunk."""
    p = collecting(sink)
    recs = []
    for _ in range(2):
        p.process(counted_chunk([]))
        recs.append(receive_chunk(sink))
    for rec in recs:
        assert rec["run_id"] == "run-1" and rec["dataset"] == "ttbar"
        assert rec["file"] == "root://eos//f.root" and rec["uuid"] == "u-1"
        assert rec["accessed_branches"] == ["Muon_pt", "nMuon"]
        assert rec["accessed_bytes"] == 400 and rec["num_branches_accessed"] == 2


def test_a_file_rewritten_under_its_name_is_read_again(sink):
    """coffea's fileuuid is ROOT's own: another one under the same name is
    another file, whose sizes are read afresh."""
    p = collecting(sink)
    reads = []
    p.process(counted_chunk(reads, fileuuid="a"))
    receive_chunk(sink)
    reads.clear()
    p.process(counted_chunk(reads, fileuuid="b"))
    receive_chunk(sink)
    assert "compressed_bytes" in reads
