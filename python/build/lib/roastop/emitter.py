"""The sending end of docs/protocol.md: framing, HMAC tags, sequence numbers.

Sending never blocks and never raises into the analysis: a full socket
buffer, an absent roastop or an unresolvable address costs only the message,
which is counted in ``lost``.
"""
import hashlib
import hmac
import json
import math
import os
import socket
import time

MAX_DATAGRAM = 65507
SOFT_LIMIT = 1400          # keep under a typical MTU: no IP fragmentation
MAX_REPORT_PARTS = 64
PROTOCOL = 1


def parse_addr(addr):
    """'host:port' or '[v6]:port' -> (host, port)."""
    host, _, port = addr.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not port.isdigit():
        raise ValueError(f"ROASTOP_ADDR {addr!r} is not HOST:PORT")
    return host, int(port)


def _finite(value):
    """JSON has no NaN/Infinity: such numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _encode(msg):
    try:
        return json.dumps(msg, separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False).encode("utf-8")
    except ValueError:
        return json.dumps(_finite(msg), separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False, default=str).encode("utf-8")
    except TypeError:
        return json.dumps(_finite(msg), separators=(",", ":"), ensure_ascii=False,
                          default=str).encode("utf-8")


class Emitter:
    """One per process: a non-blocking UDP socket and a sequence counter."""

    def __init__(self, addr, key=None):
        self.addr = addr
        self.key = key
        self.sent = 0
        self.lost = 0
        self._pid = None
        self._sock = None
        self._target = None
        self._seq = 0
        self._host = socket.gethostname()

    def _socket(self):
        pid = os.getpid()
        if self._pid != pid:        # a forked child gets its own socket and counter
            self._pid, self._seq, self._sock = pid, 0, None
        if self._sock is None:
            host, port = parse_addr(self.addr)
            family, kind, proto, _, target = socket.getaddrinfo(
                host, port, 0, socket.SOCK_DGRAM)[0]
            sock = socket.socket(family, kind, proto)
            sock.setblocking(False)
            self._sock, self._target = sock, target
        return self._sock

    def frame(self, body):
        if self.key:
            tag = hmac.new(self.key, body, hashlib.sha256).hexdigest().encode()
        else:
            tag = b"-"
        return b"RTP1 " + tag + b" " + body

    def send(self, msg):
        """Adds host, pid, seq and sent, then sends; True when handed to the kernel."""
        try:
            sock = self._socket()
            msg = dict(msg, host=self._host, pid=self._pid, seq=self._seq, sent=time.time())
            self._seq += 1
            data = self.frame(_encode(msg))
            if len(data) > MAX_DATAGRAM:
                self.lost += 1
                return False
            sock.sendto(data, self._target)
            self.sent += 1
            return True
        except Exception:           # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False

    def send_report(self, report, run_id):
        """The coffea report, split over several datagrams when its columns
        do not fit one (report_id/part/parts, scalars in part 0)."""
        scalars = {k: report.get(k) for k in ("bytesread", "entries", "processtime", "chunks")
                   if report.get(k) is not None}
        columns = [str(c) for c in report.get("columns", []) or []]
        whole = dict(scalars, type="report", run_id=run_id, columns=columns)
        if len(_encode(whole)) + 200 <= SOFT_LIMIT:
            return self.send(whole)
        parts = _split(columns, SOFT_LIMIT - 300 - len(_encode(scalars)))[:MAX_REPORT_PARTS]
        report_id = f"{self._host}-{os.getpid()}-{time.time_ns()}"
        ok = True
        for i, cols in enumerate(parts):
            msg = {"type": "report", "run_id": run_id, "report_id": report_id,
                   "part": i, "parts": len(parts), "columns": cols}
            if i == 0:
                msg.update(scalars)
            ok = self.send(msg) and ok
        return ok


def _split(columns, budget):
    """Greedy slices of columns whose JSON stays under budget bytes."""
    parts, cur, size = [], [], 2
    budget = max(budget, 200)
    for c in columns:
        n = len(json.dumps(c, ensure_ascii=False).encode()) + 1
        if cur and size + n > budget:
            parts.append(cur)
            cur, size = [], 2
        cur.append(c)
        size += n
    parts.append(cur)
    return parts


def emitter_from_env():
    """The Emitter for ROASTOP_ADDR / ROASTOP_KEY (hex), or None when unset."""
    addr = os.environ.get("ROASTOP_ADDR")
    if not addr:
        return None
    return emitter_for(addr, os.environ.get("ROASTOP_KEY") or None)


_cache = {}


def emitter_for(addr, key_hex):
    """One Emitter per process for (addr, key), shared by the collector and
    the decorator: a process is one sender with one sequence of numbers
    (two counters from one host and pid would look like duplicates)."""
    e = _cache.get((addr, key_hex))
    if e is None:
        e = _cache[(addr, key_hex)] = Emitter(addr, bytes.fromhex(key_hex) if key_hex else None)
    return e
