"""The emitter against a local UDP socket: framing, tags, envelope, loss
accounting, report splitting (docs/protocol.md)."""
import hashlib
import hmac
import json
import math
import os
import socket
import threading
import time

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, nothing_arrives, receive, split_datagram, fresh_process_state, sink)

from roastop import emitter as em
from roastop.emitter import Emitter, emitter_for, emitter_from_env
from roastop.transport import parse_addr
from roastop.wire import MAX_DATAGRAM


def test_framing_is_magic_flags_and_raw_hmac(sink):
    e = Emitter(addr_of(sink), KEY)
    assert e.send({"type": "run_end", "run_id": "r", "error_message": "é"})
    data = sink.recv(70000)
    assert data[:5] == b"RTP2\x01"
    tag, body = data[5:37], data[37:]
    assert tag == hmac.new(KEY, body, hashlib.sha256).digest()
    assert "é".encode() in body  # UTF-8 as is
    msg = split_datagram(data)
    assert msg["type"] == "run_end" and msg["run_id"] == "r"


def test_untagged_without_key(sink):
    e = Emitter(addr_of(sink), None)
    e.send({"type": "run_end", "run_id": "r"})
    assert sink.recv(70000).startswith(b"RTP2\x00\x05")


def test_envelope_and_sequence(sink):
    e = Emitter(addr_of(sink), KEY)
    before = time.time()
    for _ in range(3):
        assert e.send({"type": "run_end", "run_id": "r"})
    msgs = [receive(sink) for _ in range(3)]
    assert [m["seq"] for m in msgs] == [0, 1, 2]
    for m in msgs:
        assert m["host"] == socket.gethostname() and m["pid"] == os.getpid()
        assert before <= m["sent"] <= time.time()
    assert e.sent == 3 and e.lost == 0


def test_caller_dict_is_not_changed(sink):
    e = Emitter(addr_of(sink), KEY)
    msg = {"type": "run_end", "run_id": "r"}
    e.send(msg)
    assert msg == {"type": "run_end", "run_id": "r"}


def test_non_finite_numbers_are_not_given(sink):
    e = Emitter(addr_of(sink), KEY)
    e.send({"type": "chunk", "duration": math.nan, "cpu_time": math.inf,
            "timing": {"b": 1.5}})
    m = receive(sink)
    assert "duration" not in m and "cpu_time" not in m and m["timing"] == {"b": 1.5}


def test_foreign_types_are_encoded_or_left_out(sink):
    class NumpyLike:
        def item(self):
            return 7

    e = Emitter(addr_of(sink), KEY)
    e.send({"type": "chunk", "num_events": NumpyLike(), "accessed_branches": ("a", "b"),
            "dataset": "\ud800", "s": {"x"}})
    m = receive(sink)
    assert m["num_events"] == 7 and m["accessed_branches"] == ["a", "b"]
    assert m["dataset"] == "?" and "s" not in m and e.dropped == 1


def test_oversize_is_counted_lost(sink):
    e = Emitter(addr_of(sink), KEY)
    assert not e.send({"type": "report", "columns": ["x" * 4000] * 17})
    assert e.lost == 1 and e.sent == 0
    assert nothing_arrives(sink)
    assert e.send({"type": "report", "columns": ["x" * 4000] * 15})  # under 65,507: sent whole
    assert len(receive(sink)["columns"]) == 15


def test_never_raises_unresolvable_or_nobody_listening():
    e = Emitter("no-such-host.invalid:9", KEY)
    assert not e.send({"type": "run_end"})
    t = time.perf_counter()
    assert not e.send({"type": "run_end"})  # the failed lookup is not retried per message
    assert time.perf_counter() - t < 0.05
    assert e.lost == 2 and e.sent == 0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                  # nobody listens there any more
    closed = Emitter("127.0.0.1:%d" % port, KEY)
    for _ in range(5):
        closed.send({"type": "run_end"})
    assert closed.sent + closed.lost == 5
    bad = Emitter("nonsense", KEY)
    assert not bad.send({"type": "run_end"}) and bad.lost == 1


