"""The Dask path of chunk datagrams (docs/protocol.md, "The Dask path"): the
emitter's choice of path per process, the same bytes on either path, a
process's batches of them, and the route's bounded buffer of what workers
logged."""
import asyncio
import base64
import sys
import threading
import time
import types

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, nothing_arrives, split_datagram, fresh_process_state, sink)
from test_collector_hello import Roastop

from roastop import collector, route, track_metrics, transport
from roastop_fakes import Events, Factory
from roastop.emitter import Emitter
from roastop.transport import DATAGRAM_TOPIC, flush_dask_all, parse_transport


class Worker:
    """A stand-in for distributed's Worker: what log_event was given."""

    def __init__(self):
        self.logged = []

    def log_event(self, topic, msg):
        self.logged.append((topic, msg))


def datagrams(w):
    """Every datagram the worker was given, in order, out of its events
    [port, [datagram, ...]]."""
    return [d for _, (_, batch) in w.logged for d in batch]


@pytest.fixture()
def worker(monkeypatch):
    """A process with a Dask worker running this thread's task: a stand-in
    distributed module whose get_worker answers. The batches go when a test
    says (no flusher round within a test)."""
    monkeypatch.setattr(transport, "DASK_FLUSH_INTERVAL", 3600.0)
    monkeypatch.setattr(transport, "DASK_CHUNK_FLUSH", 3600.0)
    w = Worker()
    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: w
    monkeypatch.setitem(sys.modules, "distributed", fake)
    return w


@pytest.fixture()
def no_worker(monkeypatch):
    """distributed imported, but no task of a worker on this thread."""
    fake = types.ModuleType("distributed")

    def get_worker():
        raise ValueError("No worker found")
    fake.get_worker = get_worker
    monkeypatch.setitem(sys.modules, "distributed", fake)


def chunk(e, n):
    e.chunk_begin(float(n))
    # measured: t_start, t_end, timestamp, cpu_time, mem_before_mb, mem_after_mb
    return e.send_chunk((float(n), n + 1.0, n + 1.0, 0.5, 100.0, 101.0),
                        {"dataset": "d", "num_events": n})


def test_parse_transport_defaults_to_auto(monkeypatch):
    monkeypatch.delenv("ROASTOP_TRANSPORT", raising=False)
    assert parse_transport() == "auto"
    for text, want in (("udp", "udp"), (" DASK ", "dask"), ("auto", "auto"), ("tcp", "auto")):
        monkeypatch.setenv("ROASTOP_TRANSPORT", text)
        assert parse_transport() == want
    assert parse_transport("udp") == "udp"


def test_outside_a_worker_udp_only_and_no_hello(sink, no_worker):
    e = Emitter(addr_of(sink), KEY, chunk_start=False, transport="dask")
    assert chunk(e, 1)
    assert e.path == "udp" and e.sent_dask == 0
    assert split_datagram(sink.recv(70000))["type"] == "chunk"


def test_auto_without_an_ack_takes_the_dask_path_with_the_same_bytes(sink, worker, monkeypatch):
    monkeypatch.delenv("ROASTOP_HELLO")         # the check is on
    # the sink answers no hello: as a firewall that drops the worker's UDP
    e = Emitter(addr_of(sink), KEY, chunk_start=False, transport="auto")
    assert chunk(e, 5) and chunk(e, 6)          # taken at once, while the hello waits
    assert e.path_chosen.wait(30)
    assert e.path == "dask" and not worker.logged and e.sent == 0   # batched, not sent yet
    assert e.flush_dask() == 2
    assert e.sent_dask == 2 and e.sent == 2 and e.batches_dask == 1
    assert split_datagram(sink.recv(70000))["type"] == "hello"   # the check, and nothing else
    assert nothing_arrives(sink)
    topics = {t for t, _ in worker.logged}
    assert topics == {DATAGRAM_TOPIC}
    port = sink.getsockname()[1]
    assert [m[0] for _, m in worker.logged] == [port]            # one event, for that roastop
    msgs = [split_datagram(d) for d in datagrams(worker)]        # framed and tagged as on UDP
    assert [m["type"] for m in msgs] == ["chunk", "chunk"]
    assert [m["seq"] for m in msgs] == [0, 1]                     # one sequence, as by UDP
    assert [m["num_events"] for m in msgs] == [5, 6]
    assert all(isinstance(d, bytes) for d in datagrams(worker))   # msgpack takes bytes


