"""The sending end of docs/protocol.md: framing, HMAC tags, sequence numbers.

Sending never blocks and never raises into the analysis: a full socket
buffer, an absent roastop or an unresolvable address costs only the message,
which is counted in ``lost``.
"""
import hashlib
import hmac
import itertools
import json
import math
import os
import socket
import time
import uuid

from roastop._state import shared

MAX_DATAGRAM = 65507       # the largest UDP payload; the listener accepts up to this
SOFT_LIMIT = 1400          # keep under a typical MTU: no IP fragmentation
MAX_REPORT_PARTS = 64
PROTOCOL = 1
RESOLVE_RETRY = 30.0       # seconds before a failed name lookup is tried again

_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)


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


def parse_key(key):
    """A key given as bytes, or as hex text (ROASTOP_KEY); None/'' for none."""
    if key is None or key == "" or key == b"":
        return None
    if isinstance(key, (bytes, bytearray)):
        return bytes(key)
    try:
        return bytes.fromhex(key.strip())
    except (AttributeError, ValueError):
        raise ValueError("roastop key is not hex (ROASTOP_KEY holds 64 hex digits)") from None


def _finite(value):
    """JSON has no NaN/Infinity: such numbers become null. Numbers and
    containers of foreign types (numpy scalars, sets, tuples) become plain ones."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_finite(v) for v in value]
    return value


def _default(obj):
    """Objects json cannot encode: numpy scalars and arrays through .item() /
    .tolist(), anything else as its text."""
    for method in ("item", "tolist"):
        fn = getattr(obj, method, None)
        if fn is not None:
            try:
                return _finite(fn())
            except Exception:  # noqa: BLE001
                pass
    if isinstance(obj, (set, frozenset)):
        return _finite(list(obj))
    return str(obj)


def encode(msg):
    """The JSON body of a message, compact UTF-8 (a lone surrogate becomes '?')."""
    try:
        text = _ENCODER.encode(msg)
    except (ValueError, TypeError, OverflowError):
        text = json.dumps(_finite(msg), separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False, default=_default)
    return text.encode("utf-8", "replace")


def frame(body, key):
    """``RTP1 <tag> <body>``: the tag is HMAC-SHA256(key, body) in lowercase hex,
    or ``-`` without a key."""
    if key:
        return b"RTP1 " + hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body
    return b"RTP1 - " + body


class Emitter:
    """A non-blocking UDP socket and a sequence counter, one of each per process.

    ``send`` adds the envelope (host, pid, seq, sent); ``sent`` and ``lost``
    count datagrams handed to the kernel and datagrams that were not."""

    def __init__(self, addr, key=None):
        self.addr = addr
        self.key = parse_key(key)
        self.sent = 0
        self.lost = 0
        self._host = socket.gethostname()
        self._pid = None
        self._seq = None
        self._sock = None
        self._target = None
        self._resolve_failed = 0.0

    def _socket(self):
        pid = os.getpid()
        if self._pid != pid:
            # a new process (first use, or a forked child): its own sender, socket and numbers
            if self._sock is not None and self._pid is not None:
                try:
                    self._sock.close()
                except OSError:
                    pass
            self._pid, self._seq, self._sock = pid, itertools.count(), None
        if self._sock is None:
            if self._resolve_failed and time.monotonic() - self._resolve_failed < RESOLVE_RETRY:
                raise OSError("roastop address did not resolve")  # no blocking lookup per chunk
            try:
                host, port = parse_addr(self.addr)
                family, kind, proto, _, target = socket.getaddrinfo(
                    host, port, 0, socket.SOCK_DGRAM)[0]
            except (OSError, ValueError, IndexError):
                self._resolve_failed = time.monotonic()
                raise
            sock = socket.socket(family, kind, proto)
            sock.setblocking(False)
            self._sock, self._target, self._resolve_failed = sock, target, 0.0
        return self._sock

    def envelope(self, msg):
        """msg plus host, pid, seq (the next number of this process) and sent."""
        msg = dict(msg)
        msg["host"] = self._host
        msg["pid"] = self._pid
        msg["seq"] = next(self._seq)
        msg["sent"] = time.time()
        return msg

    def datagram(self, msg):
        """The framed bytes for one message (envelope included)."""
        return frame(encode(self.envelope(msg)), self.key)

    def send(self, msg):
        """Sends one message; True when the kernel took it. Never raises."""
        try:
            sock = self._socket()
            data = self.datagram(msg)
            if len(data) > MAX_DATAGRAM:
                self.lost += 1
                return False
            sock.sendto(data, self._target)
            self.sent += 1
            return True
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
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

    _ENVELOPE_SLACK = 48   # seq and sent grow between the estimate and the send

    def _size(self, msg):
        """Bytes of msg framed with a worst-case envelope."""
        body = encode(dict(msg, host=self._host, pid=os.getpid(), seq=10 ** 15,
                           sent=time.time()))
        return len(body) + 70 + self._ENVELOPE_SLACK

    def _fits(self, msg, extra):
        return self._size(msg) + extra <= SOFT_LIMIT


def _split(columns, room0, room, max_parts):
    """Greedy slices of columns: the first one's JSON within room0 bytes, the
    others within room; at most max_parts slices (the rest is cut off)."""
    parts, cur, size, limit = [], [], 0, room0
    for c in columns:
        n = len(encode(c)) + (1 if cur else 0)
        if cur and size + n > limit:
            parts.append(cur)
            if len(parts) == max_parts:
                return parts
            cur, size, limit = [], 0, room
            n -= 1
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
    ``key`` is bytes, hex text or None; a key that is not hex raises ValueError."""
    if isinstance(key, (bytes, bytearray)):
        key = bytes(key).hex()
    k = (addr, key or None)
    cache = shared("emitter_cache", dict)
    e = cache.get(k)
    if e is None:
        e = cache.setdefault(k, Emitter(addr, key))
    return e
