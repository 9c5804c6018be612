"""chunk_start (issue 19 item 2, docs/protocol.md "chunk_start"): the datagram
the decorator sends just before process() runs, decoded here field by field; the chunk's start_seq; the switch; failures."""
import os
import socket
import struct
import sys
import threading
import time
import types

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, V2_START_IDS, addr_of, check_start_of, decode_v2_body, nothing_arrives, receive,
    receive_chunk, split_datagram, split_v2, fresh_process_state, sink)
from roastop_fakes import Events, Factory

from roastop import track_metrics, track_time
from roastop import emitter as em
from roastop._state import shared
from roastop.emitter import Emitter
from roastop.wire import Static

T = 1767225595.1450303
FILE = "root://eos.example.org//store/DYJetsToLL_M-50/nano_0000.root"
STATIC = {"run_id": "5f0c2b9d", "dataset": "DYJetsToLL_M-50", "file": FILE, "uuid": "u-1"}
META = dict(dataset="DY", filename="f.root", entrystart=100, entrystop=1334, uuid="u-9")


@pytest.fixture(autouse=True)
def switch_unset(monkeypatch):
    monkeypatch.delenv("ROASTOP_CHUNK_START", raising=False)


def num(fid, value):
    return bytes([fid]) + struct.pack("<d", value)


def text(fid, value):
    data = value.encode()
    return bytes([fid]) + struct.pack("<H", len(data)) + data


def test_v2_bytes_field_by_field(sink):
    e = Emitter(addr_of(sink), KEY)
    static = Static(dict(STATIC))
    assert e.send_chunk_start(T, static, 0, 134190, "tcp://10.0.3.17:38211") == 0
    data = sink.recv(70000)
    assert data[:5] == b"RTP2\x01"                       # tagged, checked by hand below
    body = split_v2(data)[2]
    assert body[0] == 0x02                               # kind: chunk_start
    ids = []
    msg = decode_v2_body(body, ids)
    assert ids == [16, 64, 9, 14, 29, 26, 23, 66, 24, 65, 11, 12, 30]
    assert set(ids) <= V2_START_IDS
    assert msg == {"type": "chunk_start", "host": socket.gethostname(), "t_start": T,
                   "pid": os.getpid(), "instance": msg["instance"], "seq": 0,
                   "sent": msg["sent"], **STATIC, "entry_start": 0, "entry_stop": 134190,
                   "worker": "tcp://10.0.3.17:38211"}
    assert 1 <= msg["instance"] <= em.INSTANCE_MAX
    # the bytes themselves, from the table of docs/protocol.md
    expected = (b"\x02" + text(16, socket.gethostname()) + text(64, STATIC["run_id"])
                + text(9, STATIC["dataset"]) + text(14, FILE) + text(29, "u-1")
                + num(26, T) + num(23, os.getpid()) + num(66, msg["instance"]) + num(24, 0)
                + num(65, msg["sent"]) + num(11, 0) + num(12, 134190)
                + text(30, "tcp://10.0.3.17:38211"))
    assert body == expected
    assert static.v2 in body                             # the file's bytes, reused as they are
    assert len(data) < 250
    # the next chunk of the file: the same prefix, the chunk's own numbers
    assert e.send_chunk_start(T + 1, static, 134190, 268380, None) == 1
    again = split_v2(sink.recv(70000))[2]
    assert again.startswith(expected[:expected.index(num(26, T))])
    assert decode_v2_body(again)["entry_start"] == 134190 and "worker" not in decode_v2_body(again)


def test_v2_without_key_and_with_fields_left_out(sink):
    e = Emitter(addr_of(sink), None)
    assert e.send_chunk_start(T) == 0
    data = sink.recv(70000)
    assert data[:5] == b"RTP2\x00"
    ids = []
    msg = decode_v2_body(split_v2(data, None)[2], ids)
    assert ids == [16, 26, 23, 66, 24, 65] and msg["t_start"] == T


