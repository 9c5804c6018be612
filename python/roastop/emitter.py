"""The sending end of docs/protocol.md: framing, HMAC tags, sequence numbers.

Sending never blocks and never raises into the analysis: a full socket
buffer, an absent roastop or an unresolvable address costs only the message,
which is counted in ``lost``. Nothing here waits on a resolver where chunks
are processed: MetricsCollector resolves the address once on the client
(resolve) and ships the number; an Emitter given a host name looks it up in
a background thread and drops its datagrams until that answers.

Every message is one binary datagram (``RTP2``, docs/protocol.md): a kind
byte, then ``<id><value>`` fields from the kind's table below, a copy of
roastop's. No floats are printed here and no JSON is parsed in roastop.
chunk_start datagrams (kind 0x02: which chunk is in flight) are sent by the
process's heartbeat at its first beat after the chunk began, so none for a
chunk shorter than that, or just before process() runs when the heartbeat
is off; ``ROASTOP_CHUNK_START=0`` or ``Emitter(..., chunk_start=False)``
switches them off, and chunks then carry no ``start_seq``. A field the
table lacks (a custom field) or a value it cannot carry (a list where a
number belongs, a NaN inside ``timing``) is left out of its message and
counted in the Emitter's ``dropped``.

Inside a Dask worker, a process whose UDP does not reach roastop (a batch
node behind a firewall) sends the same datagram bytes through its own
connection to the scheduler instead: ``Worker.log_event`` under the topic
``roastop-datagram``, as ``[port, [bytes, ...]]`` (the port of ROASTOP_ADDR:
which roastop they are for), kept by the collector's route (docs/protocol.md,
"The Dask path"). On that path a process's datagrams wait in a batch, sent as
one event every DASK_FLUSH_INTERVAL seconds by a thread of their own (or at
once by the chunk's thread when the batch reaches DASK_BATCH_COUNT datagrams
or DASK_BATCH_BYTES bytes and no other thread is sending one), at a task's
end once DASK_CHUNK_FLUSH old (in the worker's message that ends the task),
when the Dask worker closes, at interpreter exit, and when MetricsCollector
ends a run (flush_dask_all): one event on the scheduler for many datagrams. Each
process chooses on its first chunk: a hello, and the Dask path when no ack
comes within HELLO_TIMEOUT; ``ROASTOP_TRANSPORT=udp`` or
``dask`` (``Emitter(..., transport=...)``) chooses instead, ``auto`` being
the default (UDP when ROASTOP_HELLO=0 switched hellos off). Outside a worker's task, UDP only. distributed is never
imported here: a worker has it imported already.
"""
import atexit
import hmac
import itertools
import operator
import os
import re
import select
import socket
import struct
import sys
import threading
import time
import uuid

from roastop._state import current_pid, shared
from roastop.instrumentation import MB, process_memory_mb

MAX_DATAGRAM = 65507       # the largest UDP payload; the listener accepts up to this
SOFT_LIMIT = 1400          # keep under a typical MTU: no IP fragmentation
MAX_REPORT_PARTS = 64
RESOLVE_TIMEOUT = 1.0      # seconds MetricsCollector waits for its one name lookup
RESOLVE_RETRY = 30.0       # seconds before a failed background lookup is tried again
KEY_BYTES = 32             # roastop's session key (HMAC-SHA256)
HELLO_TIMEOUT = 0.5        # seconds MetricsCollector waits for roastop's ack of its hello
DATAGRAM_TOPIC = "roastop-datagram"   # the Dask path's topic (route.py keeps it)
DASK_FLUSH_INTERVAL = 0.25  # seconds a Dask-path datagram waits in its process's batch at most
DASK_FLUSH_CHECKS = 5       # the flusher looks this many times an interval
DASK_CHUNK_FLUSH = 0.125    # a task's end sends a batch at least this old (s), in its message
DASK_BATCH_COUNT = 256      # datagrams one Dask-path event carries at most
DASK_BATCH_BYTES = 1 << 16  # and datagram bytes (any one datagram, <= MAX_DATAGRAM, fits)
DASK_PENDING = 8            # batches' worth a process holds unsent at most: past it, lost
DASK_FLUSH_PLUGIN = "roastop-dask-flush"   # the Worker's entry whose hooks send the batches
TRANSPORTS = ("auto", "udp", "dask")


def parse_addr(addr):
    """'host:port' or '[v6]:port' -> (host, port); ValueError otherwise."""
    if not isinstance(addr, str):
        raise ValueError(f"roastop address {addr!r} is not HOST:PORT")
    host, _, port = addr.strip().rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"roastop address {addr!r}: write an IPv6 address as [ADDR]:PORT")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"roastop address {addr!r} is not HOST:PORT")
    return host, int(port)


def _numeric(host, port):
    """(family, type, proto, sockaddr) when host is a numeric address, read
    without a lookup (AI_NUMERICHOST: the resolver is never asked); None for
    a host name."""
    try:
        family, kind, proto, _, target = socket.getaddrinfo(
            host, port, 0, socket.SOCK_DGRAM, 0, socket.AI_NUMERICHOST | socket.AI_NUMERICSERV)[0]
    except (OSError, IndexError, UnicodeError):
        return None
    return family, kind, proto, target


class _Lookup:
    """One name lookup in a daemon thread, so that nobody waits on a resolver
    that may never answer (glibc's own limit is 5 s per server and attempt).
    ``result`` is set as _numeric's when it answers, ``error`` and ``failed``
    (a monotonic time) when it fails; ``done`` is set either way."""

    def __init__(self, host, port):
        self.pid = os.getpid()
        self.result = self.error = self.failed = None
        self.done = threading.Event()
        try:
            threading.Thread(target=self._run, args=(host, port), daemon=True,
                             name="roastop-resolve").start()
        except RuntimeError as exc:             # no thread to be had: try again later
            self._fail(exc)
            self.done.set()

    def _run(self, host, port):
        try:
            family, kind, proto, _, target = socket.getaddrinfo(host, port, 0,
                                                                socket.SOCK_DGRAM)[0]
            self.result = (family, kind, proto, target)
        except Exception as exc:  # noqa: BLE001 - gaierror mostly; the reason is kept
            self._fail(exc)
        finally:
            self.done.set()

    def _fail(self, exc):
        self.error, self.failed = exc, time.monotonic()

    def stale(self):
        """True when a new lookup should replace this one: it failed
        RESOLVE_RETRY seconds ago, or its thread stayed in the parent of a fork."""
        if self.failed is not None:
            return time.monotonic() - self.failed >= RESOLVE_RETRY
        return self.result is None and self.pid != os.getpid()


def resolve(addr, timeout=RESOLVE_TIMEOUT):
    """addr with its host name replaced by the numeric address it resolves
    to ("10.0.0.5:8790", "[fd00::5]:8790"), for MetricsCollector to ship to
    the workers. The lookup is made once and waited for at most ``timeout``
    seconds; its daemon thread is left to finish, or hang, on its own.
    ValueError when addr is not HOST:PORT; OSError when the name does not
    resolve in time."""
    host, port = parse_addr(addr)
    found = _numeric(host, port)
    if found is None:
        lookup = _Lookup(host, port)
        if not lookup.done.wait(timeout):
            raise OSError(f"roastop address {addr!r} did not resolve within {timeout:g} s")
        if lookup.result is None:
            raise OSError(f"roastop address {addr!r} does not resolve ({lookup.error})")
        found = lookup.result
    family, target = found[0], found[3]
    if family == socket.AF_INET6:
        return f"[{target[0]}]:{target[1]}"
    return f"{target[0]}:{target[1]}"


