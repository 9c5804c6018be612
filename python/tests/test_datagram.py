"""The datagram on the sending side (docs/protocol.md), checked against the
reference decoder in roastop_testutil, which was written from the document
alone: field ids and encodings, the frame, every kind, and what is left out
(and counted) because the table cannot carry it."""
import hashlib
import hmac
import json
import math
import os
import socket
import struct

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, V2_CHUNK_FIELDS, BadBinary, addr_of, decode_v2_body, fresh_process_state, receive,
    sink, split_datagram, split_v2)
from roastop_fakes import Events, Factory

from roastop import MetricsCollector, track_metrics, track_time
from roastop import emitter as em
from roastop._state import shared
from roastop import wire
from roastop.emitter import Emitter, frame, keyed_mac

FILE = "root://eos.example.org//store/DYJetsToLL_M-50/nano_0000.root"

# A chunk with every field of the table: the decorator's record (roastcoffea's
# fields, cpu_time, worker, error, start_seq), the envelope, run_id and sent.
FULL = {
    "type": "chunk", "run_id": "5f0c2b9d8e7a4c1f9b3d2e1a0c9f8e7d",
    "t_start": 1767225595.1450303, "t_end": 1767225600.3599281,
    "duration": 5.214897931662522, "mem_before_mb": 1037.8141842500888,
    "mem_after_mb": 1061.2915181672743, "mem_delta_mb": -23.477333917185433,
    "bytes_read": 14943332, "timestamp": 1767225600.3599281, "num_events": 134190,
    "dataset": "DYJetsToLL_M-50", "file": FILE, "uuid": "a1b2c3d4-e5f6-11ee-8c90-0242ac120002",
    "entry_start": 0, "entry_stop": 134190,
    "accessed_branches": ["Muon_charge", "Muon_eta", "Muon_mass", "Muon_phi", "Muon_pt",
                          "nMuon", "Électron_ünïcode"],
    "num_branches_accessed": 7, "accessed_bytes": 13448998,
    "accessed_uncompressed_bytes": 40346996, "branches_read_percent": 0.5,
    "bytes_read_percent": 3.25,
    "timing": {"muon_selection": 1.5644693794987565, "histogram_filling": 0.5214897931662522},
    "memory": {"histogram_filling": 5.140625, "release": -2.5},
    "bytes": {"muon_loading": 11954665},
    "file_metadata": {"filename": FILE, "compression_ratio": 0.3103448275862069,
                      "total_branches": 1200, "total_tree_bytes": 2500000000},
    "cpu_time": 4.668961481940033, "cpu_wait": 0.125, "worker": "tcp://10.0.3.17:38211",
    "error": "ValueError",
    "host": "node-042.cluster.example.org", "pid": 424242, "instance": 2 ** 53 - 1,
    "seq": 123456, "sent": 1767225600.3601234, "start_seq": 123455,
}


def encode_chunk(msg):
    """msg's body, every field of it carried."""
    body, dropped = em.encode(dict(msg, type="chunk"))
    assert dropped == 0
    return body


def decoded(body, ids=None):
    return decode_v2_body(body, ids)


def test_every_field_round_trips_with_its_id():
    ids = []
    msg = decoded(encode_chunk(FULL), ids)
    assert msg == FULL
    assert list(msg) == list(FULL)                     # the message's own key order
    assert set(V2_CHUNK_FIELDS) == set(range(1, 31)) | {64, 65, 66, 67, 72}
    assert sorted(ids) == sorted(V2_CHUNK_FIELDS)      # every id of the table, once
    assert [V2_CHUNK_FIELDS[i][0] for i in ids] == [k for k in FULL if k != "type"]
    for name in ("num_events", "entry_stop", "pid", "instance", "seq", "start_seq",
                 "num_branches_accessed"):
        assert type(msg[name]) is int and msg[name] == FULL[name]
    assert msg["file_metadata"]["total_branches"] == 1200


def test_bytes_on_the_wire_by_hand():
    """A few fields spelled out byte by byte: kind, id, little-endian values."""
    body = encode_chunk({"type": "chunk", "duration": 2.25, "dataset": "DY",
                            "timing": {"a": 1.0}, "accessed_branches": ["x", "yz"],
                            "file_metadata": {"filename": "f", "total_branches": 3}})
    d = struct.pack("<d", 2.25)
    assert body == (b"\x01"
                    + b"\x0a" + d
                    + b"\x09" + b"\x02\x00" + b"DY"
                    + b"\x1c" + b"\x01\x00" + b"\x01\x00a" + struct.pack("<d", 1.0)
                    + b"\x01" + b"\x02\x00" + b"\x01\x00x" + b"\x02\x00yz"
                    + b"\x0f" + b"\x02" + b"\x02\x01\x00f" + b"\x03" + struct.pack("<d", 3.0))