def test_a_value_the_table_cannot_carry_is_left_out_without_a_gap(sink):
    e = Emitter(addr_of(sink), KEY)
    assert e.send_chunk_start(T, None, "100", None, None) == 0     # a str entry: not a num
    msg = receive(sink)
    assert msg["type"] == "chunk_start" and "entry_start" not in msg and e.dropped == 1
    assert e.send_chunk_start(T, None, 2 ** 60, 2 ** 60 + 1) == 1  # not exact in a double:
    msg = decode_v2_body(split_v2(sink.recv(70000))[2])           # as the chunk sends it
    assert msg["entry_start"] == float(2 ** 60)
    assert e.send_chunk_start(T, None, 10 ** 400) == 2             # beyond a double
    assert "entry_start" not in receive(sink) and e.dropped == 2
    assert e.send_chunk_start(float("nan")) == 3                   # NaN: not given
    assert "t_start" not in receive(sink)
    assert e.send_chunk_start(T) == 4                              # no number skipped
    assert split_v2(sink.recv(70000))[2][0] == 0x02


def test_a_static_with_other_fields_sends_only_the_allowed_ones(sink):
    e = Emitter(addr_of(sink), KEY)
    static = Static({"run_id": "r", "accessed_branches": ["a"], "num_branches_accessed": 1})
    assert static.v2 is not None
    e.send_chunk_start(T, static)
    ids = []
    msg = decode_v2_body(split_v2(sink.recv(70000))[2], ids)       # no foreign id in kind 2
    assert msg["run_id"] == "r" and set(ids) <= V2_START_IDS


def test_start_seq_is_field_67_of_the_chunk():
    body, _ = em.encode({"type": "chunk", "start_seq": 41, "duration": 1.0})
    assert body == b"\x01" + num(67, 41) + num(10, 1.0)
    assert decode_v2_body(body) == {"type": "chunk", "start_seq": 41, "duration": 1.0}


class Proc:
    @track_metrics
    def process(self, events):
        with track_time(self, "select"):
            pass
        if events.metadata.get("peek"):           # the start is out before the body runs
            self.peeked = receive(events.metadata["peek"])
        if events.metadata.get("fail"):
            raise ValueError("boom")
        return len(events)


def collecting(sink, cls=Proc):
    p = cls()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), "run-1"
    return p


def test_decorator_sends_start_then_chunk(sink, monkeypatch):
    fake = types.ModuleType("distributed")
    fake.get_worker = lambda: types.SimpleNamespace(name="w3")
    monkeypatch.setitem(sys.modules, "distributed", fake)
    p = collecting(sink)
    assert p.process(Events(1234, Factory(), peek=sink, **META)) == 1234
    start = p.peeked
    chunk = receive(sink)
    check_start_of(start, chunk)                 # start_seq, t_start, sender, copied fields
    assert start == {"type": "chunk_start", "run_id": "run-1", "dataset": "DY",
                     "file": "f.root", "uuid": "u-9", "entry_start": 100, "entry_stop": 1334,
                     "worker": "w3", "t_start": chunk["t_start"], "host": chunk["host"],
                     "pid": chunk["pid"], "instance": chunk["instance"], "seq": 0,
                     "sent": start["sent"]}
    assert chunk["seq"] == 1 and chunk["start_seq"] == 0
    assert chunk["t_start"] <= start["sent"] <= chunk["t_end"]
    assert nothing_arrives(sink)


def test_a_raising_process_sent_its_start(sink):
    p = collecting(sink)
    with pytest.raises(ValueError):
        p.process(Events(5, peek=sink, fail=True, **META))
    chunk = receive(sink)
    check_start_of(p.peeked, chunk)
    assert chunk["error"] == "ValueError"


def test_nested_calls_each_send_their_start(sink):
    class Outer:
        @track_metrics
        def process(self, events):
            self.inner(Events(3, **dict(META, entrystart=0, entrystop=3)))
            return len(events)

        @track_metrics
        def inner(self, events):
            return len(events)

    p = collecting(sink, Outer)
    assert p.process(Events(7, **META)) == 7
    outer_start, inner_start, inner, outer = (receive(sink) for _ in range(4))
    check_start_of(inner_start, inner)
    check_start_of(outer_start, outer)
    assert (outer_start["entry_start"], inner_start["entry_start"]) == (100, 0)
    assert (outer["start_seq"], inner["start_seq"]) == (0, 1)