# The one rule roastop's --key-file follows too: 64 hex digits, then at most
# one newline, nothing else (a key roastop took must never be refused here).
_KEY_TEXT = re.compile(r"[0-9A-Fa-f]{64}(?:\r?\n)?")


def parse_key(key):
    """The 32 key bytes: given raw (bytes), or as text (ROASTOP_KEY, a key
    file's content) of exactly 64 hex digits optionally followed by one
    newline ("\\n" or "\\r\\n"). None for None or ''. ValueError for
    anything else, saying what is wrong without repeating the key."""
    if key is None or key == "" or key == b"":
        return None
    if isinstance(key, (bytes, bytearray)):
        if len(key) != KEY_BYTES:
            raise ValueError(f"roastop key is {len(key)} bytes, not {KEY_BYTES}")
        return bytes(key)
    if not isinstance(key, str):
        raise ValueError(f"roastop key is a {type(key).__name__}, not hex text")
    if not _KEY_TEXT.fullmatch(key):
        raise ValueError(f"roastop key {_key_fault(key)}: a key (ROASTOP_KEY) is exactly "
                         "64 hex digits, optionally followed by one newline")
    return bytes.fromhex(key[:64])


def _key_fault(text):
    """What is wrong with a key text that does not match _KEY_TEXT."""
    digits = len(text) - len(text.lstrip("0123456789abcdefABCDEF"))
    if digits > 64:
        return f"has {digits} hex digits"
    if digits == 64:
        return "has something after its 64 hex digits"
    if digits == len(text):
        return f"has only {digits} hex digits"
    return f"has a character that is not a hex digit at position {digits + 1}"


class _Mac:
    """HMAC-SHA256 under one key, for frame (``tag(body)``):
    the standard library's one-shot hmac.digest (OpenSSL's HMAC). A
    hand-rolled one on the interpreter's private SHA-256 saved microseconds
    of a chunk's milliseconds (bench/RESULTS.md, 2026-11-28): no user saw
    them, and a second RFC 2104 was one more thing to get right."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = bytes(key)

    def tag(self, body):
        return hmac.digest(self.key, body, "sha256")


def keyed_mac(key):
    """The tagger of frame for key; None without a key."""
    return _Mac(key) if key else None


# The datagram (docs/protocol.md).

V2_MAX_STRING = 4096       # bytes of UTF-8 in one str
V2_MAX_LIST = 65535        # items of a strlist (its count is a u16)
V2_MAX_KV = 256            # entries of a kv

_NUM, _STR, _STRLIST, _KV, _META = range(5)

# Per kind, name -> (id, encoding); integer fields are plain nums (roastop
# checks them). roastop's tables (src/event/event_field.c for the events'
# fields, src/event/event_datagram.c for the envelope's) are where the ids
# are defined: tests/integration/test_wire_table.py compares.
_ENVELOPE = {"host": (16, _STR), "pid": (23, _NUM), "seq": (24, _NUM), "sent": (65, _NUM),
             "instance": (66, _NUM)}
_CHUNK_FIELDS = {
    "accessed_branches": (1, _STRLIST), "accessed_bytes": (2, _NUM),
    "accessed_uncompressed_bytes": (3, _NUM), "branches_read_percent": (4, _NUM),
    "bytes": (5, _KV), "bytes_read": (6, _NUM), "bytes_read_percent": (7, _NUM),
    "cpu_time": (8, _NUM), "cpu_wait": (72, _NUM), "dataset": (9, _STR),
    "duration": (10, _NUM),
    "entry_start": (11, _NUM), "entry_stop": (12, _NUM), "error": (13, _STR),
    "file": (14, _STR), "file_metadata": (15, _META), "host": (16, _STR),
    "mem_after_mb": (17, _NUM), "mem_before_mb": (18, _NUM), "mem_delta_mb": (19, _NUM),
    "memory": (20, _KV), "num_branches_accessed": (21, _NUM), "num_events": (22, _NUM),
    "pid": (23, _NUM), "seq": (24, _NUM), "t_end": (25, _NUM), "t_start": (26, _NUM),
    "timestamp": (27, _NUM), "timing": (28, _KV), "uuid": (29, _STR), "worker": (30, _STR),
    "run_id": (64, _STR), "sent": (65, _NUM), "instance": (66, _NUM), "start_seq": (67, _NUM),
}
_META_FIELDS = {"compression_ratio": (1, _NUM), "filename": (2, _STR),
                "total_branches": (3, _NUM), "total_tree_bytes": (4, _NUM)}
# The fields of a chunk's Static that its chunk_start carries too; with the
# entry range, worker, t_start and the envelope, the only ones a kind-2 body
# may hold (any other id there is bad_binary).
_START_STATIC = frozenset(("run_id", "dataset", "file", "uuid"))
_START_FIELDS = {name: _CHUNK_FIELDS[name] for name in sorted(_START_STATIC) + [
    "entry_start", "entry_stop", "worker", "t_start", "host", "pid", "seq", "sent", "instance"]}
# A heartbeat's fields (kind 0x03): the chunk's ids for the names they share.
_HEARTBEAT_FIELDS = {
    "cpu_time": (8, _NUM), "worker": (30, _STR), "rss_bytes": (31, _NUM),
    "chunks_in_flight": (32, _NUM), "interval": (33, _NUM), **_ENVELOPE,
}
_RUN_START_FIELDS = {
    "client_host": (1, _STR), "client_pid": (2, _NUM), "datasets": (3, _STRLIST),
    "expected_events": (4, _NUM), "name": (5, _STR), "processor": (6, _STR),
    "run_id": (64, _STR), **_ENVELOPE,
}
_RUN_END_FIELDS = {
    "error_message": (1, _STR), "error_type": (2, _STR), "reason": (3, _STR),
    "status": (4, _STR), "run_id": (64, _STR), **_ENVELOPE,
}
_REPORT_FIELDS = {
    "bytesread": (1, _NUM), "chunks": (2, _NUM), "columns": (3, _STRLIST), "entries": (4, _NUM),
    "processtime": (5, _NUM), "run_id": (64, _STR), "report_id": (68, _STR), "part": (69, _NUM),
    "parts": (70, _NUM), **_ENVELOPE,
}
_HELLO_FIELDS = {"host": (16, _STR), "pid": (23, _NUM), "sent": (65, _NUM),
                 "instance": (66, _NUM), "nonce": (71, _STR)}
_ACK_FIELDS = {"nonce": (71, _STR)}
# "type" -> (kind byte, table)
KINDS = {
    "chunk": (b"\x01", _CHUNK_FIELDS), "chunk_start": (b"\x02", _START_FIELDS),
    "heartbeat": (b"\x03", _HEARTBEAT_FIELDS), "run_start": (b"\x04", _RUN_START_FIELDS),
    "run_end": (b"\x05", _RUN_END_FIELDS), "report": (b"\x06", _REPORT_FIELDS),
    "hello": (b"\x07", _HELLO_FIELDS), "ack": (b"\x08", _ACK_FIELDS),
}
_KIND_CHUNK = KINDS["chunk"][0]
_KIND_CHUNK_START = KINDS["chunk_start"][0]


class _Struct(struct.Struct):
    """A struct.Struct that pickles (by its format): cloudpickle carries this
    module by value to Dask workers, pre-bound packers included."""

    def __reduce__(self):
        return (type(self), (self.format,))


# Pre-bound packers, the id and its value (or length) in one call: a pack
# costs more than any other step per field.
_pack_id_num = _Struct("<Bd").pack
_pack_id_u16 = _Struct("<BH").pack
_pack_id_u8 = _Struct("<BB").pack
_pack_u16 = _Struct("<H").pack
_pack_num = _Struct("<d").pack
_U16 = tuple(struct.pack("<H", n) for n in range(256))   # short lengths: a lookup, not a pack


class _Unsendable(Exception):
    """A value the field's encoding cannot carry: the field is left out."""