def test_decorator_record_round_trips(sink):
    """The record the decorator really builds, with a file: sent as RTP2."""
    class Proc:
        @track_metrics
        def process(self, events):
            with track_time(self, "select"):
                events.attrs["@events_factory"].read("nMuon", 120)
            return len(events)

    p = Proc()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), "run-9"
    p.process(Events(10, Factory(), dataset="DY", filename="f.root", entrystart=0,
                     entrystop=10, uuid="u"))
    start_ids = []
    start = decode_v2_body(split_v2(sink.recv(70000))[2], start_ids)   # kind 2, first
    assert start["type"] == "chunk_start" and start["run_id"] == "run-9"
    assert len(start_ids) == len(set(start_ids))
    data = sink.recv(70000)
    assert data[:5] == b"RTP2\x01"
    ids = []
    msg = decode_v2_body(split_v2(data)[2], ids)
    assert len(ids) == len(set(ids))
    assert msg["start_seq"] == start["seq"] and msg["t_start"] == start["t_start"]
    assert msg["run_id"] == "run-9" and msg["num_events"] == 10
    assert msg["accessed_branches"] == ["nMuon"] and msg["bytes_read"] == 120
    assert msg["file_metadata"]["filename"] == "f.root" and "select" in msg["timing"]


def test_frame_with_and_without_key():
    body = encode_chunk(FULL)
    tagged = frame(body, keyed_mac(KEY))
    assert tagged[:4] == b"RTP2" and tagged[4] == 0x01
    assert tagged[5:37] == hmac.new(KEY, body, hashlib.sha256).digest()
    assert tagged[37:] == body
    assert frame(body, None) == b"RTP2\x00" + body
    assert split_v2(tagged)[2] == body and split_v2(frame(body, None), None)[2] == body


def test_emitter_sends_chunks_as_v2_with_envelope(sink):
    e = Emitter(addr_of(sink), KEY)
    assert e.send({"type": "chunk", "run_id": "r", "duration": 1.5})
    data = sink.recv(70000)
    assert data.startswith(b"RTP2\x01")
    msg = split_datagram(data)
    assert msg["type"] == "chunk" and msg["run_id"] == "r" and msg["duration"] == 1.5
    assert msg["host"] == socket.gethostname() and msg["pid"] == os.getpid()
    assert msg["seq"] == 0 and math.isfinite(msg["sent"])
    untagged = Emitter(addr_of(sink), None)
    untagged.send({"type": "chunk", "duration": 1.5})
    data = sink.recv(70000)
    assert data.startswith(b"RTP2\x00") and split_datagram(data, None)["duration"] == 1.5


def test_non_finite_and_none_are_left_out():
    msg = {"type": "chunk", "duration": math.nan, "t_start": math.inf, "t_end": -math.inf,
           "cpu_time": None, "dataset": None, "accessed_branches": None, "timing": None,
           "file_metadata": {"filename": "f", "compression_ratio": math.nan,
                             "total_branches": None, "total_tree_bytes": math.inf},
           "num_events": 5}
    assert decoded(encode_chunk(msg)) == {"type": "chunk", "file_metadata": {"filename": "f"},
                                          "num_events": 5}


def test_foreign_numbers_and_odd_strings():
    class NumpyLike:
        def __init__(self, v):
            self.v = v

        def item(self):
            return self.v

    class Flt(float):
        pass

    msg = {"type": "chunk", "num_events": NumpyLike(7), "duration": NumpyLike(2.5),
           "cpu_time": Flt(0.25), "mem_delta_mb": NumpyLike(math.nan),
           "dataset": "a\ud800b", "timing": {"x": NumpyLike(1), "y\udfff": 2}}
    got = decoded(encode_chunk(msg))
    assert got == {"type": "chunk", "num_events": 7, "duration": 2.5, "cpu_time": 0.25,
                   "dataset": "a?b", "timing": {"x": 1.0, "y?": 2.0}}


def test_integer_field_holding_a_fraction_is_sent_as_is():
    got = decoded(encode_chunk({"type": "chunk", "entry_start": 3.5, "num_events": 10.0}))
    assert got["entry_start"] == 3.5 and got["num_events"] == 10