@pytest.mark.parametrize("value", ["0", " 0 ", "false", "OFF", "no"])
def test_switched_off_by_the_environment(sink, monkeypatch, value):
    monkeypatch.setenv("ROASTOP_CHUNK_START", value)
    p = collecting(sink)
    assert p.process(Events(3, **META)) == 3
    chunk = receive(sink)
    assert chunk["type"] == "chunk" and chunk["seq"] == 0 and "start_seq" not in chunk
    assert nothing_arrives(sink)
    e = em.emitter_for(addr_of(sink), KEY.hex())
    assert e.chunk_start is False and e.send_chunk_start(T) is None
    assert (e.sent, e.lost) == (1, 0)                  # the chunk only; off is not a loss


@pytest.mark.parametrize("value", ["1", "", "yes", "of"])
def test_other_values_keep_it_on(monkeypatch, value):
    monkeypatch.setenv("ROASTOP_CHUNK_START", value)
    assert Emitter("127.0.0.1:9", KEY).chunk_start is True


def test_the_argument_wins_over_the_environment(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_CHUNK_START", "0")
    assert Emitter("127.0.0.1:9", KEY, chunk_start=True).chunk_start is True
    monkeypatch.setenv("ROASTOP_CHUNK_START", "1")
    off = Emitter(addr_of(sink), KEY, chunk_start=False)
    assert off.send_chunk_start(T) is None
    assert nothing_arrives(sink) and (off.sent, off.lost) == (0, 0)


def test_read_once_when_the_emitter_is_made(sink, monkeypatch):
    p = collecting(sink)
    p.process(Events(3, **META))
    receive_chunk(sink)
    monkeypatch.setenv("ROASTOP_CHUNK_START", "0")        # too late for this process's emitter
    p.process(Events(3, **META))
    assert receive_chunk(sink)["start_seq"] == 2


def test_a_failing_send_never_raises(sink):
    class Full:                                  # a full socket buffer
        def send(self, data):
            raise BlockingIOError(11, "Resource temporarily unavailable")

    e = Emitter(addr_of(sink), KEY)
    e._socket()
    e._sock = Full()
    assert e.send_chunk_start(T) is None and (e.sent, e.lost) == (0, 1)
    nowhere = Emitter("not an address", KEY)
    assert nowhere.send_chunk_start(T) is None and nowhere.lost == 1


def test_unresolved_address_returns_at_once(monkeypatch):
    """A host name whose lookup hangs: the start is not waited for."""
    release = threading.Event()
    real = socket.getaddrinfo

    def hanging(host, port, *args):
        if len(args) > 3 and args[3] & socket.AI_NUMERICHOST:
            return real(host, port, *args)
        release.wait(60)
        raise socket.gaierror("released")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    try:
        e = Emitter("roastop.invalid:8790", KEY)  # looked up in the background
        t = time.monotonic()
        assert e.send_chunk_start(T) is None
        assert time.monotonic() - t < 1.0
        assert e.lost == 1 and e.unresolved == 1
    finally:
        release.set()


def test_decorator_survives_a_start_that_fails(sink):
    """The start is lost (counted), the chunk goes without start_seq."""
    class Broken(Emitter):
        def chunk_start_datagram(self, *args):
            raise RuntimeError("bug")

    e = shared("emitter_cache", dict)[(addr_of(sink), KEY.hex())] = Broken(addr_of(sink), KEY)
    p = collecting(sink)
    assert p.process(Events(3, **META)) == 3
    chunk = receive(sink)
    assert chunk["type"] == "chunk" and "start_seq" not in chunk and e.lost == 1


def test_decorator_survives_a_send_chunk_start_that_raises(sink):
    class Raising(Emitter):
        def send_chunk_start(self, *args):
            raise RuntimeError("an emitter from elsewhere")

    shared("emitter_cache", dict)[(addr_of(sink), KEY.hex())] = Raising(addr_of(sink), KEY)
    p = collecting(sink)
    assert p.process(Events(3, **META)) == 3
    chunk = receive(sink)
    assert chunk["seq"] == 0 and "start_seq" not in chunk