def _u16(n):
    """A string's u16 length beyond _U16; over V2_MAX_STRING cannot be sent."""
    if n > V2_MAX_STRING:
        raise _Unsendable
    return _pack_u16(n)


def _as_float(value):
    """A num value that is not a float: an int (not a bool), or an object
    whose .item() is an int or a float (numpy scalars); anything else is
    not a num."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)               # OverflowError beyond a double
    item = getattr(value, "item", None)
    if item is None:
        raise _Unsendable
    try:
        value = item()
    except Exception:  # noqa: BLE001
        raise _Unsendable from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise _Unsendable


def _utf8(value):
    """A str's bytes; a lone surrogate becomes '?' (the strict encoder is
    the fast one, and raises only for those). Longer ones than roastop takes
    cannot be sent."""
    if not isinstance(value, str):
        raise _Unsendable
    try:
        data = value.encode()
    except UnicodeEncodeError:
        data = value.encode("utf-8", "replace")
    if len(data) > V2_MAX_STRING:
        raise _Unsendable
    return data


def _strlist(fid, value, append):
    """Appends a list of str (hundreds of branch names are common: the loop
    is inline)."""
    if not isinstance(value, (list, tuple)) or len(value) > V2_MAX_LIST:
        raise _Unsendable
    append(_pack_id_u16(fid, len(value)))
    for item in value:
        if not isinstance(item, str):
            raise _Unsendable
        try:
            data = item.encode()
        except UnicodeEncodeError:
            data = item.encode("utf-8", "replace")
        n = len(data)
        append(_U16[n] if n < 256 else _u16(n))
        append(data)


def _kv(fid, value, append):
    """Appends a name -> number section. A NaN or None value cannot be sent:
    the section is left out whole rather than sent without the entry."""
    if not isinstance(value, dict) or len(value) > V2_MAX_KV:
        raise _Unsendable
    append(_pack_id_u16(fid, len(value)))
    for name, number in value.items():
        data = _utf8(name)                         # a few names: no need to inline
        if not isinstance(number, float):
            number = _as_float(number)
        if number - number != 0.0:                 # inf - inf and nan - nan are nan
            raise _Unsendable
        n = len(data)
        append(_U16[n] if n < 256 else _u16(n))
        append(data)
        append(_pack_num(number))


def _meta(fid, value, append):
    """Appends file_metadata: a None or non-finite member is left out (not
    given); no filename, or an unknown member, cannot be sent."""
    if not isinstance(value, dict) or value.get("filename") is None:
        raise _Unsendable
    parts = []
    for name, member in value.items():
        mid, kind = _META_FIELDS[name]             # KeyError: an unknown member
        if member is None:
            continue
        if kind == _STR:
            data = _utf8(member)
            parts.append(_pack_id_u16(mid, len(data)) + data)
            continue
        number = member if isinstance(member, float) else _as_float(member)
        if number - number == 0.0:
            parts.append(_pack_id_num(mid, number))
    append(_pack_id_u8(fid, len(parts)))
    append(b"".join(parts))


_ENCODERS = {_STRLIST: _strlist, _KV: _kv, _META: _meta}


def _fields_v2(msg):
    """The ``<id><value>`` bytes of msg's fields (as _append_fields)."""
    out = []
    _append_fields(msg, out.append)
    return b"".join(out)


_UNSENDABLE = (KeyError, _Unsendable, OverflowError, struct.error, TypeError, ValueError)


def encode(msg):
    """The body of a message (its "type" names the kind): ``<id><value>``
    for each field in msg's own order; a None or non-finite number is left
    out (not given). (body, dropped): the fields left out because the
    kind's table lacks them or cannot carry their value are counted."""
    kind, fields = KINDS[msg["type"]]
    out, dropped = [kind], 0
    for name, value in msg.items():
        if name == "type":
            continue
        part = []
        try:
            _append_fields({name: value}, part.append, fields)
        except _UNSENDABLE:
            dropped += 1
            continue
        out.extend(part)
    return b"".join(out), dropped


def _append_fields(msg, append, fields=None):
    """Appends ``<id><value>`` for each field of msg (ids and encodings from
    ``fields``, the chunk's when None). Raises KeyError (a custom field),
    _Unsendable, OverflowError or struct.error for what the table cannot carry.
    Written for speed (the decorator's budget per chunk is 50 us): the
    common cases, a float, an int, a str, are handled inline."""
    fields = fields or _CHUNK_FIELDS
    pack_id_num = _pack_id_num
    for name, value in msg.items():
        fid, kind = fields[name]                 # KeyError: a custom field
        if kind == _NUM:
            if isinstance(value, float):
                if value - value == 0.0:         # finite: inf - inf and nan - nan are nan
                    append(pack_id_num(fid, value))
            elif isinstance(value, int) and value is not True and value is not False:
                append(pack_id_num(fid, value))  # struct.error beyond a double
            elif value is not None:
                value = _as_float(value)
                if value - value == 0.0:
                    append(pack_id_num(fid, value))
        elif kind == _STR:
            if isinstance(value, str):
                try:
                    data = value.encode()
                except UnicodeEncodeError:       # a lone surrogate: '?'
                    data = value.encode("utf-8", "replace")
                if len(data) > V2_MAX_STRING:
                    raise _Unsendable
                append(_pack_id_u16(fid, len(data)))
                append(data)
            elif value is not None:
                raise _Unsendable
        elif value is not None:
            _ENCODERS[kind](fid, value, append)


_V2_OF = operator.attrgetter("v2")   # C calls, no comprehension's frame per chunk


class Static:
    """Chunk fields that repeat from chunk to chunk (a file's run, dataset
    and name; the branches its chunks read), encoded once as datagram
    fields (``v2``, None when they have none) and kept by the decorator for
    the chunks that follow: Emitter.send_chunk(..., static=(...))."""

    __slots__ = ("fields", "v2")

    def __init__(self, fields):
        self.fields = fields
        try:
            self.v2 = _fields_v2(fields) if _OWN_FIELDS.isdisjoint(fields) else None
        except _UNSENDABLE:
            self.v2 = None


# The decorator's own numbers, which it measured itself: always finite
# floats (the memory pair None when RSS could not be read). They skip the
# checks of _append_fields and go, with the envelope's numbers, in one pack.
MEASURED = ("t_start", "t_end", "timestamp", "cpu_time", "mem_before_mb", "mem_after_mb")