def test_limits_are_inclusive():
    msg = {"type": "chunk", "dataset": "x" * 4096, "file": "é" * 2048,
           "timing": {"s%d" % i: float(i) for i in range(256)},
           "accessed_branches": ["b"] * 65535}
    got = decoded(encode_chunk(msg))
    assert got["dataset"] == msg["dataset"] and got["file"] == msg["file"]
    assert got["timing"] == msg["timing"] and len(got["accessed_branches"]) == 65535
    assert decoded(encode_chunk({"accessed_branches": [], "timing": {}})) == {
        "type": "chunk", "accessed_branches": [], "timing": {}}


class Evil:
    def item(self):
        raise RuntimeError("no")

    def __str__(self):
        return "evil"


LEFT_OUT = {
    "custom field": {"my_metric": 3},
    "bool for a number": {"num_events": True},
    "str for a number": {"duration": "1.5"},
    "list for a number": {"duration": [1.5]},
    "dict for a number": {"bytes_read": {"a": 1}},
    "item() that raises": {"duration": Evil()},
    "item() giving a bool": {"duration": type("B", (), {"item": lambda self: False})()},
    "int beyond a double": {"num_events": 10 ** 400},
    "number for a str": {"dataset": 5},
    "bytes for a str": {"file": b"f.root"},
    "str over 4096 bytes": {"uuid": "x" * 4097},
    "multibyte str over 4096 bytes": {"worker": "é" * 2049},
    "strlist not a list": {"accessed_branches": "nMuon"},
    "strlist a set": {"accessed_branches": {"nMuon"}},
    "strlist with a number": {"accessed_branches": ["a", 1]},
    "strlist with None": {"accessed_branches": ["a", None]},
    "strlist over 65535 items": {"accessed_branches": ["b"] * 65536},
    "strlist item over 4096 bytes": {"accessed_branches": ["b" * 4097]},
    "kv not a dict": {"timing": [["a", 1.0]]},
    "kv over 256 items": {"timing": {"s%d" % i: 1.0 for i in range(257)}},
    "kv with a non-str key": {"memory": {1: 2.0}},
    "kv with a str value": {"bytes": {"a": "12"}},
    "kv with a bool value": {"bytes": {"a": True}},
    "kv with a None value": {"timing": {"a": None}},
    "kv with a NaN value": {"timing": {"a": math.nan}},
    "kv name over 4096 bytes": {"timing": {"a" * 4097: 1.0}},
    "file_metadata not a dict": {"file_metadata": "f.root"},
    "file_metadata with an unknown key": {"file_metadata": {"filename": "f", "x": 1}},
    "file_metadata without filename": {"file_metadata": {"total_branches": 3}},
    "file_metadata filename None": {"file_metadata": {"filename": None}},
    "file_metadata filename not str": {"file_metadata": {"filename": 7}},
    "file_metadata number a str": {"file_metadata": {"filename": "f", "total_branches": "3"}},
}


@pytest.mark.parametrize("case", sorted(LEFT_OUT))
def test_what_the_table_cannot_carry_is_left_out_and_counted(case, sink):
    extra = LEFT_OUT[case]
    msg = dict(FULL, **extra)
    body, dropped = em.encode(msg)
    assert dropped == len(extra)
    got = decoded(body)
    for k in set(FULL) - set(extra):
        assert got[k] == FULL[k], k
    assert set(extra).isdisjoint(got)
    e = Emitter(addr_of(sink), KEY)
    e._socket()
    sent = split_datagram(e.datagram(msg))
    assert e.dropped == len(extra) and set(extra).isdisjoint(sent)
    assert sent["host"] == socket.gethostname() and sent["seq"] == 0


def test_an_encoder_that_raises_costs_the_message(sink, monkeypatch):
    def broken(msg):
        raise RuntimeError("bug")

    monkeypatch.setattr(em, "encode", broken)
    e = Emitter(addr_of(sink), KEY)
    assert not e.send({"type": "chunk", "duration": 1.0})
    assert e.lost == 1 and e.sent == 0