def test_the_chunk_never_waits_for_the_hello(sink, worker, monkeypatch):
    """The hello's wait is a thread's of its own: while it waits, chunks
    are taken at once and held in the batch, then go by the path chosen."""
    monkeypatch.delenv("ROASTOP_HELLO")
    answered, wait = threading.Event(), threading.Event()
    e = Emitter(addr_of(sink), KEY, chunk_start=False, transport="auto")
    e.hello = lambda: wait.wait() and answered.is_set()     # held until the test says
    assert chunk(e, 1) and chunk(e, 2)
    assert e.path == transport.CHECKING and not e.path_chosen.is_set()
    assert e.sent == 0 and len(e._batch) == 2 and nothing_arrives(sink)
    answered.set()
    wait.set()                                   # an ack came: UDP, the two sent now
    assert e.path_chosen.wait(30) and e.path == "udp" and not worker.logged
    assert [split_datagram(sink.recv(70000))["num_events"] for _ in range(2)] == [1, 2]


def test_auto_with_an_ack_stays_on_udp(worker, monkeypatch):
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "0")
    monkeypatch.delenv("ROASTOP_HELLO", raising=False)
    r = Roastop("ok")
    try:
        e = Emitter(r.addr, KEY, chunk_start=False, transport="auto")
        assert chunk(e, 3) and e.path_chosen.wait(30)
        assert e.path == "udp" and not worker.logged and e.sent_dask == 0
        assert e.sent == 1                # held while the hello waited, then sent by UDP
        deadline = time.monotonic() + 30
        while not any(m.get("type") == "chunk" for m in r.hellos) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [m["type"] for m in r.hellos] == ["hello", "chunk"]
    finally:
        r.stop = True
        r.thread.join()


def test_forced_paths(sink, worker):
    e = Emitter(addr_of(sink), KEY, chunk_start=False, transport="dask")
    assert chunk(e, 1) and e.flush_dask() == 1
    assert e.path == "dask" and len(worker.logged) == 1
    assert nothing_arrives(sink)                                  # no hello either
    u = Emitter(addr_of(sink), KEY, chunk_start=False, transport="udp")
    assert chunk(u, 1) and u.flush_dask() == 0
    assert u.path == "udp" and len(worker.logged) == 1
    assert split_datagram(sink.recv(70000))["type"] == "chunk"


def test_env_chooses_the_path(sink, worker, monkeypatch):
    monkeypatch.setenv("ROASTOP_TRANSPORT", "dask")
    e = Emitter(addr_of(sink), KEY, chunk_start=False)
    assert chunk(e, 1) and e.path == "dask"


def test_auto_without_hellos_stays_on_udp(sink, worker):
    e = Emitter(addr_of(sink), KEY, chunk_start=False)   # the sink sets ROASTOP_HELLO=0
    assert chunk(e, 1) and e.path == "udp" and not worker.logged
    assert split_datagram(sink.recv(70000))["type"] == "chunk"


# ---- the route's buffer ----------------------------------------------------

def logged(buf, *payloads):
    for p in payloads:
        buf.log_event(DATAGRAM_TOPIC, [8790, p])


def taken(answer):
    assert all(port == 8790 for port, _ in answer["datagrams"])
    return [base64.b64decode(p) for _, p in answer["datagrams"]]


