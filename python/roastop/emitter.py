"""The sending end of docs/protocol.md: one Emitter per process, its
envelope, sequence numbers and messages (wire.py encodes them, transport.py
sends them, heartbeat.py announces the chunks in flight). A field the table
lacks or a value it cannot carry is left out and counted in ``dropped``;
``ROASTOP_CHUNK_START=0`` switches chunk_start datagrams off."""
import os
import socket
import threading
import time
import uuid
from contextlib import suppress

from roastop._state import current_pid, shared
from roastop.heartbeat import Heartbeat
from roastop.transport import DaskPath, UdpPath, parse_transport
from roastop.wire import (_FRAME_TAGGED, _KIND_CHUNK, _KIND_CHUNK_START, _OWN_FIELDS,
                          _START_STATIC, _UNSENDABLE, _V2_OF, INSTANCE_MAX, SOFT_LIMIT,
                          _append_fields, _as_float, _fields_v2, _ID_INSTANCE, _ID_PID,
                          _ID_SEQ, _ID_SENT, _ID_T_START, _measured_v2, _pack_start_head,
                          _start_rest, _start_static, _Unsendable, chunk_message, encode,
                          frame, keyed_mac, parse_key, START_PREFIX_MAX)

MAX_REPORT_PARTS = 64
_SWITCHED_OFF = ("0", "false", "no", "off")


def _switch(value, variable):
    """value when given, else the environment's variable: on unless it is 0
    (or false, no, off: a switch misspelt keeps the default rather than
    costing the process its metrics)."""
    if value is None:
        return os.environ.get(variable, "").strip().lower() not in _SWITCHED_OFF
    return bool(value)


def parse_heartbeat(heartbeat=None):
    """Whether an Emitter sends heartbeats (ROASTOP_HEARTBEAT, see _switch)."""
    return _switch(heartbeat, "ROASTOP_HEARTBEAT")


ERROR_TYPE_MAX = 200        # characters of a failed run's exception type in run_end
ERROR_MESSAGE_MAX = 1000    # and of its message (then cut further to fit SOFT_LIMIT)


def _cut(text, limit):
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def run_end_message(run_id, exc_type=None, exc=None):
    """run_end for a run that completed (exc_type None) or failed with the
    exception exc_type(exc): its qualified type name and its message, cut
    to ERROR_TYPE_MAX / ERROR_MESSAGE_MAX characters. Never raises."""
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
    with suppress(Exception):  # a __str__ that raises
        msg["error_message"] = _cut(str(exc), ERROR_MESSAGE_MAX)
    return msg