def test_every_message_is_binary(sink):
    e = Emitter(addr_of(sink), KEY)
    for msg in ({"type": "run_start", "run_id": "r", "name": "n", "datasets": ["DY"],
                 "client_host": "c", "client_pid": 7, "processor": "P", "expected_events": 9},
                {"type": "run_end", "run_id": "r", "status": "failed", "error_type": "E",
                 "error_message": "m"},
                {"type": "report", "run_id": "r", "entries": 3, "columns": ["a"],
                 "bytesread": 1.5, "processtime": 2.5, "chunks": 4},
                {"type": "report", "report_id": "x", "part": 1, "parts": 2, "columns": []},
                {"type": "heartbeat", "cpu_time": 1.5, "chunks_in_flight": 0, "interval": 1.0},
                {"type": "chunk", "duration": 1.0}):
        assert e.send(msg)
        got = receive(sink)
        for k in ("host", "pid", "instance", "seq", "sent"):
            assert got.pop(k) is not None
        assert got == msg
    assert not e.send({"duration": 1.0})          # no type: no kind to send it as
    assert e.lost == 1


def test_run_start_carries_the_collectors_fields(sink):
    with MetricsCollector(None, addr=addr_of(sink), key=KEY, run_name="mine"):
        msg = receive(sink)
        assert msg["type"] == "run_start" and msg["name"] == "mine"
        assert msg["client_pid"] == os.getpid() and "protocol" not in msg
    assert receive(sink)["type"] == "run_end"


def test_datagram_is_smaller_than_the_json_record():
    e = Emitter("127.0.0.1:9", KEY)
    e._socket()
    data = e.datagram(FULL)
    assert data.startswith(b"RTP2\x01")
    assert len(data) < len(json.dumps(FULL, separators=(",", ":"))) * 0.7


def test_reference_decoder_rejects_what_roastop_rejects():
    """The decoder the tests rely on is strict, so a sloppy encoding shows."""
    good = encode_chunk({"type": "chunk", "duration": 1.0, "dataset": "d"})
    for bad in (good[:-1],                                  # ends inside a value
                b"\x09" + good[1:],                         # unknown kind
                good + b"\x0a" + struct.pack("<d", 2.0),    # an id twice
                good + b"\x1f",                             # unknown id 31
                b"\x01\x0a" + struct.pack("<d", math.nan),  # NaN
                b"\x01\x09\x01\x00\xff",                    # bad UTF-8
                b"\x01\x0f\x01\x01" + struct.pack("<d", 1.0)):   # meta without filename
        with pytest.raises((BadBinary, UnicodeDecodeError)):
            decode_v2_body(bad)


# The decorator's path: chunk_datagram(measured, fields) must say exactly what
# datagram(chunk_message(measured, fields)) says, in fewer steps.
MEASURED_NAMES = ("t_start", "t_end", "duration", "mem_before_mb", "mem_after_mb",
                  "mem_delta_mb", "timestamp", "cpu_time")
FIELDS = {k: v for k, v in FULL.items()
          if k not in MEASURED_NAMES + ("type", "host", "pid", "instance", "seq", "sent")}
MEASURED = (FULL["t_start"], FULL["t_end"], FULL["timestamp"], FULL["cpu_time"],
            FULL["mem_before_mb"], FULL["mem_after_mb"])


def both_paths(sink, measured, fields):
    """(fast, generic) decoded messages from two emitters of one process."""
    fast, generic = Emitter(addr_of(sink), KEY), Emitter(addr_of(sink), KEY)
    fast._socket()
    generic._socket()
    a = split_datagram(fast.chunk_datagram(measured, fields))
    b = split_datagram(generic.datagram(em.chunk_message(measured, fields)))
    assert a.pop("sent") <= b.pop("sent")
    assert (a.pop("instance"), b.pop("instance")) == (fast._instance, generic._instance)
    return a, b


def test_chunk_datagram_says_what_datagram_says(sink):
    assert wire.MEASURED == ("t_start", "t_end", "timestamp", "cpu_time", "mem_before_mb",
                           "mem_after_mb")
    fast, generic = both_paths(sink, MEASURED, FIELDS)
    assert fast == generic
    full = dict(FULL)
    full.pop("sent")
    full.pop("instance")
    full["duration"] = FULL["t_end"] - FULL["t_start"]
    full["mem_delta_mb"] = FULL["mem_after_mb"] - FULL["mem_before_mb"]
    full.update(host=socket.gethostname(), pid=os.getpid(), seq=0)
    assert fast == full                                # every field, none twice
    e = Emitter(addr_of(sink), KEY)
    e._socket()
    data = e.chunk_datagram(MEASURED, FIELDS)
    ids = []
    decode_v2_body(split_v2(data)[2], ids)
    assert data.startswith(b"RTP2\x01") and len(ids) == len(set(ids)) == len(FULL) - 1


