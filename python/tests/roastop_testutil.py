"""Shared test helpers (not a conftest.py: tests/integration has one, and the two
are collected together): a local UDP sink and a receiver that checks every
datagram's framing and re-derives its HMAC tag independently. The decoder
here is a reference written from docs/protocol.md alone: it shares nothing
with roastop.emitter."""
import hashlib
import hmac
import math
import socket
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KEY = bytes(range(32))


@pytest.fixture()
def sink(monkeypatch):
    monkeypatch.setenv("ROASTOP_HELLO", "0")   # a sink does not answer hellos (test_collector_hello.py)
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "0")   # exact sequences here; test_heartbeat.py has them
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    yield s
    s.close()


def addr_of(sock):
    return "127.0.0.1:%d" % sock.getsockname()[1]


# docs/protocol.md, "The datagram": id -> (field, encoding),
# typed in from the tables there ("int" is num (integer)); kept apart from the
# emitter's on purpose, and checked against roastop's field table by
# tests/integration/test_wire_table.py
V2_CHUNK_FIELDS = {
    1: ("accessed_branches", "strlist"), 2: ("accessed_bytes", "num"),
    3: ("accessed_uncompressed_bytes", "num"), 4: ("branches_read_percent", "num"),
    5: ("bytes", "kv"), 6: ("bytes_read", "num"), 7: ("bytes_read_percent", "num"),
    8: ("cpu_time", "num"), 9: ("dataset", "str"), 10: ("duration", "num"),
    11: ("entry_start", "int"), 12: ("entry_stop", "int"), 13: ("error", "str"),
    14: ("file", "str"), 15: ("file_metadata", "meta"), 16: ("host", "str"),
    17: ("mem_after_mb", "num"), 18: ("mem_before_mb", "num"), 19: ("mem_delta_mb", "num"),
    20: ("memory", "kv"), 21: ("num_branches_accessed", "int"), 22: ("num_events", "int"),
    23: ("pid", "int"), 24: ("seq", "int"), 25: ("t_end", "num"), 26: ("t_start", "num"),
    27: ("timestamp", "num"), 28: ("timing", "kv"), 29: ("uuid", "str"), 30: ("worker", "str"),
    64: ("run_id", "str"), 65: ("sent", "num"), 66: ("instance", "int"),
    67: ("start_seq", "int"), 72: ("cpu_wait", "num"),
}
# "chunk_start": the ids a kind-2 body may carry (the chunk table's encodings)
V2_START_IDS = frozenset((9, 11, 12, 14, 16, 23, 24, 26, 29, 30, 64, 65, 66))
# "heartbeat" (kind 3): the chunk's ids for the names they share, 31..33 its own
V2_HEARTBEAT_FIELDS = {8: ("cpu_time", "num"), 16: ("host", "str"), 23: ("pid", "int"),
                       24: ("seq", "int"), 30: ("worker", "str"), 31: ("rss_bytes", "num"),
                       32: ("chunks_in_flight", "int"), 33: ("interval", "num"),
                       65: ("sent", "num"), 66: ("instance", "int")}
V2_ENVELOPE = {16: ("host", "str"), 23: ("pid", "int"), 24: ("seq", "int"), 65: ("sent", "num"),
               66: ("instance", "int")}
V2_RUN_START_FIELDS = {1: ("client_host", "str"), 2: ("client_pid", "int"),
                       3: ("datasets", "strlist"), 4: ("expected_events", "int"),
                       5: ("name", "str"), 6: ("processor", "str"), 64: ("run_id", "str"),
                       **V2_ENVELOPE}
V2_RUN_END_FIELDS = {1: ("error_message", "str"), 2: ("error_type", "str"), 3: ("reason", "str"),
                     4: ("status", "str"), 64: ("run_id", "str"), **V2_ENVELOPE}
V2_REPORT_FIELDS = {1: ("bytesread", "num"), 2: ("chunks", "int"), 3: ("columns", "strlist"),
                    4: ("entries", "int"), 5: ("processtime", "num"), 64: ("run_id", "str"),
                    68: ("report_id", "str"), 69: ("part", "int"), 70: ("parts", "int"),
                    **V2_ENVELOPE}
V2_HELLO_FIELDS = {16: ("host", "str"), 23: ("pid", "int"), 65: ("sent", "num"),
                   66: ("instance", "int"), 71: ("nonce", "str")}
V2_ACK_FIELDS = {71: ("nonce", "str")}
# kind -> (type, id -> (field, encoding))
V2_KINDS = {0x01: ("chunk", V2_CHUNK_FIELDS),
            0x02: ("chunk_start", {i: V2_CHUNK_FIELDS[i] for i in V2_START_IDS}),
            0x03: ("heartbeat", V2_HEARTBEAT_FIELDS), 0x04: ("run_start", V2_RUN_START_FIELDS),
            0x05: ("run_end", V2_RUN_END_FIELDS), 0x06: ("report", V2_REPORT_FIELDS),
            0x07: ("hello", V2_HELLO_FIELDS), 0x08: ("ack", V2_ACK_FIELDS)}
V2_META_FIELDS = {1: ("compression_ratio", "num"), 2: ("filename", "str"),
                  3: ("total_branches", "int"), 4: ("total_tree_bytes", "num")}


