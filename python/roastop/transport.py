"""How a process's datagrams reach roastop: by UDP, or through its Dask
worker's connection to the scheduler (docs/protocol.md, "The Dask path").

Sending never blocks and never raises into the analysis: a failure costs
only the message, counted in ``lost``. No chunk waits on a resolver (a host
name is looked up in a background thread, its datagrams lost until it
answers) nor on the hello that chooses the path. distributed is never
imported here."""
import itertools
import os
import select
import socket
import sys
import threading
import time
from contextlib import suppress

from roastop._state import current_pid, shared
from roastop.heartbeat import Ticker
from roastop.wire import MAX_DATAGRAM, ack_ok, encode, frame, new_instance

RESOLVE_TIMEOUT = 1.0      # seconds MetricsCollector waits for its one name lookup
RESOLVE_RETRY = 30.0       # seconds before a failed background lookup is tried again
HELLO_TIMEOUT = 0.5        # seconds a hello waits for roastop's ack
DATAGRAM_TOPIC = "roastop-datagram"   # the Dask path's topic (route.py keeps it)
DASK_FLUSH_INTERVAL = 0.25  # seconds a Dask-path datagram waits in its process's batch at most
DASK_FLUSH_CHECKS = 5       # the flusher looks this many times an interval
DASK_CHUNK_FLUSH = 0.125    # a task's end sends a batch at least this old (s), in its message
DASK_BATCH_COUNT = 256      # datagrams one Dask-path event carries at most
DASK_BATCH_BYTES = 1 << 16  # and datagram bytes (any one datagram, <= MAX_DATAGRAM, fits)
DASK_PENDING = 8            # batches' worth a process holds unsent at most: past it, lost
DASK_FLUSH_PLUGIN = "roastop-dask-flush"   # the Worker's entry whose hooks send the batches
TRANSPORTS = ("auto", "udp", "dask")
CHECKING = "hello"          # a process's path while its hello waits for an ack


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


def _addrinfo(host, port, flags=0):
    """(family, type, proto, sockaddr) of host's first UDP address."""
    family, kind, proto, _, target = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM, 0,
                                                        flags)[0]
    return family, kind, proto, target


def _numeric(host, port):
    """_addrinfo when host is a numeric address (the resolver is never
    asked); None for a host name."""
    try:
        return _addrinfo(host, port, socket.AI_NUMERICHOST | socket.AI_NUMERICSERV)
    except (OSError, IndexError, UnicodeError):
        return None


class _Lookup:
    """One name lookup in a daemon thread: nobody waits on a resolver that
    may never answer (glibc's own limit is 5 s per server and attempt).
    Sets ``result``, or ``error`` and ``failed`` (monotonic), then ``done``."""

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
            self.result = _addrinfo(host, port)
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
    to ("[fd00::5]:8790"), waiting at most ``timeout`` s. ValueError when
    addr is not HOST:PORT; OSError when it does not resolve in time."""
    host, port = parse_addr(addr)
    found = _numeric(host, port)
    if found is None:
        lookup = _Lookup(host, port)
        if not lookup.done.wait(timeout):
            raise OSError(f"roastop address {addr!r} did not resolve within {timeout:g} s")
        if lookup.result is None:
            raise OSError(f"roastop address {addr!r} does not resolve ({lookup.error})")
        found = lookup.result
    host, port = found[3][:2]
    return f"[{host}]:{port}" if found[0] == socket.AF_INET6 else f"{host}:{port}"


def parse_transport(transport=None):
    """"auto", "udp" or "dask": transport when given, else ROASTOP_TRANSPORT;
    anything else (unset, a typo) is auto."""
    if transport is None:
        transport = os.environ.get("ROASTOP_TRANSPORT", "")
    text = str(transport).strip().lower()
    return text if text in TRANSPORTS else "auto"


def dask_worker():
    """The Dask worker running this thread's task, or None."""
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