class Emitter(UdpPath, DaskPath):
    """One sender per process and (addr, key): its path, sequence numbers and
    heartbeat. ``sent`` and ``lost`` count the datagrams that went and those
    that did not; ``dropped`` the fields left out of messages (see encode)."""

    def __init__(self, addr, key=None, chunk_start=None, heartbeat=None, transport=None):
        self.addr = addr
        self.transport = parse_transport(transport)
        self.path = "udp"         # this process's path, chosen on its first chunk (choose_path)
        self._path_pid = None     # the process that chose it
        self._worker = None       # the Dask worker whose connection the dask path takes
        self.sent_dask = 0        # of sent: through the worker's Dask connection
        self.batches_dask = 0     # the events (log_event calls) they went in
        self._new_batch()
        self._flusher = None      # this process's _DaskFlusher, on the dask path
        # ROASTOP_HELLO=0 switches hellos off: auto cannot check, and stays on UDP
        self._check = os.environ.get("ROASTOP_HELLO", "").strip() != "0"
        self.key = parse_key(key)
        self.chunk_start = _switch(chunk_start, "ROASTOP_CHUNK_START")
        self.heartbeat = parse_heartbeat(heartbeat)
        self._beat = None         # this process's Heartbeat, made on its first chunk
        self.sent = self.lost = self.dropped = 0
        self._host = socket.gethostname()
        # this process's (UdpPath._socket_made): a fork makes them anew
        self._pid = self._instance = self._seq = self._sock = self._target = None
        self.unresolved = 0       # of lost: sent before a host name's lookup answered
        self._found = self._lookup = None
        with suppress(ValueError):  # not HOST:PORT: every message is lost
            self._resolve()       # a host name's lookup starts now, in the background
        self._mac = keyed_mac(self.key)
        self._host_v2 = _fields_v2({"host": self._host})   # a host name is <= 255 bytes
        self._start_prefix = {}   # Static (or None) -> kind, host and its fields, encoded

    def envelope(self, msg):
        """msg plus host, pid, instance, seq (this process's next) and sent."""
        return dict(msg, host=self._host, pid=self._pid, instance=self._instance,
                    seq=next(self._seq), sent=time.time())

    def datagram(self, msg):
        """The framed bytes for one message (envelope included)."""
        body, dropped = encode(self.envelope(msg))
        self.dropped += dropped
        return frame(body, self._mac)

    def chunk_datagram(self, measured, fields, static=()):
        """The framed bytes of chunk_message(measured, fields + static's), as
        datagram() would make them but without that dict: the numbers and the
        envelope in one pack, the host's and static's fields encoded once."""
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
        """(framed bytes, seq) of a chunk_start, with static's (the chunk's
        Static) bytes as they are; through encode when the table cannot carry
        a value."""
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
        given = {"entry_start": entry_start, "entry_stop": entry_stop, "worker": worker}
        msg = self.envelope({"type": "chunk_start", **_start_static(static),
                             **{k: v for k, v in given.items() if v is not None},
                             "t_start": t_start})
        body, dropped = encode(msg)
        self.dropped += dropped
        return frame(body, self._mac), msg["seq"]

    def _start_prefix_of(self, static):
        """The kind byte, host and static's fields of a chunk_start, encoded
        once per Static (a file's chunks share one). Raises as _append_fields."""
        if static is not None and static.v2 is not None and _START_STATIC.issuperset(
                static.fields):
            fields = static.v2
        else:
            fields = _fields_v2(_start_static(static))
        if len(self._start_prefix) >= START_PREFIX_MAX:
            self._start_prefix.clear()
        prefix = self._start_prefix[static] = b"".join((_KIND_CHUNK_START, self._host_v2, fields))
        return prefix

    def send_chunk_start(self, t_start, static=None, entry_start=None, entry_stop=None,
                         worker=None):
        """Sends a chunk_start unless switched off: the seq it went with (the
        chunk's ``start_seq``), or None when none went. Never raises."""
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
        """A chunk starts in this process: its Heartbeat (or None) counts it in
        flight until ``add(-1)``. Never raises."""
        self.choose_path()
        beat = self._heartbeat(worker)
        if beat is not None:
            beat.add(1)
        return beat

    def chunk_begin(self, t_start, static=None, entry_start=None, entry_stop=None,
                    worker=None):
        """A chunk begins at t_start: the handle chunk_end takes. With a
        heartbeat its chunk_start waits for the next beat (a chunk shorter than
        a beat sends none); without one it is sent now."""
        pid = current_pid()
        if self._path_pid != pid:
            self.choose_path()
        beat = self._beat
        if beat is None or beat.pid != pid:
            beat = self._heartbeat(worker)
        start = [beat, t_start, static, entry_start, entry_stop, worker, None]
        if beat is None:
            start[6] = self.send_chunk_start(t_start, static, entry_start, entry_stop, worker)
        else:
            beat.begin(start if self.chunk_start else None)
        return start

    def chunk_end(self, start):
        """The chunk of chunk_begin's handle ended, before it is sent (so that
        its start never goes after it): the seq its chunk_start went with, or
        None."""
        beat = start[0]
        if beat is not None:
            beat.end(start)
        return start[6]

    def _heartbeat(self, worker):
        """This process's Heartbeat, started on its first chunk; None when
        switched off or no thread can be had."""
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

    def send(self, msg):
        """Sends one message; True when it went. Never raises."""
        try:
            sock = self._socket()
            data = self.datagram(msg)
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False
        return self._put(sock, data)

    def send_chunk(self, measured, fields, static=()):
        """Sends the decorator's chunk (see chunk_datagram); as send."""
        pid = current_pid()
        if self._path_pid != pid:
            self.choose_path()
        try:
            sock = self._sock if self._pid == pid and self._sock is not None else self._socket()
            data = self.chunk_datagram(measured, fields, static)
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False
        return self._put(sock, data)

    def send_report(self, report, run_id):
        """coffea's report; when it does not fit SOFT_LIMIT bytes, ``columns``
        split over at most MAX_REPORT_PARTS parts (docs/protocol.md, the rest
        left out), the scalars in part 0. True when every part was sent."""
        try:
            report = report or {}
            scalars = {k: report[k] for k in ("bytesread", "entries", "processtime", "chunks")
                       if report.get(k) is not None}
            columns = [str(c) for c in (report.get("columns") or ())]
            base = {"type": "report"} if run_id is None else {"type": "report", "run_id": run_id}
            whole = dict(base, **scalars, columns=columns)
            if self._fits(whole):
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
        sent = [self.send(dict(base, report_id=report_id, part=i, parts=len(parts),
                               **(scalars if i == 0 else {}), columns=cols))
                for i, cols in enumerate(parts)]
        return all(sent)

    def send_run_end(self, run_id, exc_type=None, exc=None):
        """Sends run_end_message(run_id, exc_type, exc), its error message cut
        until the datagram fits SOFT_LIMIT bytes. As send: never raises."""
        try:
            msg = run_end_message(run_id, exc_type, exc)
            text = msg.get("error_message")
            while text and not self._fits(msg):
                text = _cut(text, len(text) // 2) if len(text) > 8 else None
                msg["error_message"] = text
            if "error_message" in msg and msg["error_message"] is None:
                del msg["error_message"]
        except Exception:  # noqa: BLE001 - never raise into the analysis
            msg = {"type": "run_end", "run_id": run_id,
                   "status": "completed" if exc_type is None else "failed"}
        return self.send(msg)

    def _size(self, msg):
        """Bytes of msg framed, with its envelope (whose size does not depend
        on its values)."""
        body, _ = encode(dict(msg, host=self._host, pid=os.getpid(), instance=INSTANCE_MAX,
                              seq=0, sent=time.time()))
        return len(body) + _FRAME_TAGGED

    def _fits(self, msg):
        return self._size(msg) <= SOFT_LIMIT


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


def emitter_for(addr, key):
    """One Emitter per process for (addr, key), shared by the collector and
    the decorator. ``key``: bytes, hex text or None (parse_key); one key in
    any of its spellings is one Emitter."""
    cache = shared("emitter_cache", dict)
    try:
        return cache[(addr, key)]        # as spelt before: no parsing per chunk
    except (KeyError, TypeError):
        pass
    parsed = parse_key(key)
    k = (addr, parsed.hex() if parsed else None)
    e = cache.get(k) or cache.setdefault(k, Emitter(addr, parsed))
    with suppress(TypeError):  # a bytearray key: parsed each time
        cache.setdefault((addr, key), e)
    return e
