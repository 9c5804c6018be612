"""The per-process heartbeat (issue 20 item 4, docs/protocol.md "heartbeat"):
started on the first chunk, one a second, chunks in flight counted, the
switch, stopped on demand, a forked child starting its own. Each test waits
for a state (a datagram, a thread's end), never a fixed time."""
import os
import time

import pytest
from roastop_testutil import KEY, addr_of, nothing_arrives, receive, fresh_process_state, sink  # noqa: F401

from roastop.emitter import Emitter, parse_heartbeat

DEADLINE = 60.0


def beats(sock, n):
    """The next n heartbeats arriving on sock (other messages skipped)."""
    out, end = [], time.monotonic() + DEADLINE
    while len(out) < n and time.monotonic() < end:
        try:
            msg = receive(sock)
        except OSError:
            continue
        if msg["type"] == "heartbeat":
            out.append(msg)
    assert len(out) == n, out
    return out


def test_switch(monkeypatch):
    monkeypatch.delenv("ROASTOP_HEARTBEAT", raising=False)
    assert parse_heartbeat() is True
    for off in ("0", "off", "False", " no "):
        monkeypatch.setenv("ROASTOP_HEARTBEAT", off)
        assert parse_heartbeat() is False
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "1")
    assert parse_heartbeat() is True and parse_heartbeat(False) is False


def test_off_sends_nothing(sink):
    e = Emitter(addr_of(sink), KEY, heartbeat=False)
    assert e.chunk_began() is None
    assert nothing_arrives(sink, 1.5)


def test_starts_on_first_chunk_and_beats(sink):
    e = Emitter(addr_of(sink), KEY, heartbeat=True)
    assert e._beat is None and nothing_arrives(sink, 0.3)   # nothing before a chunk
    beat = e.chunk_began(worker="w-1")
    assert e.chunk_began() is beat                           # one thread per process
    first, second = beats(sink, 2)
    for msg in (first, second):
        assert msg["pid"] == os.getpid() and msg["host"] and msg["worker"] == "w-1"
        assert msg["interval"] == 1.0 and msg["cpu_time"] > 0
        assert 10 << 20 < msg["rss_bytes"] < 4 << 30
    assert second["seq"] > first["seq"] and second["sent"] >= first["sent"] + 0.5
    assert second["chunks_in_flight"] == 2      # the first may precede the count
    beat.add(-2)
    while beats(sink, 1)[0]["chunks_in_flight"] != 0:
        pass
    beat.stop()
    assert not beat.alive()
    sink.settimeout(2)
    while not nothing_arrives(sink, 1.5):      # what was in the buffer, then silence
        pass


def test_fork_starts_its_own(sink):
    e = Emitter(addr_of(sink), KEY, heartbeat=True)
    parent = e.chunk_began()
    beats(sink, 1)
    pid = os.fork()
    if pid == 0:                                 # the child: no thread inherited
        code = 1
        try:
            child = e.chunk_began()
            code = 0 if child is not parent and child.pid == os.getpid() else 2
            end = time.monotonic() + DEADLINE
            while child.beats < 2 and time.monotonic() < end:
                time.sleep(0.05)
            child.stop()
        finally:
            os._exit(code)
    pids = set()
    end = time.monotonic() + DEADLINE
    while pid not in pids and time.monotonic() < end:
        pids.add(beats(sink, 1)[0]["pid"])
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert pids >= {pid} and parent.alive()
    parent.stop()


def test_decorator_counts_in_flight(sink, monkeypatch):
    from roastop import track_metrics
    from roastop.decorator import FLAG
    seen = []

    class Proc:
        _roastop_addr = addr_of(sink)
        _roastop_key = KEY

        @track_metrics
        def process(self, events):
            e = __import__("roastop.emitter", fromlist=["x"]).emitter_for(self._roastop_addr,
                                                                        self._roastop_key)
            seen.append(e._beat.in_flight)
            return 1

    monkeypatch.setenv("ROASTOP_HEARTBEAT", "1")
    p = Proc()
    setattr(p, FLAG, True)
    assert p.process([]) == 1
    assert seen == [1]
    from roastop.emitter import emitter_for
    beat = emitter_for(addr_of(sink), KEY)._beat
    assert beat.in_flight == 0 and beat.alive()
    assert beats(sink, 1)[0]["chunks_in_flight"] == 0
    beat.stop()


def test_threads_share_one_beat(sink):
    import threading
    e = Emitter(addr_of(sink), KEY, heartbeat=True)
    got, go = [], threading.Barrier(8)

    def first_chunk():
        go.wait()
        got.append(e.chunk_began())
    threads = [threading.Thread(target=first_chunk) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(b) for b in got}) == 1 and got[0].in_flight == 8
    got[0].stop()


def test_heartbeat_datagram(sink):
    """Kind 3, every field of the heartbeat's table."""
    e = Emitter(addr_of(sink), KEY, heartbeat=True)
    beat = e.chunk_began(worker="w-7")
    data = sink.recv(70000)
    beat.stop()
    from roastop_testutil import split_datagram
    msg = split_datagram(data)
    assert data[:4] == b"RTP2" and msg["type"] == "heartbeat" and msg["worker"] == "w-7"
    assert msg["pid"] == os.getpid() and msg["interval"] == 1.0
    assert isinstance(msg["chunks_in_flight"], int) and msg["rss_bytes"] > 10 << 20
    assert set(msg) == {"type", "host", "pid", "instance", "seq", "sent", "cpu_time",
                        "chunks_in_flight", "interval", "rss_bytes", "worker"}
    while not nothing_arrives(sink, 1.5):
        pass


def test_beat_and_chunk_threads_share_one_sender(sink):
    """A process's first chunk starts the heartbeat thread, which sends at
    once: its first send and the chunk's meet in the emitter's set-up. One
    of them makes the process's numbers and socket, so both threads send as
    one sender (one instance, one socket, no seq twice)."""
    import sys
    import threading
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as CPython will
    try:
        for _ in range(300):
            e = Emitter(addr_of(sink), KEY, heartbeat=False)
            got = []
            t = threading.Thread(target=lambda: got.append((e._socket(), e._instance)))
            t.start()
            mine = (e._socket(), e._instance)
            t.join()
            assert got == [mine], (got, mine)
            e._sock.close()
    finally:
        sys.setswitchinterval(old)
