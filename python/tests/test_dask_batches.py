"""The Dask path's batches (docs/protocol.md, "The Dask path"): a worker
process's datagrams go to the scheduler as one event of many, every
DASK_FLUSH_INTERVAL or when a batch reaches a bound, in order, at a run's
end and at the worker's close; what cannot be sent is counted lost; the
chunk's thread never waits for a send. The route unpacks a batch into the
same payloads one event each made."""
import asyncio
import base64
import threading
from collections import deque

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, split_datagram, fresh_process_state, sink)
from test_transport import Worker, chunk, datagrams, worker  # noqa: F401 - a fixture

from roastop import collector, route, transport
from roastop.emitter import Emitter, emitter_for
from roastop.transport import DATAGRAM_TOPIC, _parts, flush_dask_all


def dask_emitter(sink):
    e = Emitter(addr_of(sink), KEY, chunk_start=False, transport="dask")
    return e


def seqs(w):
    return [split_datagram(d)["seq"] for d in datagrams(w)]


def test_a_batch_that_reaches_its_count_goes_from_the_chunks_thread(sink, worker, monkeypatch):
    monkeypatch.setattr(transport, "DASK_BATCH_COUNT", 3)
    e = dask_emitter(sink)
    for n in range(7):
        assert chunk(e, n)
    # the 3rd and the 6th filled a batch: sent then, the 7th waits
    assert [len(batch) for _, (_, batch) in worker.logged] == [3, 3]
    assert e.flush_dask() == 1
    assert [len(batch) for _, (_, batch) in worker.logged] == [3, 3, 1]
    assert seqs(worker) == list(range(7))                 # in order, none twice
    assert e.sent == e.sent_dask == 7 and e.batches_dask == 3 and e.lost == 0
    assert e.flush_dask() == 0 and len(worker.logged) == 3   # nothing left: no empty event


def dask_emitter_with_a_chunk(sink, worker):
    """An emitter on the Dask path of a worker whose loop runs a callback at
    once, one chunk pending: its flush plugin is in worker.plugins."""
    worker.plugins = {}
    worker.loop = type("Loop", (), {"add_callback": staticmethod(lambda f, *a: f(*a))})()
    e = emitter_for(addr_of(sink), KEY)
    e.chunk_start = False
    e.transport = "dask"
    chunk(e, 1)
    return e


def test_a_tasks_end_sends_a_batch_old_enough_in_its_message(sink, worker, monkeypatch):
    """The worker calls the plugin's transition hook on its loop as a task
    leaves "executing", in the turn that queues the task-finished message:
    a batch DASK_CHUNK_FLUSH old goes then; a younger one, or another
    transition, leaves it for the flusher."""
    e = dask_emitter_with_a_chunk(sink, worker)
    hook = worker.plugins[transport.DASK_FLUSH_PLUGIN]
    hook.transition("task-1", "executing", "memory")
    assert not worker.logged                                  # younger than 3600 s
    monkeypatch.setattr(transport, "DASK_CHUNK_FLUSH", 0.0)
    hook.transition("task-2", "waiting", "ready")
    assert not worker.logged                                  # no task's end
    chunk(e, 2)
    assert not worker.logged                                  # the chunk's thread leaves it
    hook.transition("task-2", "executing", "memory")
    assert [len(batch) for _, (_, batch) in worker.logged] == [2]
    assert seqs(worker) == [0, 1]


def test_parts_bound_count_and_bytes():
    batch = [b"a" * 10, b"b" * 10, b"c" * 25, b"d" * 5, b"e" * 40, b"f"]
    parts = list(_parts(batch, 3, 30))
    assert parts == [[b"a" * 10, b"b" * 10], [b"c" * 25, b"d" * 5], [b"e" * 40], [b"f"]]
    assert [d for p in parts for d in p] == batch         # in order, nothing left out
    assert list(_parts(batch, 2, 1000)) == [batch[0:2], batch[2:4], batch[4:6]]
    assert list(_parts([], 3, 30)) == []


def test_one_event_holds_at_most_the_byte_bound(sink, worker, monkeypatch):
    monkeypatch.setattr(transport, "DASK_BATCH_BYTES", 600)
    e = dask_emitter(sink)
    for n in range(6):
        chunk(e, n)
    e.flush_dask()
    sizes = [sum(map(len, batch)) for _, (_, batch) in worker.logged]
    assert len(sizes) >= 2 and max(sizes) <= 600
    assert seqs(worker) == list(range(6))


def test_the_flusher_sends_within_its_interval(sink, worker, monkeypatch):
    monkeypatch.setattr(transport, "DASK_FLUSH_INTERVAL", 0.05)
    e = dask_emitter(sink)
    chunk(e, 1)
    chunk(e, 2)
    done = threading.Event()
    worker.log_event = lambda topic, msg: (Worker.log_event(worker, topic, msg), done.set())
    assert done.wait(10), "the flusher sent nothing"
    assert seqs(worker) == [0, 1] and len(worker.logged) == 1
    assert e._flusher._thread.name == "roastop-dask-flush"
    assert e._flusher.step == pytest.approx(0.01)              # it looks 5 times an interval
    e._flusher.stop()
    assert not e._flusher._thread.is_alive()


def test_a_batch_that_cannot_be_sent_is_counted_lost(sink, worker):
    e = dask_emitter(sink)

    def refuse(topic, msg):
        raise RuntimeError("Event loop is closed")
    worker.log_event = refuse
    chunk(e, 1)
    chunk(e, 2)
    assert e.flush_dask() == 0
    assert e.lost == 2 and e.sent == 0 and e.sent_dask == 0