def chunk_message(measured, fields):
    """The chunk message for the decorator's MEASURED numbers (a tuple in
    that order) and its other fields: duration and mem_delta_mb derived, the
    memory fields left out unless both were read."""
    t_start, t_end, timestamp, cpu_time, mem_before, mem_after = measured
    msg = {"type": "chunk", "t_start": t_start, "t_end": t_end, "duration": t_end - t_start}
    if mem_before is not None and mem_after is not None:
        msg["mem_before_mb"] = mem_before
        msg["mem_after_mb"] = mem_after
        msg["mem_delta_mb"] = mem_after - mem_before
    msg["timestamp"] = timestamp
    msg["cpu_time"] = cpu_time
    msg.update(fields)
    return msg


ERROR_TYPE_MAX = 200        # characters of a failed run's exception type in run_end
ERROR_MESSAGE_MAX = 1000    # and of its message (then cut further to fit SOFT_LIMIT)


def _cut(text, limit):
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def run_end_message(run_id, exc_type=None, exc=None):
    """run_end for a run that completed (exc_type None) or failed with the
    exception exc_type(exc): its qualified type name and its message, each
    cut to ERROR_TYPE_MAX / ERROR_MESSAGE_MAX characters. Never raises: an
    exception whose str() fails is sent with its type only."""
    msg = {"type": "run_end", "run_id": run_id, "status": "completed"}
    if exc_type is None:
        return msg
    msg["status"] = "failed"
    try:
        name = getattr(exc_type, "__qualname__", None) or str(exc_type)
        module = getattr(exc_type, "__module__", None)
        if module and module != "builtins":
            name = f"{module}.{name}"
        msg["error_type"] = _cut(str(name), ERROR_TYPE_MAX)
    except Exception:  # noqa: BLE001 - telemetry never raises
        msg["error_type"] = "?"
    try:
        msg["error_message"] = _cut(str(exc), ERROR_MESSAGE_MAX)
    except Exception:  # noqa: BLE001 - a __str__ that raises
        pass
    return msg


# What chunk_datagram writes itself: fields naming one of these take the
# generic path, where the later value wins as in a dict (written twice, the
# field would make roastop refuse the datagram).
_OWN_FIELDS = frozenset(("type", "duration", "mem_delta_mb", "host", "pid", "instance", "seq",
                         "sent") + MEASURED)


def _fid(name):
    return _CHUNK_FIELDS[name][0]


_ID_T_START, _ID_T_END, _ID_DURATION = _fid("t_start"), _fid("t_end"), _fid("duration")
_ID_TIMESTAMP, _ID_CPU_TIME = _fid("timestamp"), _fid("cpu_time")
_ID_PID, _ID_SEQ, _ID_SENT = _fid("pid"), _fid("seq"), _fid("sent")
_ID_INSTANCE = _fid("instance")
_ID_MEM_BEFORE, _ID_MEM_AFTER = _fid("mem_before_mb"), _fid("mem_after_mb")
_ID_MEM_DELTA = _fid("mem_delta_mb")
_pack_times = _Struct("<" + "Bd" * 9).pack
_pack_memory = _Struct("<" + "Bd" * 3).pack


def _measured_v2(measured, pid, instance, seq, sent):
    """chunk_message's numbers and the envelope's pid, instance, seq and sent
    as datagram fields, in one or two packs."""
    t_start, t_end, timestamp, cpu_time, mem_before, mem_after = measured
    times = _pack_times(_ID_T_START, t_start, _ID_T_END, t_end, _ID_DURATION, t_end - t_start,
                        _ID_TIMESTAMP, timestamp, _ID_CPU_TIME, cpu_time,
                        _ID_PID, pid, _ID_INSTANCE, instance, _ID_SEQ, seq, _ID_SENT, sent)
    if mem_before is None or mem_after is None:
        return times
    return times + _pack_memory(_ID_MEM_BEFORE, mem_before, _ID_MEM_AFTER, mem_after,
                                _ID_MEM_DELTA, mem_after - mem_before)


def frame(body, mac):
    """``RTP2``, flags 0x01 and the raw 32-byte HMAC-SHA256(key, body) before
    the body (``mac`` from keyed_mac); flags 0x00 and no tag without a key."""
    if mac is not None:
        return b"".join((b"RTP2\x01", mac.tag(body), body))
    return b"RTP2\x00" + body


def ack_ok(data, mac, nonce):
    """Is data roastop's ack of nonce (docs/protocol.md, "Hello and
    acknowledgement"): kind 0x08 and the nonce, tagged under mac, or
    untagged only when there is no key?"""
    body, _ = encode({"type": "ack", "nonce": nonce})
    want = frame(body, mac)
    return hmac.compare_digest(bytes(data), want)


_SWITCHED_OFF = ("0", "false", "no", "off")


def parse_chunk_start(chunk_start=None):
    """Whether an Emitter sends chunk_start: ``chunk_start`` when given, else
    ROASTOP_CHUNK_START, on unless it is 0 (or false, no, off: a switch
    misspelt keeps the default rather than costing the process its metrics)."""
    if chunk_start is None:
        text = os.environ.get("ROASTOP_CHUNK_START", "").strip().lower()
        return text not in _SWITCHED_OFF
    return bool(chunk_start)


def parse_transport(transport=None):
    """"auto", "udp" or "dask": transport when given, else ROASTOP_TRANSPORT;
    anything else (unset, a typo) is auto."""
    if transport is None:
        transport = os.environ.get("ROASTOP_TRANSPORT", "")
    text = str(transport).strip().lower()
    return text if text in TRANSPORTS else "auto"