def test_a_refusal_reported_late_costs_no_datagram():
    """The socket is connected: a port nobody listened on answers with an
    ICMP error that the next send reports. That send's datagram still goes
    (roastop restarted on its port receives it) and is counted sent."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()                                  # nobody listens there for now
    e = Emitter(addr, KEY)
    assert e.send({"type": "run_end", "run_id": "before"})
    back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    back.bind(("127.0.0.1", int(addr.rsplit(":", 1)[1])))
    back.settimeout(2)
    try:
        assert e.send({"type": "run_end", "run_id": "after"})
        assert receive(back)["run_id"] == "after"
    finally:
        back.close()
    assert (e.sent, e.lost) == (2, 0)


def test_unencodable_message_is_lost_not_raised(sink):
    e = Emitter(addr_of(sink), KEY)
    assert not e.send({"type": "no such kind", "x": 1})
    assert e.lost == 1


def test_parse_addr():
    assert parse_addr("127.0.0.1:8790") == ("127.0.0.1", 8790)
    assert parse_addr("node.example.org:1") == ("node.example.org", 1)
    assert parse_addr("[::1]:8790") == ("::1", 8790)
    for bad in ("nonsense", ":80", "host:", "host:0", "host:70000", "::1:80", "h:x"):
        with pytest.raises(ValueError):
            parse_addr(bad)


def test_ipv6(sink):
    try:
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s6.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback")
    s6.settimeout(2)
    with s6:
        e = Emitter("[::1]:%d" % s6.getsockname()[1], KEY)
        assert e.send({"type": "run_end", "run_id": "r"})
        assert split_datagram(s6.recv(70000))["run_id"] == "r"


def test_fork_gets_its_own_socket_and_numbers(sink):
    e = Emitter(addr_of(sink), KEY)
    e.send({"type": "run_end", "run_id": "parent"})
    e.send({"type": "run_end", "run_id": "parent"})
    pid = os.fork()
    if pid == 0:  # child
        code = 0 if e.send({"type": "run_end", "run_id": "child"}) else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    msgs = {m["run_id"] + str(m["seq"]): m for m in (receive(sink) for _ in range(3))}
    assert msgs["child0"]["pid"] == pid
    assert msgs["parent1"]["pid"] == os.getpid()


def test_sequence_numbers_are_unique_across_threads(sink):
    e = Emitter(addr_of(sink), KEY)
    e._socket()
    seqs = []

    def run():
        seqs.extend(e.envelope({"type": "x"})["seq"] for _ in range(2000))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seqs) == list(range(16000))


def test_emitter_cache_and_env(monkeypatch):
    assert emitter_for("127.0.0.1:9", KEY.hex()) is emitter_for("127.0.0.1:9", KEY)
    assert emitter_for("127.0.0.1:9", None) is not emitter_for("127.0.0.1:9", KEY.hex())
    monkeypatch.delenv("ROASTOP_ADDR", raising=False)
    assert emitter_from_env() is None
    monkeypatch.setenv("ROASTOP_ADDR", "127.0.0.1:9")
    monkeypatch.setenv("ROASTOP_KEY", KEY.hex())
    e = emitter_from_env()
    assert e.addr == "127.0.0.1:9" and e.key == KEY
    monkeypatch.setenv("ROASTOP_KEY", "not hex")
    with pytest.raises(ValueError):
        emitter_from_env()


def _collect(sink, key=KEY):
    out = []
    while True:
        try:
            out.append(receive(sink, key))
        except socket.timeout:
            return out
        sink.settimeout(0.3)


REPORT = {"bytesread": 123456789, "entries": 1000000, "processtime": 12.5, "chunks": 40}


def test_small_report_is_one_datagram(sink):
    e = Emitter(addr_of(sink), KEY)
    assert e.send_report(dict(REPORT, columns=["a-data", "b-offsets"]), "run")
    m = receive(sink)
    assert m["type"] == "report" and m["run_id"] == "run"
    assert {k: m[k] for k in REPORT} == REPORT and m["columns"] == ["a-data", "b-offsets"]
    assert not {"report_id", "part", "parts"} & set(m)
    assert nothing_arrives(sink)


def test_report_split_reassembles(sink):
    e = Emitter(addr_of(sink), KEY)
    columns = ["Branch_number_%04d-data" % i for i in range(400)] + ["ü" * 10]
    assert e.send_report(dict(REPORT, columns=columns), "run")
    parts = _collect(sink)
    assert 1 < len(parts) <= 64
    assert {p["report_id"] for p in parts} == {parts[0]["report_id"]}
    assert len(parts[0]["report_id"]) < 64
    assert sorted(p["part"] for p in parts) == list(range(len(parts)))
    assert all(p["parts"] == len(parts) and p["run_id"] == "run" for p in parts)
    parts.sort(key=lambda p: p["part"])
    assert [c for p in parts for c in p["columns"]] == columns
    assert {k: parts[0][k] for k in REPORT} == REPORT
    assert not set(REPORT) & set(parts[1])
    for data in (e.datagram(dict(p)) for p in parts):
        assert len(data) <= 1400


def test_report_beyond_64_parts_is_truncated_scalars_kept(sink):
    e = Emitter(addr_of(sink), KEY)
    columns = ["a_rather_long_branch_name_number_%06d-data" % i for i in range(5000)]
    e.send_report(dict(REPORT, columns=columns), "run")
    parts = sorted(_collect(sink), key=lambda p: p["part"])
    assert len(parts) == 64 and all(p["parts"] == 64 for p in parts)
    got = [c for p in parts for c in p["columns"]]
    assert 0 < len(got) < len(columns) and got == columns[:len(got)]
    assert {k: parts[0][k] for k in REPORT} == REPORT


def test_report_with_missing_fields(sink):
    e = Emitter(addr_of(sink), KEY)
    e.send_report({"entries": 5}, None)
    m = receive(sink)
    assert m["entries"] == 5 and m["columns"] == [] and "run_id" not in m
    assert "bytesread" not in m


def test_soft_limit_constant():
    assert em.SOFT_LIMIT == 1400 and MAX_DATAGRAM == 65507 and em.MAX_REPORT_PARTS == 64


def test_tags_are_hmac_sha256():
    """RFC 2104 HMAC-SHA256, for the session key and a long one (hashed
    first), the same tag each time it is asked."""
    body = os.urandom(300)
    long_key = os.urandom(100)
    for key in (KEY, long_key):
        want = hmac.new(key, body, hashlib.sha256).digest()
        assert em.keyed_mac(key).tag(body) == want
        assert em.keyed_mac(key).tag(body) == want
    assert em.keyed_mac(b"") is None and em.keyed_mac(None) is None