def test_a_closed_worker_takes_nothing_and_it_is_counted(sink, worker):
    class Closed:
        name = "closed"
    e = dask_emitter(sink)
    chunk(e, 1)
    worker.status = Closed()
    assert e.flush_dask() == 0 and e.lost == 1 and not worker.logged


def test_the_chunks_thread_never_waits_for_a_send(sink, worker, monkeypatch):
    """Another thread is sending (it holds the send lock, as a flusher inside
    log_event would): a chunk that fills a batch is still queued at once,
    and past DASK_PENDING batches' worth it is counted lost, not waited for."""
    monkeypatch.setattr(transport, "DASK_BATCH_COUNT", 2)
    monkeypatch.setattr(transport, "DASK_PENDING", 2)
    e = dask_emitter(sink)
    chunk(e, 0)                                   # the path is chosen, the locks made
    e._send_lock.acquire()
    results = []
    t = threading.Thread(target=lambda: results.extend(chunk(e, n) for n in range(1, 6)))
    t.start()
    t.join(10)
    assert not t.is_alive(), "a chunk waited for the send"
    assert results == [True, True, True, False, False]   # 4 held at most (2 batches of 2)
    assert e.lost == 2 and not worker.logged
    e._send_lock.release()
    assert e.flush_dask() == 4 and seqs(worker) == [0, 1, 2, 3]


def test_the_workers_close_sends_the_rest(sink, worker):
    """close_flush adds an entry to the worker's plugins on its loop, whose
    teardown (Worker.close) sends what is pending."""
    dask_emitter_with_a_chunk(sink, worker)
    plugin = worker.plugins[transport.DASK_FLUSH_PLUGIN]
    assert not worker.logged
    plugin.teardown(worker=worker)
    assert seqs(worker) == [0]


def test_run_end_sends_each_workers_batch_before_it_answers(sink, worker):
    """The collector's run end on a worker: the batches go, the worker's
    stream is waited for, then its heartbeat."""
    class Stream:
        buffer = []
    calls = []

    async def heartbeat():
        calls.append(("heartbeat", len(worker.logged)))
    worker.batched_stream, worker.heartbeat = Stream(), heartbeat
    e = emitter_for(addr_of(sink), KEY)
    e.chunk_start = False
    e.transport = "dask"
    chunk(e, 1)
    chunk(e, 2)
    asyncio.run(collector._run_end_on_worker(worker))
    assert seqs(worker) == [0, 1] and calls == [("heartbeat", 1)]
    assert flush_dask_all() == 0


# ---- the route's buffer ----------------------------------------------------

def test_the_route_keeps_a_batch_as_the_payloads_of_single_events():
    one, batched = route.DatagramBuffer(), route.DatagramBuffer()
    data = [b"first", b"second", b"third"]
    for d in data:
        one.log_event(DATAGRAM_TOPIC, [8790, d])           # an emitter before batches
    batched.log_event(DATAGRAM_TOPIC, [8790, data])
    a, b = one.answer(None, 0.0), batched.answer(None, 0.0)
    assert a["datagrams"] == b["datagrams"]
    assert [base64.b64decode(p) for _, p in b["datagrams"]] == data
    assert batched.index == 3 and batched.held == sum(map(len, data)) and batched.refused == 0


def test_the_route_refuses_what_in_a_batch_is_no_datagram():
    buf = route.DatagramBuffer()
    buf.log_event(DATAGRAM_TOPIC, [8790, [b"ok", b"", "text", b"x" * (route.DATAGRAM_MAX + 1),
                                          None, b"ok2"]])
    assert [p for _, _, p in buf.buffer] == [b"ok", b"ok2"] and buf.refused == 4
    buf.log_event(DATAGRAM_TOPIC, [8790, []])               # an empty batch
    buf.log_event(DATAGRAM_TOPIC, [None, [b"a", b"b"]])     # no port: each counted
    assert buf.refused == 7 and buf.index == 2


def test_the_route_bounds_hold_across_a_batch():
    buf = route.DatagramBuffer(held_max=2, bytes_max=100)
    buf.log_event(DATAGRAM_TOPIC, [8790, [b"1", b"2", b"3"]])
    assert [p for _, _, p in buf.buffer] == [b"2", b"3"] and buf.dropped == 1
    assert buf.index == 3


def test_an_earlier_installs_plugin_is_replaced_and_its_payloads_kept():
    class Old:                                  # a plugin of a route before batches
        name = route.DATAGRAMS_PLUGIN

        def __init__(self):
            self.buffer, self.index, self.held = deque([(0.0, 8790, b"kept")]), 1, 4
            self.dropped = self.refused = 0
    new = route.DatagramBuffer()
    new.adopt(Old())
    new.log_event(DATAGRAM_TOPIC, [8790, [b"a", b"b"]])
    assert [p for _, _, p in new.buffer] == [b"kept", b"a", b"b"] and new.index == 3


@pytest.mark.parametrize("bad", [{"a": 1}, [8790, 5], [8790, b"abc", 1]])
def test_the_route_counts_one_refusal_for_an_event_that_is_no_batch(bad):
    buf = route.DatagramBuffer()
    buf.log_event(DATAGRAM_TOPIC, bad)
    assert buf.refused == 1 and buf.index == 0
