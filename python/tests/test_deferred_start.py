"""The deferred chunk_start (issue 23; docs/protocol.md "chunk_start"): with a
heartbeat, the decorator leaves a chunk's start pending and the heartbeat
sends it at its next beat, unless the chunk ended first. A start is sent
before its chunk or never, the chunk carries start_seq exactly when it was
sent, and a long chunk is announced once with its own t_start. Each test
waits for a state, never a fixed time."""
import sys
import threading
import time

import pytest
from roastop_testutil import KEY, addr_of, fresh_process_state, receive, sink  # noqa: F401
from roastop_fakes import Events

from roastop import track_metrics
from roastop import emitter as em
from roastop.emitter import Emitter, Heartbeat

DEADLINE = 60.0
META = dict(dataset="DY", filename="f.root", entrystart=0, entrystop=10, uuid="u")


def drain(sock, until):
    """Messages arriving on sock until until(messages) holds (DEADLINE)."""
    out, end = [], time.monotonic() + DEADLINE
    while not until(out):
        assert time.monotonic() < end, out
        try:
            out.append(receive(sock))
        except OSError:
            pass
    return out


def processor(sink, body):
    class Proc:
        @track_metrics
        def process(self, events):
            return body(self, events)

    p = Proc()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), "r"
    return p


def check_order(msgs):
    """Every start arrived before the chunk with its t_start, which carries
    its seq; every chunk with start_seq came after that start. The number
    of starts."""
    starts, seen = {}, set()
    for m in msgs:
        if m["type"] == "chunk_start":
            assert m["t_start"] not in seen, ("a start after its chunk", m)
            starts[m["t_start"]] = m
        elif m["type"] == "chunk":
            seen.add(m["t_start"])
            start = starts.get(m["t_start"])
            if start is None:
                assert "start_seq" not in m, m
            else:
                assert m["start_seq"] == start["seq"] < m["seq"], (start, m)
                for name in ("entry_start", "entry_stop", "file", "run_id", "host", "pid"):
                    assert start[name] == m[name], name
    return len(starts)


def test_a_chunk_shorter_than_a_beat_sends_no_start(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "1")
    p = processor(sink, lambda self, events: len(events))
    e = em.emitter_for(addr_of(sink), KEY.hex())
    e._beat = Heartbeat(e, interval=3600)          # its one beat at once, then none
    drain(sink, lambda out: any(m["type"] == "heartbeat" for m in out))
    assert p.process(Events(10, **META)) == 10
    chunk, = drain(sink, lambda out: out and out[-1]["type"] == "chunk")
    assert "start_seq" not in chunk and chunk["seq"] == 1 and not e._beat.pending
    assert e._beat.in_flight == 0 and e.lost == 0     # seq 0 was the heartbeat
    e._beat.stop()


def test_a_start_is_sent_before_its_end_or_never(sink):
    """The end waits while the beat sends the start; a start pending at the
    end is dropped, never sent afterwards."""
    e = Emitter(addr_of(sink), KEY, heartbeat=True)
    beat = e._beat = Heartbeat(e, interval=3600)
    drain(sink, lambda out: any(m["type"] == "heartbeat" for m in out))
    sending, go, real = threading.Event(), threading.Event(), e.send_chunk_start

    def slow(*args):
        sending.set()
        assert go.wait(DEADLINE)
        return real(*args)
    e.send_chunk_start = slow
    start = e.chunk_begin(1767225595.25, None, 0, 10, "w1")
    announcing = threading.Thread(target=beat.announce)
    announcing.start()
    assert sending.wait(DEADLINE)
    ended = []
    ending = threading.Thread(target=lambda: ended.append(e.chunk_end(start)))
    ending.start()
    ending.join(0.3)
    assert ending.is_alive() and not ended      # held until the start is out
    go.set()
    announcing.join(DEADLINE)
    ending.join(DEADLINE)
    msg, = drain(sink, lambda out: out)
    assert msg["type"] == "chunk_start" and msg["t_start"] == 1767225595.25
    assert ended == [msg["seq"]] and beat.in_flight == 0 and not beat.pending
    # ended first: nothing to send, ever
    e.send_chunk_start = real
    start = e.chunk_begin(1767225596.5, None, 10, 20, "w1")
    assert e.chunk_end(start) is None
    beat.announce()
    assert not beat.pending and next(e._seq) == 2    # the heartbeat and the one start
    beat.stop()


def test_chunks_ending_while_the_beat_announces(sink, monkeypatch):
    """Hundreds of chunks through the decorator while another thread
    announces without pause: each start precedes its chunk, and start_seq
    is on a chunk exactly when its start was sent, whichever side of the
    race each chunk took."""
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "1")

    def body(self, events):
        time.sleep(0)                   # lets the announcing thread in, mid-chunk
        return len(events)
    p = processor(sink, body)
    e = em.emitter_for(addr_of(sink), KEY.hex())
    beat = e._beat = Heartbeat(e, interval=3600)
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            beat.announce()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    t = threading.Thread(target=hammer)
    t.start()
    try:
        n = 400
        for i in range(n):
            p.process(Events(10, **dict(META, entrystart=10 * i, entrystop=10 * i + 10)))
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    msgs = drain(sink, lambda out: sum(m["type"] == "chunk" for m in out) == n)
    starts = check_order(msgs)
    with_seq = sum("start_seq" in m for m in msgs if m["type"] == "chunk")
    print(f"{starts} of {n} chunks announced")
    # how the chunks split between the two sides is the scheduler's (a loaded CI
    # machine gave 400 of 400): each side alone is forced in the test above
    assert starts == with_seq
    assert e.lost == 0 and not beat.pending and beat.in_flight == 0
    beat.stop()


def test_a_chunk_longer_than_two_beats_is_announced_once(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "1")

    def long_body(self, events):
        beat = em.emitter_for(addr_of(sink), KEY.hex())._beat
        first, end = beat.beats, time.monotonic() + DEADLINE
        while beat.beats < first + 3 and time.monotonic() < end:   # two whole beats
            time.sleep(0.02)
        return len(events)
    p = processor(sink, long_body)
    before = time.time()
    assert p.process(Events(10, **META)) == 10
    msgs = drain(sink, lambda out: out and out[-1]["type"] == "chunk")
    chunk = msgs[-1]
    starts = [m for m in msgs if m["type"] == "chunk_start"]
    assert check_order(msgs) == 1 and len(starts) == 1, msgs
    assert starts[0]["t_start"] == chunk["t_start"] and before <= chunk["t_start"]
    assert starts[0]["sent"] - chunk["t_start"] < chunk["duration"]
    assert sum(m["type"] == "heartbeat" for m in msgs) >= 3
    em.emitter_for(addr_of(sink), KEY.hex())._beat.stop()


@pytest.mark.parametrize("env", [{"ROASTOP_HEARTBEAT": "0"},
                                 {"ROASTOP_HEARTBEAT": "1", "ROASTOP_CHUNK_START": "0"}])
def test_without_a_heartbeat_the_start_goes_first_and_off_means_none(sink, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    p = processor(sink, lambda self, events: len(events))
    p.process(Events(10, **META))
    msgs = drain(sink, lambda out: out and out[-1]["type"] == "chunk")
    starts = [m for m in msgs if m["type"] == "chunk_start"]
    if env["ROASTOP_HEARTBEAT"] == "0":            # today's synchronous start
        assert len(starts) == 1 and msgs[-1]["start_seq"] == starts[0]["seq"]
    else:
        assert not starts and "start_seq" not in msgs[-1]
        em.emitter_for(addr_of(sink), KEY.hex())._beat.stop()