def test_chunk_datagram_memory_only_when_both_read(sink):
    for before, after in ((None, 5.0), (5.0, None), (None, None)):
        measured = MEASURED[:4] + (before, after)
        fast, generic = both_paths(sink, measured, {"run_id": "r"})
        assert fast == generic
        assert not {"mem_before_mb", "mem_after_mb", "mem_delta_mb"} & set(fast)
    fast, _ = both_paths(sink, MEASURED[:4] + (2.0, 1.5), {})
    assert fast["mem_delta_mb"] == -0.5 and fast["duration"] == FULL["t_end"] - FULL["t_start"]


def test_chunk_datagram_leaves_out_without_a_sequence_gap(sink):
    e = Emitter(addr_of(sink), KEY)
    e._socket()
    seqs = []
    for fields in (FIELDS, dict(FIELDS, my_metric=3), dict(FIELDS, dataset=5), FIELDS):
        msg = split_datagram(e.chunk_datagram(MEASURED, fields))
        assert msg["t_start"] == FULL["t_start"] and msg["run_id"] == FULL["run_id"]
        assert "my_metric" not in msg and ("dataset" in msg) == (fields["dataset"] != 5)
        seqs.append(msg["seq"])
    assert seqs == [0, 1, 2, 3] and e.dropped == 2


def test_chunk_datagram_without_a_key(sink):
    e = Emitter(addr_of(sink), None)
    e._socket()
    data = e.chunk_datagram(MEASURED, {"dataset": "d"})
    assert data.startswith(b"RTP2\x00") and split_datagram(data, None)["dataset"] == "d"


def test_chunk_datagram_fields_naming_its_own_go_the_generic_way(sink):
    """A field the fast path writes itself, given again in fields, is sent once,
    with the value the generic path gives it (a field twice is refused)."""
    for extra in ({"duration": 5.0}, {"seq": 7}, {"mem_delta_mb": 1.0}, {"t_start": 2.0},
                  {"host": "elsewhere"}):
        fields = dict(FIELDS, **extra)
        e = Emitter(addr_of(sink), KEY)
        e._socket()
        data = e.chunk_datagram(MEASURED, fields)
        ids = []
        decode_v2_body(split_v2(data)[2], ids)
        assert len(ids) == len(set(ids)), extra
        fast, generic = both_paths(sink, MEASURED, fields)
        assert fast == generic, extra


def test_decorator_copes_with_an_emitter_without_send_chunk(sink):
    """A long-lived worker may hold an Emitter of an older roastop (shared
    process state outlives the code shipped by value): chunks still go,
    without a chunk_start (it has no send_chunk_start either)."""
    class OldEmitter(Emitter):
        send_chunk = None
        send_chunk_start = None

    class Proc:
        @track_metrics
        def process(self, events):
            return len(events)

    p = Proc()
    p._roastcoffea_collect_metrics = True
    p._roastop_addr, p._roastop_key, p._roastop_run_id = addr_of(sink), KEY.hex(), "r"
    shared("emitter_cache", dict)[(addr_of(sink), KEY.hex())] = OldEmitter(addr_of(sink), KEY)
    p.process(Events(10, dataset="DY", filename="f.root", entrystart=0, entrystop=10,
                     uuid="u"))
    msg = receive(sink)
    assert msg["num_events"] == 10 and msg["run_id"] == "r" and msg["seq"] == 0
    assert "start_seq" not in msg


def test_instance_id_per_process_redrawn_after_fork(sink):
    """Every message of a process carries one random instance id (both
    versions); a forked child draws its own, so a process that reuses a host
    and pid is still a new sender to roastop."""
    e = Emitter(addr_of(sink), KEY)
    e.send({"type": "run_start", "run_id": "r"})
    e.send({"type": "chunk", "run_id": "r", "duration": 1.0})
    e.send_chunk(MEASURED, FIELDS)
    msgs = [receive(sink) for _ in range(3)]
    instance = msgs[0]["instance"]
    assert type(instance) is int and 1 <= instance <= em.INSTANCE_MAX
    assert [m["instance"] for m in msgs] == [instance] * 3
    pid = os.fork()
    if pid == 0:  # child: same Emitter object, a new process
        try:
            e.send({"type": "chunk", "run_id": "child", "duration": 1.0})
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    child = receive(sink)
    assert child["pid"] == pid and child["seq"] == 0
    assert child["instance"] != instance
    again = Emitter(addr_of(sink), KEY)
    again.send({"type": "run_end", "run_id": "r"})
    assert receive(sink)["instance"] != instance           # another Emitter: another sender