def test_buffer_is_bounded_by_count_and_bytes():
    buf = route.DatagramBuffer(held_max=3, bytes_max=10)
    logged(buf, b"aaaa", b"bbbb")
    assert buf.held == 8 and buf.dropped == 0
    logged(buf, b"cccc")                          # 12 bytes > 10: the oldest goes
    assert [p for _, _, p in buf.buffer] == [b"bbbb", b"cccc"]
    assert buf.held == 8 and buf.dropped == 1
    logged(buf, b"d", b"e")                        # 4 payloads > 3: the oldest goes
    assert [p for _, _, p in buf.buffer] == [b"cccc", b"d", b"e"] and buf.dropped == 2
    assert buf.index == 5


def test_buffer_refuses_what_is_no_datagram_and_ignores_other_topics():
    buf = route.DatagramBuffer()
    for bad in ({"a": 1}, b"abc", [8790, b""], [8790, b"x" * (route.DATAGRAM_MAX + 1)],
                [0, b"abc"], [True, b"abc"], [8790, "abc"], [8790, b"abc", 1]):
        buf.log_event(DATAGRAM_TOPIC, bad)
    buf.log_event("other", [8790, b"abc"])
    assert buf.refused == 8 and buf.index == 0 and not buf.buffer


def test_readers_hold_their_own_cursor_and_count_what_they_missed(monkeypatch):
    monkeypatch.setattr(route, "DATAGRAMS_ANSWER", 2)
    buf = route.DatagramBuffer(held_max=4)
    logged(buf, b"1", b"2", b"3")
    a = buf.answer(None, 0.0)                      # a first ask: from the oldest held
    assert taken(a) == [b"1", b"2"]
    assert a["left"] == 1 and a["lost"] == 0
    cursor = "%s.%d" % (a["stream"], a["next"])
    b = buf.answer(None, 0.0)                      # another reader: nothing taken from it
    assert taken(b) == [b"1", b"2"]
    logged(buf, b"4", b"5", b"6", b"7")            # 7 logged, 4 held: "3" is gone
    c = buf.answer(cursor, 0.0)
    assert c["lost"] == 1 and taken(c) == [b"4", b"5"]
    assert c["left"] == 2 and c["next"] == 5
    d = buf.answer("%s.%d" % (c["stream"], c["next"]), 0.0)
    assert taken(d) == [b"6", b"7"] and d["left"] == 0
    e = buf.answer("ffff.3", 0.0)                  # another buffer's cursor: from the oldest
    assert e["lost"] == 0 and len(e["datagrams"]) == 2 and e["left"] == 2


def test_a_first_ask_takes_what_came_within_the_readers_age(monkeypatch):
    buf = route.DatagramBuffer()
    clock = [100.0]
    monkeypatch.setattr(route.time, "time", lambda: clock[0])
    logged(buf, b"old")                            # an earlier session's
    clock[0] = 200.0
    logged(buf, b"new1", b"new2")
    a = buf.answer(None, 205.0, within=10.0)       # a reader started 10 s ago
    assert taken(a) == [b"new1", b"new2"]
    assert a["lost"] == 0 and a["next"] == 3
    assert len(buf.answer(None, 205.0)["datagrams"]) == 3   # no age said: all held


class Proc:
    @track_metrics
    def process(self, events):
        return len(events)


def test_the_clients_transport_reaches_the_workers(sink, worker, monkeypatch):
    """MetricsCollector pickles the client's ROASTOP_TRANSPORT with the
    processor; a worker without its own takes it."""
    monkeypatch.delenv("ROASTOP_TRANSPORT", raising=False)
    p = Proc()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), "run-1"
    p._roastop_transport = "dask"
    assert p.process(Events(10, Factory(), dataset="DY", filename="f.root", entrystart=0,
                            entrystop=10, uuid="u")) == 10
    assert flush_dask_all() >= 1                  # as the collector's run end does
    assert [split_datagram(d)["type"] for d in datagrams(worker)][-1] == "chunk"
    assert nothing_arrives(sink)