def _parts(batch, count, size):
    """batch's datagrams in order, as lists of at most count datagrams and
    size bytes each (a larger datagram alone)."""
    part, n = [], 0
    for data in batch:
        if part and (len(part) == count or n + len(data) > size):
            yield part
            part, n = [], 0
        part.append(data)
        n += len(data)
    if part:
        yield part


class _DaskFlusher(Ticker):
    """Sends the emitter's Dask-path batch once it is ``interval`` s old,
    looking ``checks`` times an interval; at its stop, what is left."""

    def __init__(self, emitter, interval, checks=1):
        self.emitter, self.interval = emitter, interval
        self.step = interval / max(1, checks)
        super().__init__(self.step, "roastop-dask-flush")

    def tick(self):
        self.emitter.flush_dask_due(self.interval - self.step)

    def stop(self, timeout=2.0):
        super().stop(timeout)
        if self.pid == os.getpid():
            self.emitter.flush_dask()


def flush_dask_all(age=None):
    """Sends the Dask-path batch of every emitter of this process now (a
    run's end, a worker's close), or, given ``age``, each batch that old
    unless another thread is sending it. How many datagrams went."""
    sent, pid = 0, current_pid()
    for e in {id(e): e for e in list(shared("emitter_cache", dict).values())}.values():
        if e.path == "dask" and e._path_pid == pid:
            sent += e.flush_dask() if age is None else e.flush_dask_due(age, wait=False)
    return sent


class _WorkerFlush:
    """An entry in a Dask worker's plugins: a task's end sends the batches in
    the same turn of the worker's loop as its task-finished message, so
    inside it; Worker.close calls teardown before it closes the stream."""

    def transition(self, key, start, finish, **kwargs):
        if start == "executing":
            flush_dask_all(DASK_CHUNK_FLUSH)

    def teardown(self, worker):
        flush_dask_all()


def close_flush(worker):
    """Adds _WorkerFlush to the worker's plugins, once, on the worker's
    event loop (where they are read). Never raises."""
    def add():
        worker.plugins.setdefault(DASK_FLUSH_PLUGIN, _WorkerFlush())
    with suppress(Exception):  # no loop to ask: exit and run ends still send
        if isinstance(getattr(worker, "plugins", None), dict):
            worker.loop.add_callback(add)


class UdpPath:
    """The Emitter's UDP socket, one per process, its numbers, the hello."""

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
                with suppress(OSError):
                    self._sock.close()
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
        """(family, type, proto, sockaddr) to send to, or None while a host
        name's _Lookup has not answered: never waits (this is a chunk's thread)."""
        host, port = parse_addr(self.addr)
        found = _numeric(host, port)
        if found is None:
            lookup = self._lookup
            if lookup is None or lookup.stale():
                lookup = self._lookup = _Lookup(host, port)
            found = lookup.result
        self._found = found
        return found

    def hello(self, timeout=HELLO_TIMEOUT):
        """Sends a hello with a fresh nonce: True when roastop's ack of it came
        from that address within ``timeout`` s. Outside the sequence and the
        counters. Never raises."""
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
                except (BlockingIOError, ConnectionRefusedError):
                    continue    # taken meanwhile, or nothing listened (yet): wait on
                if src[:2] == self._target[:2] and ack_ok(data, self._mac, nonce):
                    return True
        except Exception:  # noqa: BLE001 - never raise into the analysis
            return False

    def _put(self, sock, data):
        """Hands data to the kernel on sock, or to the batch on the Dask path
        (and while the hello waits): True when taken, else counted in ``lost``."""
        try:
            if len(data) > MAX_DATAGRAM:
                self.lost += 1
                return False
            if self.path != "udp" and self._path_pid == current_pid():
                taken = self._queue_dask(data)
                if taken is not None:
                    return taken
            try:
                sock.send(data)
            except ConnectionRefusedError:
                # an earlier datagram's ICMP "port unreachable", reported on
                # this send by a connected socket: this one was not sent
                sock.send(data)
            self.sent += 1
            return True
        except Exception:  # noqa: BLE001 - never raise into the analysis
            self.lost += 1
            return False


