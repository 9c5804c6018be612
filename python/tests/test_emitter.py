"""The emitter, decorator and collector against a local UDP socket: every
datagram is checked by re-deriving its tag independently here."""
import hashlib
import hmac
import json
import math
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roastop import MetricsCollector, track_bytes, track_memory, track_metrics, track_time  # noqa: E402
from roastop.emitter import Emitter, emitter_for  # noqa: E402

KEY = bytes(range(32))


@pytest.fixture()
def sink():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    yield s
    s.close()


def addr_of(sock):
    return "127.0.0.1:%d" % sock.getsockname()[1]


def receive(sock, key=KEY):
    data = sock.recv(70000)
    magic, tag, body = data.split(b" ", 2)
    assert magic == b"RTP1"
    if key is None:
        assert tag == b"-"
    else:
        assert tag == hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    return json.loads(body)


def test_framing_sequence_and_sender(sink):
    e = Emitter(addr_of(sink), KEY)
    assert e.send({"type": "run_end", "run_id": "r"})
    assert e.send({"type": "run_end", "run_id": "r"})
    a, b = receive(sink), receive(sink)
    assert (a["seq"], b["seq"]) == (0, 1)
    assert a["host"] == socket.gethostname() and a["pid"] > 0 and a["sent"] > 0
    assert e.sent == 2 and e.lost == 0


def test_untagged_without_key_and_nan_becomes_null(sink):
    e = Emitter(addr_of(sink), None)
    e.send({"type": "chunk", "duration": math.nan, "x": [math.inf, 1.0]})
    msg = receive(sink, key=None)
    assert msg["duration"] is None and msg["x"] == [None, 1.0]


def test_never_raises(sink):
    e = Emitter("no-such-host.invalid:9", KEY)
    assert not e.send({"type": "run_end"})
    big = Emitter(addr_of(sink), KEY)
    assert not big.send({"type": "chunk", "blob": "x" * 70000})
    assert e.lost == 1 and big.lost == 1
    from roastop.emitter import parse_addr
    with pytest.raises(ValueError):
        parse_addr("nonsense")
    assert parse_addr("[::1]:8790") == ("::1", 8790)


def test_report_split_and_whole(sink):
    e = Emitter(addr_of(sink), KEY)
    columns = ["Branch_number_%04d-data" % i for i in range(400)]
    e.send_report({"bytesread": 10, "entries": 20, "processtime": 1.5, "chunks": 3,
                   "columns": columns}, "run")
    parts = []
    while True:
        try:
            parts.append(receive(sink))
        except socket.timeout:
            break
        if len(parts) == parts[0]["parts"]:
            break
    assert len(parts) > 1 and all(p["report_id"] == parts[0]["report_id"] for p in parts)
    assert [c for p in sorted(parts, key=lambda p: p["part"]) for c in p["columns"]] == columns
    assert parts[0]["entries"] == 20 and "entries" not in parts[1]
    for p in parts:
        assert len(json.dumps(p)) < 1400
    e.send_report({"entries": 5, "columns": ["a-data"]}, "run")
    small = receive(sink)
    assert "report_id" not in small and small["columns"] == ["a-data"]


class Events(list):
    """Enough of NanoEvents for the decorator: len(), metadata, attrs."""

    def __init__(self, n, **metadata):
        super().__init__(range(n))
        self.metadata = metadata
        self.attrs = {}


class Proc:
    @track_metrics
    def process(self, events):
        with track_time(self, "select"):
            sum(range(1000))
        with track_memory(self, "fill"):
            pass
        with track_bytes(self, events, "load"):
            pass
        if events.metadata.get("fail"):
            raise KeyError("boom")
        return {"n": len(events)}


def test_decorator_sends_the_chunk_record(sink):
    p = Proc()
    with MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY.hex()) as mc:
        start = receive(sink)
        assert start["type"] == "run_start" and start["processor"] == "Proc"
        out = p.process(Events(1234, dataset="ttbar", filename="f.root", entrystart=0,
                               entrystop=1234, uuid="u"))
        assert out == {"n": 1234}  # nothing injected into the output
        rec = receive(sink)
        mc.set_coffea_report({"entries": 1234, "chunks": 1, "columns": []})
        assert receive(sink)["type"] == "report"
    assert receive(sink)["type"] == "run_end"
    assert rec["type"] == "chunk" and rec["run_id"] == mc.run_id
    assert rec["num_events"] == 1234 and rec["dataset"] == "ttbar" and rec["file"] == "f.root"
    assert rec["entry_stop"] == 1234 and rec["uuid"] == "u"
    assert rec["duration"] >= 0 and rec["cpu_time"] >= 0 and rec["t_end"] >= rec["t_start"]
    assert "select" in rec["timing"]
    assert "error" not in rec
    assert not getattr(p, "_roastcoffea_collect_metrics")
    assert mc.datagrams_sent == 4 and mc.datagrams_lost == 0


def test_error_is_sent_and_reraised(sink):
    p = Proc()
    with MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY.hex()):
        receive(sink)
        with pytest.raises(KeyError):
            p.process(Events(5, fail=True))
        rec = receive(sink)
    assert rec["error"] == "KeyError"


def test_collection_off_sends_nothing(sink):
    p = Proc()
    p._roastop_addr, p._roastop_key = addr_of(sink), KEY.hex()
    assert p.process(Events(3)) == {"n": 3}
    sink.settimeout(0.3)
    with pytest.raises(socket.timeout):
        sink.recv(100)


def test_one_emitter_per_process_and_key():
    assert emitter_for("127.0.0.1:9", KEY.hex()) is emitter_for("127.0.0.1:9", KEY.hex())
    assert emitter_for("127.0.0.1:9", None) is not emitter_for("127.0.0.1:9", KEY.hex())