class BadBinary(ValueError):
    """What roastop counts as bad_binary (or the value check named)."""


class _Body:
    """A cursor over a version 2 body."""

    def __init__(self, body):
        self.body, self.pos = bytes(body), 0

    def take(self, n):
        if self.pos + n > len(self.body):
            raise BadBinary("the body ends inside a value")
        out = self.body[self.pos:self.pos + n]
        self.pos += n
        return out

    def read_u8(self):
        return self.take(1)[0]

    def read_u16(self):
        return int.from_bytes(self.take(2), "little")

    def read_num(self):
        (x,) = struct.unpack("<d", self.take(8))
        if not math.isfinite(x):
            raise BadBinary("a NaN or infinite number")
        return x

    def read_int(self):
        x = self.read_num()
        return int(x) if x == int(x) else x   # a fraction is left for the test to see

    def read_str(self):
        n = self.read_u16()
        if n > 4096:
            raise BadBinary("string_too_long")
        raw = self.take(n)
        if b"\0" in raw:
            raise BadBinary("bad_utf8: NUL")
        return raw.decode("utf-8")            # strict: bad_utf8

    def read_strlist(self):
        return [self.read_str() for _ in range(self.read_u16())]

    def read_kv(self):
        n = self.read_u16()
        if n > 256:
            raise BadBinary("list_too_long")
        out = {}
        for _ in range(n):
            name = self.read_str()
            out[name] = self.read_num()
        return out

    def read_meta(self):
        out = {}
        for _ in range(self.read_u8()):
            mid = self.read_u8()
            if mid not in V2_META_FIELDS:
                raise BadBinary(f"unknown file_metadata id {mid}")
            name, kind = V2_META_FIELDS[mid]
            if name in out:
                raise BadBinary(f"file_metadata id {mid} twice")
            out[name] = getattr(self, "read_" + kind)()
        if "filename" not in out:
            raise BadBinary("missing_field: file_metadata without filename")
        return out


def decode_v2_body(body, ids=None):
    """A datagram body as a dict: "type" first (the kind's name), then the
    fields in the order sent; a whole number in an integer field comes back
    as an int.
    ``ids``, a list, receives the field ids in order. BadBinary for anything
    roastop would reject."""
    b = _Body(body)
    kind = b.read_u8()
    if kind not in V2_KINDS:
        raise BadBinary("unknown kind")
    msg_type, table = V2_KINDS[kind]
    msg = {"type": msg_type}
    while b.pos < len(b.body):
        fid = b.read_u8()
        if fid not in table:
            raise BadBinary(f"unknown id {fid}")
        name, kind = table[fid]
        if name in msg:
            raise BadBinary(f"id {fid} twice")
        msg[name] = getattr(b, "read_" + kind)()
        if ids is not None:
            ids.append(fid)
    return msg


def split_v2(data, key=KEY):
    """(flags, tag, body) of an RTP2 datagram, the tag checked by hand."""
    assert data[:4] == b"RTP2"
    flags = data[4]
    if key is None:
        assert flags == 0x00
        return flags, None, data[5:]
    assert flags == 0x01
    tag, body = data[5:37], data[37:]
    assert len(tag) == 32
    assert hmac.compare_digest(tag, hmac.new(key, body, hashlib.sha256).digest())
    return flags, tag, body


def split_datagram(data, key=KEY):
    """The message of one datagram after checking magic and tag by hand,
    decoded to a dict (decode_v2_body)."""
    return decode_v2_body(split_v2(data, key)[2])


def receive(sock, key=KEY):
    return split_datagram(sock.recv(70000), key)


def receive_chunk(sock, key=KEY):
    """The chunk of one decorated call, after checking the chunk_start that
    came just before it: the chunk's start_seq is that start's seq, both
    carry the same t_start and sender, and the start carries exactly the
    chunk's run_id, dataset, file, uuid, entry range and worker."""
    start, chunk = receive(sock, key), receive(sock, key)
    check_start_of(start, chunk)
    return chunk


START_COPIED = ("run_id", "dataset", "file", "uuid", "entry_start", "entry_stop", "worker")


def check_start_of(start, chunk):
    assert start["type"] == "chunk_start" and chunk["type"] == "chunk"
    assert chunk["start_seq"] == start["seq"] < chunk["seq"]
    assert chunk["t_start"] == start["t_start"]
    for name in ("host", "pid", "instance"):
        assert chunk[name] == start[name], name
    assert set(start) - set(chunk) == set()      # nothing the chunk lacks
    for name in START_COPIED:
        assert start.get(name) == chunk.get(name), name
    assert set(start) <= set(START_COPIED) | {"type", "t_start", "host", "pid", "instance",
                                              "seq", "sent"}


def nothing_arrives(sock, wait=0.3):
    sock.settimeout(wait)
    try:
        sock.recv(70000)
    except socket.timeout:
        return True
    finally:
        sock.settimeout(2)
    return False


@pytest.fixture(autouse=True)
def fresh_process_state():
    """Per-process caches of the package, reset between tests."""
    from roastop import collector
    from roastop._state import shared
    for name, kind in (("emitter_cache", dict), ("env_emitter", list), ("files_seen", set),
                       ("file_facts", dict), ("chunk_files", dict), ("refused", set)):
        shared(name, kind).clear()
    collector._warned.clear()
    yield