class DaskPath:
    """The Emitter's path per process, and its Dask-path batch."""

    def choose_path(self):
        """This process's path, chosen on its first chunk, on the task's thread
        where get_worker answers (docs/protocol.md, "The Dask path"); CHECKING
        while a hello waits in a thread of its own."""
        pid = current_pid()
        if self._path_pid == pid:
            return self.path
        with shared("transport_locks", dict).setdefault(pid, threading.Lock()):
            if self._path_pid != pid:
                self._new_batch()    # a forked child's own
                worker = dask_worker() if self.transport != "udp" else None
                if worker is not None and self.transport == "auto" and self._check:
                    self.path = CHECKING
                    try:
                        threading.Thread(target=self._check_path, args=(worker,), daemon=True,
                                         name="roastop-hello").start()
                    except RuntimeError:         # no thread to be had: UDP, unchecked
                        self._take_path(None)
                else:
                    self._take_path(worker if self.transport == "dask" else None)
                self._path_pid = pid
        return self.path

    def _new_batch(self):
        """An empty Dask-path batch; _batch_lock is held to append or take
        its datagrams, never to send, _send_lock by the one thread sending."""
        self._batch, self._batch_bytes, self._batch_since = [], 0, 0.0
        self._batch_lock, self._send_lock = threading.Lock(), threading.Lock()
        self.path_chosen = threading.Event()

    def _check_path(self, worker):
        self._take_path(None if self.hello() else worker)

    def _take_path(self, worker):
        """The path chosen: "dask" through worker (without a flusher thread,
        each datagram goes at once), or "udp" when worker is None."""
        if worker is not None:
            self._worker = worker
            try:
                self._flusher = _DaskFlusher(self, DASK_FLUSH_INTERVAL, DASK_FLUSH_CHECKS)
            except RuntimeError:                 # no thread to be had
                self._flusher = None
            close_flush(worker)
            self.path = "dask"
        else:
            with self._batch_lock:
                self.path, held, self._batch, self._batch_bytes = "udp", self._batch, [], 0
            for data in held:
                try:
                    self._put(self._socket(), data)
                except Exception:  # noqa: BLE001 - never raise into the analysis
                    self.lost += 1
        self.path_chosen.set()

    def _queue_dask(self, data):
        """Adds data to the batch: True when taken, False (counted in ``lost``)
        past DASK_PENDING batches' worth, None when the path became "udp"
        meanwhile. On the Dask path a batch at a bound is sent now."""
        with self._batch_lock:
            if self.path == "udp":
                return None
            count, size = len(self._batch) + 1, self._batch_bytes + len(data)
            if count > DASK_BATCH_COUNT * DASK_PENDING or size > DASK_BATCH_BYTES * DASK_PENDING:
                self.lost += 1
                return False
            if count == 1:
                self._batch_since = time.monotonic()
            self._batch.append(data)
            self._batch_bytes = size
        if self.path == "dask" and (count >= DASK_BATCH_COUNT or size >= DASK_BATCH_BYTES
                                    or self._flusher is None):
            self.flush_dask(wait=False)
        return True

    def flush_dask_due(self, age, wait=True):
        """flush_dask when the batch is ``age`` seconds old or more; else 0."""
        if self._batch and time.monotonic() - self._batch_since >= age:
            return self.flush_dask(wait)
        return 0

    def flush_dask(self, wait=True):
        """Sends the batch through the worker's connection as events ``[port,
        [datagram, ...]]`` (docs/protocol.md). ``wait=False``: nothing when
        another thread is sending. How many went; never raises."""
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
        took it, else 0 (a closed or failed worker would never send it)."""
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