def dask_worker():
    """The Dask worker running this thread's task, or None: distributed not
    imported (not a worker), or no task of a worker on this thread."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        # get_worker() reads this context variable and raises twice when it
        # is unset, as on a client that imported distributed: asked directly
        cvar = getattr(getattr(distributed, "worker", None), "_worker_cvar", None)
        return cvar.get(None) if cvar is not None else distributed.get_worker()
    except Exception:  # noqa: BLE001 - ValueError outside a task; anything else alike
        return None


def parse_heartbeat(heartbeat=None):
    """Whether an Emitter sends heartbeats: ``heartbeat`` when given, else
    ROASTOP_HEARTBEAT, on unless it is 0 (or false, no, off), as
    parse_chunk_start."""
    if heartbeat is None:
        text = os.environ.get("ROASTOP_HEARTBEAT", "").strip().lower()
        return text not in _SWITCHED_OFF
    return bool(heartbeat)


HEARTBEAT_INTERVAL = 1.0   # seconds between a process's heartbeats


class Heartbeat:
    """One process's heartbeat (docs/protocol.md, "heartbeat"): a daemon
    thread that sends its RSS, CPU time, chunks in flight (and the Dask
    worker's name) through the emitter every ``interval`` seconds, so that
    roastop draws worker timelines without a scheduler to ask. Made for the
    process that starts it: a forked child, where the thread does not exist,
    makes its own (Emitter.chunk_began). Stopped at interpreter exit; never
    raises into the analysis."""

    def __init__(self, emitter, interval=HEARTBEAT_INTERVAL, worker=None):
        self.pid = os.getpid()
        self.emitter, self.interval, self.worker = emitter, interval, worker
        self.in_flight = 0
        self.pending = {}             # id(start) -> Emitter.chunk_begin's handle
        self.beats = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="roastop-heartbeat")
        self._thread.start()          # RuntimeError (no thread to be had): the caller's
        atexit.register(self.stop)

    def add(self, n):
        with self._lock:
            self.in_flight += n

    def begin(self, start):
        """A chunk in flight; start (Emitter.chunk_begin's handle), unless
        None, pending: announce sends its chunk_start."""
        with self._lock:
            self.in_flight += 1
            if start is not None:
                self.pending[id(start)] = start

    def end(self, start):
        """The chunk of begin ended: no longer in flight nor pending. Under
        the lock announce holds while it sends, so its start was sent before
        this or will never be (chunk_end then reads its seq, or None)."""
        with self._lock:
            self.in_flight -= 1
            if start is not None:
                self.pending.pop(id(start), None)

    def announce(self):
        """Sends the chunk_start of each chunk pending and not yet
        announced, with its own t_start, and keeps the seq it went with for
        the chunk's start_seq. A start that could not be sent (counted in
        the emitter's lost) is tried again at the next beat."""
        with self._lock:
            for start in self.pending.values():
                if start[6] is None:
                    start[6] = self.emitter.send_chunk_start(*start[1:6])

    def message(self):
        msg = {"type": "heartbeat", "cpu_time": time.process_time(),
               "chunks_in_flight": self.in_flight, "interval": self.interval}
        mb = process_memory_mb()  # the decorator's reading: one kept descriptor
        if mb is not None:
            msg["rss_bytes"] = int(mb * MB)  # pages x page size over 2^20: exact back
        if self.worker is not None:
            msg["worker"] = self.worker
        return msg

    def _run(self):
        while True:
            try:
                self.announce()
                if self.emitter.send(self.message()):
                    self.beats += 1
            except Exception:  # noqa: BLE001 - a heartbeat is never worth a traceback
                pass
            if self._stop.wait(self.interval):
                return

    def alive(self):
        return self._thread.is_alive()

    def stop(self, timeout=2.0):
        """Ends the thread (at most ``timeout`` seconds' wait); idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)


_ID_ENTRY_START, _ID_ENTRY_STOP = _fid("entry_start"), _fid("entry_stop")
_pack_start_head = _Struct("<" + "Bd" * 5).pack
_pack_entries = _Struct("<BdBd").pack
_ENTRY_MAX = 2 ** 53       # an entry a double holds exactly; beyond: the generic path
START_PREFIX_MAX = 256     # Static records whose chunk_start prefix an Emitter keeps


def _start_static(static):
    """static's fields a chunk_start carries (run_id, dataset, file, uuid)."""
    if static is None:
        return {}
    return {k: v for k, v in static.fields.items() if k in _START_STATIC}


def _start_rest(entry_start, entry_stop, worker):
    """The datagram bytes of a chunk_start's entry range and worker: the
    common case (two ints) in one pack. Raises as _append_fields."""
    if (type(entry_start) is int and type(entry_stop) is int
            and -_ENTRY_MAX < entry_start < _ENTRY_MAX and -_ENTRY_MAX < entry_stop < _ENTRY_MAX):
        if worker is None:
            return _pack_entries(_ID_ENTRY_START, entry_start, _ID_ENTRY_STOP, entry_stop)
        out = [_pack_entries(_ID_ENTRY_START, entry_start, _ID_ENTRY_STOP, entry_stop)]
        _append_fields({"worker": worker}, out.append)
    else:
        out = []
        _append_fields({name: value for name, value in (
            ("entry_start", entry_start), ("entry_stop", entry_stop), ("worker", worker))
            if value is not None}, out.append)
    return b"".join(out)


INSTANCE_MAX = 2 ** 53 - 1   # an instance id is a whole number a double holds exactly


def new_instance():
    """A random instance id in 1..INSTANCE_MAX (0 is an emitter without one):
    a restarted process that reuses a host and pid is a new sender."""
    return int.from_bytes(os.urandom(7), "little") % INSTANCE_MAX + 1


class Emitter:
    """A non-blocking UDP socket and a sequence counter, one of each per process.

    ``send`` adds the envelope (host, pid, instance, seq, sent); ``sent`` and ``lost``
    count datagrams handed to the kernel and datagrams that were not;
    ``dropped`` the fields left out of messages (see encode)."""

    TAKES_STATIC = True     # send_chunk's static: the decorator asks (older ones lack it)

    def __init__(self, addr, key=None, chunk_start=None, heartbeat=None, transport=None):
        self.addr = addr
        self.transport = parse_transport(transport)
        self.path = "udp"         # this process's path, chosen on its first chunk (choose_path)
        self._path_pid = None     # the process that chose it
        self._worker = None       # the Dask worker whose connection the dask path takes
        self.sent_dask = 0        # of sent: through the worker's Dask connection
        self.batches_dask = 0     # the events (log_event calls) they went in
        self._batch, self._batch_bytes = [], 0   # the Dask path's datagrams not sent yet
        self._batch_since = 0.0   # time.monotonic() when the batch's first one came
        self._batch_lock = threading.Lock()      # held to append or take them, never to send
        self._send_lock = threading.Lock()       # held by the one thread sending a batch
        self._flusher = None      # this process's _DaskFlusher, on the dask path
        # ROASTOP_HELLO=0 switches hellos off: auto cannot check, and stays on UDP
        self._check = os.environ.get("ROASTOP_HELLO", "").strip() != "0"
        self.key = parse_key(key)
        self.chunk_start = parse_chunk_start(chunk_start)
        self.heartbeat = parse_heartbeat(heartbeat)
        self._beat = None         # this process's Heartbeat, made on its first chunk
        self.sent = 0
        self.lost = 0
        self.dropped = 0
        self._host = socket.gethostname()
        self._pid = None
        self._instance = None
        self._seq = None
        self._sock = None
        self._target = None
        self.unresolved = 0       # of lost: sent before a host name's lookup answered
        self._found = self._lookup = None
        try:
            self._resolve()       # a host name's lookup starts now, in the background
        except ValueError:        # not HOST:PORT: every message is lost
            pass
        self._mac = keyed_mac(self.key)
        self._host_v2 = _fields_v2({"host": self._host})   # a host name is <= 255 bytes
        self._start_prefix = {}   # Static (or None) -> kind, host and its fields, encoded

    def _socket(self):
        pid = current_pid()
        if self._pid == pid and self._sock is not None:
            return self._sock
        # the chunk's thread and the heartbeat's meet here on a process's first
        # use: one of them makes the numbers and the socket, not both (two
        # counters would send one seq twice, a socket would leak)
        with shared("emitter_locks", dict).setdefault(pid, threading.Lock()):
            return self._socket_made(pid)

    def _socket_made(self, pid):
        if self._pid != pid:
            # a new process (first use, or a forked child): its own sender, socket and numbers
            if self._sock is not None and self._pid is not None:
                try:
                    self._sock.close()
                except OSError:
                    pass
            self._pid, self._seq, self._sock = pid, itertools.count(), None
            self._instance = new_instance()   # drawn in this process, not inherited
        if self._sock is None:
            if self._found is None and self._resolve() is None:
                self.unresolved += 1
                raise OSError(f"roastop address {self.addr!r} not resolved (yet)")
            family, kind, proto, target = self._found
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                # connected: each send skips the address's conversion and
                # the kernel's route lookup, which cold after a process()
                # body cost more than the rest of the send (bench/RESULTS.md)
                sock.connect(target)
            except OSError:
                sock.close()
                raise
            self._sock, self._target = sock, target
        return self._sock

    def _resolve(self):
        """(family, type, proto, sockaddr) to send to, or None while unknown;
        never waits on a resolver (this runs on the thread that processes
        chunks): a numeric address at once, a host name through a _Lookup in
        the background (made again RESOLVE_RETRY seconds after one fails)."""
        host, port = parse_addr(self.addr)
        found = _numeric(host, port)
        if found is None:
            lookup = self._lookup
            if lookup is None or lookup.stale():
                lookup = self._lookup = _Lookup(host, port)
            found = lookup.result
        self._found = found
        return found

    def envelope(self, msg):
        """msg plus host, pid, instance, seq (the next number of this process)
        and sent."""
        msg = dict(msg)
        msg["host"] = self._host
        msg["pid"] = self._pid
        msg["instance"] = self._instance
        msg["seq"] = next(self._seq)
        msg["sent"] = time.time()
        return msg

    def datagram(self, msg):
        """The framed bytes for one message (envelope included)."""
        body, dropped = encode(self.envelope(msg))
        self.dropped += dropped
        return frame(body, self._mac)

    def chunk_datagram(self, measured, fields, static=()):
        """The framed bytes of chunk_message(measured, fields + each of
        static's fields), the same message as datagram() would make of it,
        built without that dict: the decorator's numbers and the envelope in
        one pack, the host's field made once, static's fields (Static, the
        ones that repeat from chunk to chunk) already encoded; through
        datagram() when a field is one the table lacks or cannot carry."""
        if _OWN_FIELDS.isdisjoint(fields):
            out = list(map(_V2_OF, static))      # a None (not v2): join raises TypeError
            try:
                _append_fields(fields, out.append)
                body = b"".join(out)
            except Exception:  # noqa: BLE001 - an odd value: datagram() leaves it out
                body = None
            if body is not None:          # the sequence number is taken only now: no gap
                head = _measured_v2(measured, self._pid, self._instance, next(self._seq),
                                    time.time())
                return frame(b"".join((_KIND_CHUNK, self._host_v2, head, body)), self._mac)
        for part in static:
            fields = dict(part.fields, **fields)
        return self.datagram(chunk_message(measured, fields))

    def chunk_start_datagram(self, t_start, static=None, entry_start=None, entry_stop=None,
                             worker=None):
        """(framed bytes, seq) of a chunk_start (kind 0x02), with static's
        (a chunk's Static of run_id, dataset, file, uuid) bytes as they
        are; field by field (encode) when a value is one the table cannot
        carry."""
        try:
            prefix = self._start_prefix.get(static) or self._start_prefix_of(static)
            rest = _start_rest(entry_start, entry_stop, worker)
            t = t_start if isinstance(t_start, float) else _as_float(t_start)
            if t - t != 0.0:                 # NaN or infinite: not given
                raise _Unsendable
        except _UNSENDABLE:
            pass
        else:
            seq = next(self._seq)            # taken only now: no gap
            head = _pack_start_head(_ID_T_START, t, _ID_PID, self._pid, _ID_INSTANCE,
                                    self._instance, _ID_SEQ, seq, _ID_SENT, time.time())
            return frame(b"".join((prefix, head, rest)), self._mac), seq
        msg = {"type": "chunk_start", **_start_static(static)}
        for name, value in (("entry_start", entry_start), ("entry_stop", entry_stop),
                            ("worker", worker)):
            if value is not None:
                msg[name] = value
        msg["t_start"] = t_start
        msg = self.envelope(msg)
        body, dropped = encode(msg)
        self.dropped += dropped
        return frame(body, self._mac), msg["seq"]

    def _start_prefix_of(self, static):
        """The kind byte, host and static's fields of a chunk_start, encoded
        once per Static (a file's chunks share one): its v2 bytes as they are
        when it holds only fields a kind-2 body allows. Raises as
        _append_fields when the table cannot carry them."""
        if static is not None and static.v2 is not None and _START_STATIC.issuperset(
                static.fields):
            prefix = b"".join((_KIND_CHUNK_START, self._host_v2, static.v2))
        else:
            prefix = b"".join((_KIND_CHUNK_START, self._host_v2,
                               _fields_v2(_start_static(static))))
        cache = self._start_prefix
        if len(cache) >= START_PREFIX_MAX:
            cache.clear()
        try:
            cache[static] = prefix
        except TypeError:                        # not hashable: made again next time
            pass
        return prefix

    def send_chunk_start(self, t_start, static=None, entry_start=None, entry_stop=None,
                         worker=None):
        """Sends a chunk_start (see chunk_start_datagram) unless switched
        off (``chunk_start``); the seq it was sent with, for the chunk's
        ``start_seq``, or None when nothing was sent (switched off, no
        address yet, a full socket buffer: then counted in ``lost``).
        Never raises, never blocks."""
        if not self.chunk_start:
            return None
        try:
            sock = self._socket()
            data, seq = self.chunk_start_datagram(t_start, static, entry_start, entry_stop,
                                                  worker)
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return None
        return seq if self._put(sock, data) else None

    def chunk_began(self, worker=None):
        """A chunk starts in this process: its heartbeat (started now when
        this is the process's first chunk, unless switched off) counts it in
        flight until ``add(-1)``. The Heartbeat, or None. Never raises."""
        self.choose_path()
        beat = self._heartbeat(worker)
        if beat is not None:
            beat.add(1)
        return beat

    def chunk_begin(self, t_start, static=None, entry_start=None, entry_stop=None,
                    worker=None):
        """A chunk begins at t_start: the handle chunk_end takes. With a
        heartbeat, the chunk is counted in flight and its chunk_start left
        pending for the heartbeat to send at its next beat (Heartbeat.announce),
        unless it ends first: a chunk shorter than a beat sends none. Without
        one (switched off, or no thread to be had), the start is sent now,
        as send_chunk_start."""
        self.choose_path()
        beat = self._heartbeat(worker)
        start = [beat, t_start, static, entry_start, entry_stop, worker, None]
        if beat is None:
            start[6] = self.send_chunk_start(t_start, static, entry_start, entry_stop, worker)
        else:
            beat.begin(start if self.chunk_start else None)
        return start

    def chunk_end(self, start):
        """The chunk of chunk_begin's handle start ended: no longer in
        flight, its start no longer pending. The seq its chunk_start went
        with (the chunk's start_seq), or None when none was sent. Called
        before the chunk is sent, so that a start is never sent after it."""
        beat = start[0]
        if beat is not None:
            beat.end(start)
        return start[6]

    def _heartbeat(self, worker):
        """This process's Heartbeat, started on its first chunk; None when
        switched off or when no thread can be had. Never raises."""
        if not self.heartbeat:
            return None
        beat = self._beat
        try:
            pid = current_pid()
            if beat is None or beat.pid != pid:
                # a worker's threads: one beat; a lock per pid, as a fork may copy it held
                locks = shared("heartbeat_locks", dict)
                with locks.setdefault(pid, threading.Lock()):
                    beat = self._beat
                    if beat is None or beat.pid != pid:
                        beat = self._beat = Heartbeat(self, worker=worker)
        except Exception:  # noqa: BLE001 - no thread: the chunks go on without beats
            self.heartbeat = False
            return None
        return beat

    def choose_path(self):
        """This process's path, chosen once (on its first chunk, from the
        task's thread, where get_worker answers): "dask" when the process is
        a Dask worker's and ROASTOP_TRANSPORT says dask, or says auto and
        no ack answers a hello; else "udp". Never raises."""
        pid = current_pid()
        if self._path_pid == pid:
            return self.path
        with shared("transport_locks", dict).setdefault(pid, threading.Lock()):
            if self._path_pid != pid:
                worker = dask_worker() if self.transport != "udp" else None
                dask = worker is not None and (self.transport == "dask" or
                                               (self._check and not self.hello()))
                self._worker, self.path = (worker, "dask") if dask else (None, "udp")
                if dask:
                    self._dask_begin(worker)
                self._path_pid = pid
        return self.path

    def _dask_begin(self, worker):
        """This process takes the Dask path: its own batch (a forked child's
        parent had its own) and the thread that sends it every
        DASK_FLUSH_INTERVAL, and the worker's close sends what is left
        (close_flush). Without a thread, each datagram goes at once."""
        self._batch, self._batch_bytes = [], 0
        self._batch_lock, self._send_lock = threading.Lock(), threading.Lock()
        try:
            self._flusher = _DaskFlusher(self, DASK_FLUSH_INTERVAL, DASK_FLUSH_CHECKS)
        except RuntimeError:                     # no thread to be had
            self._flusher = None
        close_flush(worker)

    def send(self, msg):
        """Sends one message; True when the kernel took it. Never raises."""
        return self._deliver(self.datagram, msg)

    def send_chunk(self, measured, fields, static=()):
        """Sends the decorator's chunk (see chunk_datagram); as send."""
        self.choose_path()
        return self._deliver(self.chunk_datagram, measured, fields, static)

    def _deliver(self, make, *args):
        try:
            sock = self._socket()
            data = make(*args)
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False
        return self._put(sock, data)

    def _put(self, sock, data):
        """Hands data to the kernel on sock: True when it took it, else
        counted in ``lost``. Never raises."""
        try:
            if len(data) > MAX_DATAGRAM:
                self.lost += 1
                return False
            if self.path == "dask" and self._path_pid == current_pid():
                return self._queue_dask(data)
            try:
                sock.send(data)
            except ConnectionRefusedError:
                # an ICMP "port unreachable" of an earlier datagram (nobody
                # listening then), reported by a connected socket on this
                # send and cleared by it: this datagram was not sent, so
                # once more, as an unconnected socket would have sent it
                sock.send(data)
            self.sent += 1
            return True
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False

    def _queue_dask(self, data):
        """Adds data to this process's batch for the Dask path: True when it
        was taken, False (counted in ``lost``) when DASK_PENDING batches'
        worth wait unsent. The lock is held for the append only; a batch
        that reached a bound is sent now unless another thread is sending
        one (then it, or the flusher's next round, takes this one too)."""
        n = len(data)
        with self._batch_lock:
            count, size = len(self._batch) + 1, self._batch_bytes + n
            if count <= DASK_BATCH_COUNT * DASK_PENDING and size <= DASK_BATCH_BYTES * DASK_PENDING:
                if count == 1:
                    self._batch_since = time.monotonic()
                self._batch.append(data)
                self._batch_bytes = size
            else:
                count = 0
        if not count:
            self.lost += 1
            return False
        if count >= DASK_BATCH_COUNT or size >= DASK_BATCH_BYTES or self._flusher is None:
            self.flush_dask(wait=False)
        return True

    def flush_dask_due(self, age, wait=True):
        """flush_dask when the batch's first datagram came ``age`` seconds
        ago or more; else 0."""
        if self._batch and time.monotonic() - self._batch_since >= age:
            return self.flush_dask(wait)
        return 0

    def flush_dask(self, wait=True):
        """Sends this process's Dask-path batch: the same bytes, through the
        worker's own scheduler connection, as events ``[port, [datagram,
        ...]]`` of at most DASK_BATCH_COUNT datagrams and DASK_BATCH_BYTES
        bytes, in the order they were queued (the port says which roastop
        they are for: the scheduler keeps every roastop's, each takes its
        own). ``wait=False``: nothing when another thread is sending. The
        datagrams of an event that cannot be given to the worker are
        counted in ``lost``. How many were sent; never raises."""
        if not self._send_lock.acquire(wait):
            return 0
        sent = 0
        try:
            with self._batch_lock:
                batch, self._batch, self._batch_bytes = self._batch, [], 0
            for part in _parts(batch, DASK_BATCH_COUNT, DASK_BATCH_BYTES):
                sent += self._log_batch(part)
        finally:
            self._send_lock.release()
        return sent

    def _log_batch(self, part):
        """One event of datagrams to the scheduler: len(part) when the worker
        took it, else 0 and they are counted in ``lost`` (a worker closed or
        failed would never send it)."""
        try:
            worker = self._worker
            if getattr(getattr(worker, "status", None), "name", "") in ("closed", "failed"):
                raise ConnectionError("the Dask worker is closed")
            worker.log_event(DATAGRAM_TOPIC, [self._target[1], part])
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += len(part)
            return 0
        self.sent += len(part)
        self.sent_dask += len(part)
        self.batches_dask += 1
        return len(part)

    def hello(self, timeout=HELLO_TIMEOUT):
        """Sends a hello with a fresh nonce on this process's socket and waits
        at most ``timeout`` seconds for roastop's ack of it from the address
        it went to (ack_ok): True when one came. Anything else that arrives
        is ignored. Outside the sequence: ``sent``, ``lost`` and the numbers
        are left alone. Never raises."""
        try:
            deadline = time.monotonic() + timeout
            sock = self._socket()
            nonce = os.urandom(16).hex()
            msg = {"type": "hello", "nonce": nonce, "host": self._host, "pid": self._pid,
                   "instance": self._instance, "sent": time.time()}
            data = frame(encode(msg)[0], self._mac)
            try:
                sock.send(data)
            except ConnectionRefusedError:   # an earlier datagram's refusal (see _put)
                sock.send(data)
            ready = select.poll()            # not select(): a client may hold fds past 1024
            ready.register(sock, select.POLLIN)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not ready.poll(int(left * 1000)):  # never past the deadline
                    return False
                try:
                    data, src = sock.recvfrom(MAX_DATAGRAM)
                except BlockingIOError:  # readable, then taken: wait on
                    continue
                except ConnectionRefusedError:
                    # nothing listens there (yet): the connected socket reports
                    # the ICMP error, an unconnected one would not; roastop
                    # started within the wait still answers, so wait on
                    continue
                if src[:2] == self._target[:2] and ack_ok(data, self._mac, nonce):
                    return True
        except Exception:  # noqa: BLE001 - never raise into the analysis
            return False

    def send_report(self, report, run_id):
        """coffea's report (bytesread, entries, processtime, chunks, columns).
        When it does not fit one datagram of SOFT_LIMIT bytes, ``columns`` is
        split over parts carrying report_id, part and parts (at most
        MAX_REPORT_PARTS; columns beyond those are left out, the scalars
        still go in part 0). True when every part was sent."""
        try:
            report = report or {}
            scalars = {}
            for k in ("bytesread", "entries", "processtime", "chunks"):
                v = report.get(k)
                if v is not None:
                    scalars[k] = v
            columns = [str(c) for c in (report.get("columns") or ())]
            base = {"type": "report"}
            if run_id is not None:
                base["run_id"] = run_id
            whole = dict(base, **scalars)
            whole["columns"] = columns
            if self._fits(whole, 0):
                return self.send(whole)
            report_id = uuid.uuid4().hex
            head = dict(base, report_id=report_id, part=MAX_REPORT_PARTS, parts=MAX_REPORT_PARTS)
            # room for columns in part 0 (which carries the scalars) and in the others
            room0 = SOFT_LIMIT - self._size(dict(head, **scalars, columns=[]))
            room = SOFT_LIMIT - self._size(dict(head, columns=[]))
            parts = _split(columns, room0, room, MAX_REPORT_PARTS)
        except Exception:  # noqa: BLE001
            self.lost += 1
            return False
        ok = True
        for i, cols in enumerate(parts):
            msg = dict(base, report_id=report_id, part=i, parts=len(parts))
            if i == 0:
                msg.update(scalars)
            msg["columns"] = cols
            ok = self.send(msg) and ok
        return ok

    def send_run_end(self, run_id, exc_type=None, exc=None):
        """Sends run_end_message(run_id, exc_type, exc), its error message cut
        until the datagram fits SOFT_LIMIT bytes. As send: never raises."""
        try:
            msg = run_end_message(run_id, exc_type, exc)
            text = msg.get("error_message")
            while text and not self._fits(msg, 0):
                text = _cut(text, len(text) // 2) if len(text) > 8 else None
                msg["error_message"] = text
            if "error_message" in msg and msg["error_message"] is None:
                del msg["error_message"]
        except Exception:  # noqa: BLE001 - never raise into the analysis
            msg = {"type": "run_end", "run_id": run_id,
                   "status": "completed" if exc_type is None else "failed"}
        return self.send(msg)

    def _size(self, msg):
        """Bytes of msg framed, with its envelope (whose fields' sizes do not
        depend on their values)."""
        body, _ = encode(dict(msg, host=self._host, pid=os.getpid(), instance=INSTANCE_MAX,
                              seq=0, sent=time.time()))
        return len(body) + _FRAME_TAGGED

    def _fits(self, msg, extra):
        return self._size(msg) + extra <= SOFT_LIMIT


_FRAME_TAGGED = 5 + KEY_BYTES   # "RTP2", the flags and the tag


def _parts(batch, count, size):
    """batch's datagrams in order, as lists of at most count datagrams and
    size bytes each (a datagram larger than size alone)."""
    part, n = [], 0
    for data in batch:
        if part and (len(part) == count or n + len(data) > size):
            yield part
            part, n = [], 0
        part.append(data)
        n += len(data)
    if part:
        yield part


class _DaskFlusher:
    """A worker process's thread that sends its emitter's Dask-path batch
    (Emitter.flush_dask) once it is ``interval`` seconds old at most: it
    looks ``checks`` times an interval and sends a batch older than
    interval less one look's time; off the chunks' path. At interpreter
    exit it stops and sends what is left."""

    def __init__(self, emitter, interval, checks=1):
        self.pid = os.getpid()
        self.emitter, self.interval = emitter, interval
        self.step = interval / max(1, checks)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="roastop-dask-flush")
        self._thread.start()          # RuntimeError (no thread to be had): the caller's
        atexit.register(self.stop)

    def _run(self):
        while not self._stop.wait(self.step):
            self.emitter.flush_dask_due(self.interval - self.step)

    def stop(self, timeout=2.0):
        """Ends the thread and sends the rest; idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self.pid == os.getpid():
            self.emitter.flush_dask()


def flush_dask_all(age=None):
    """Sends the Dask-path batch of every emitter of this process now (a
    run's end: MetricsCollector runs it on each worker before run_end; a
    worker's close), or, given ``age``, each batch that old, unless another
    thread is sending it. How many datagrams went. Never raises."""
    sent, pid = 0, current_pid()
    for e in {id(e): e for e in list(shared("emitter_cache", dict).values())}.values():
        if e.path == "dask" and e._path_pid == pid:
            sent += e.flush_dask() if age is None else e.flush_dask_due(age, wait=False)
    return sent


class _WorkerFlush:
    """An entry in a Dask worker's plugins, whose hooks it calls on its
    event loop. A task's end (transition out of "executing") sends each
    batch DASK_CHUNK_FLUSH old: handed to the worker's stream in the same
    turn of its loop as the task-finished message, the event goes to the
    scheduler inside that message, not in one of its own (which would
    cost the scheduler its reading too). Worker.close calls teardown
    before it closes the stream, which then carries the rest."""

    def transition(self, key, start, finish, **kwargs):
        if start == "executing":
            flush_dask_all(DASK_CHUNK_FLUSH)

    def teardown(self, worker):
        flush_dask_all()


def close_flush(worker):
    """Adds _WorkerFlush to the worker's plugins, once: on the worker's
    event loop, where its plugins are read. A process that exits without
    closing its worker sends its batches at interpreter exit
    (_DaskFlusher.stop) or not at all. Never raises."""
    def add():
        worker.plugins.setdefault(DASK_FLUSH_PLUGIN, _WorkerFlush())
    try:
        if isinstance(getattr(worker, "plugins", None), dict):
            worker.loop.add_callback(add)
    except Exception:  # noqa: BLE001 - no loop to ask: exit and run ends still send
        pass


def _split(columns, room0, room, max_parts):
    """Greedy slices of columns: the first one's bytes within room0, the
    others within room; at most max_parts slices (the rest is cut off)."""
    parts, cur, size, limit = [], [], 0, room0
    for c in columns:
        n = 2 + len(c.encode("utf-8", "replace"))   # a str: u16 length, UTF-8
        if cur and size + n > limit:
            parts.append(cur)
            if len(parts) == max_parts:
                return parts
            cur, size, limit = [], 0, room
        cur.append(c)
        size += n
    parts.append(cur)
    return parts


def emitter_from_env():
    """The process's Emitter for ROASTOP_ADDR / ROASTOP_KEY (hex), or None when
    ROASTOP_ADDR is unset."""
    addr = os.environ.get("ROASTOP_ADDR")
    if not addr:
        return None
    return emitter_for(addr, os.environ.get("ROASTOP_KEY") or None)


_cache = shared("emitter_cache", dict)   # for tests; code calls shared(), never _cache


def emitter_for(addr, key):
    """One Emitter per process for (addr, key), shared by the collector and
    the decorator: a process is one sender with one sequence of numbers
    (two counters from one host and pid would look like duplicates).
    ``key`` is bytes, hex text or None, as parse_key takes it (ValueError
    otherwise); one key in any of its spellings is one Emitter."""
    cache = shared("emitter_cache", dict)
    try:
        return cache[(addr, key)]        # as spelt before: no parsing per chunk
    except (KeyError, TypeError):
        pass
    parsed = parse_key(key)
    k = (addr, parsed.hex() if parsed else None)
    e = cache.get(k)
    if e is None:
        e = cache.setdefault(k, Emitter(addr, parsed))
    try:
        cache.setdefault((addr, key), e)
    except TypeError:                    # a bytearray key: parsed each time
        pass
    return e
