"""The datagram of docs/protocol.md (``RTP2``, a kind byte, ``<id><value>``
fields): keys, HMAC tags, the kinds' field tables (a copy of roastop's) and
the fields' encoders. A field the table lacks or a value it cannot carry (a
list where a number belongs, a NaN inside ``timing``) is left out."""
import hashlib
import hmac
import operator
import os
import re
import struct

MAX_DATAGRAM = 65507       # the largest UDP payload; the listener accepts up to this
SOFT_LIMIT = 1400          # keep under a typical MTU: no IP fragmentation
KEY_BYTES = 32             # roastop's session key (HMAC-SHA256)

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
    """HMAC-SHA256 (RFC 2104) under one key, for frame (``tag(body)``):
    two SHA-256 states keyed once with the key's inner and outer pads,
    copied for each tag. hmac.digest keys OpenSSL's HMAC afresh at every
    call, which after a process() body cost ~20 us more a chunk
    (bench/RESULTS.md, "bench_emitter.py")."""

    __slots__ = ("inner", "outer")

    def __init__(self, key):
        key = bytes(key) if len(key) <= 64 else hashlib.sha256(key).digest()
        key = key.ljust(64, b"\0")                 # SHA-256's block
        self.inner = hashlib.sha256(bytes(b ^ 0x36 for b in key))
        self.outer = hashlib.sha256(bytes(b ^ 0x5C for b in key))

    def tag(self, body):
        inner, outer = self.inner.copy(), self.outer.copy()
        inner.update(body)
        outer.update(inner.digest())
        return outer.digest()


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
    """Appends ``<id><value>`` for each field of msg (from ``fields``, the
        chunk's table when None); raises KeyError (a custom field),
        _Unsendable, OverflowError or struct.error for what it cannot carry.
        A float, an int, a str inline: the chunk's path."""
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
_pack_times_memory = _Struct("<" + "Bd" * 12).pack


def _measured_v2(measured, pid, instance, seq, sent):
    """chunk_message's numbers and the envelope's pid, instance, seq and sent
    as datagram fields, in one pack."""
    t_start, t_end, timestamp, cpu_time, mem_before, mem_after = measured
    if mem_before is None or mem_after is None:
        return _pack_times(_ID_T_START, t_start, _ID_T_END, t_end, _ID_DURATION, t_end - t_start,
                           _ID_TIMESTAMP, timestamp, _ID_CPU_TIME, cpu_time, _ID_PID, pid,
                           _ID_INSTANCE, instance, _ID_SEQ, seq, _ID_SENT, sent)
    return _pack_times_memory(
        _ID_T_START, t_start, _ID_T_END, t_end, _ID_DURATION, t_end - t_start,
        _ID_TIMESTAMP, timestamp, _ID_CPU_TIME, cpu_time, _ID_PID, pid, _ID_INSTANCE, instance,
        _ID_SEQ, seq, _ID_SENT, sent, _ID_MEM_BEFORE, mem_before, _ID_MEM_AFTER, mem_after,
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


_FRAME_TAGGED = 5 + KEY_BYTES   # "RTP2", the flags and the tag
