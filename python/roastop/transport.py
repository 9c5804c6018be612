"""How a process's datagrams reach roastop: by UDP, or through its Dask
worker's connection to the scheduler.

Sending never blocks and never raises into the analysis: a full socket
buffer, an absent roastop or an unresolvable address costs only the message,
which is counted in ``lost``. Nothing here waits on a resolver where chunks
are processed: MetricsCollector resolves the address once on the client
(resolve) and ships the number; an Emitter given a host name looks it up in
a background thread and drops its datagrams until that answers.

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
ends a run (flush_dask_all): one event on the scheduler for many datagrams.
Each process chooses on its first chunk, without waiting for the answer: a
hello sent from a thread of its own, and the Dask path when no ack comes
within HELLO_TIMEOUT; the datagrams made meanwhile wait in the batch and go
by the path chosen. ``ROASTOP_TRANSPORT=udp`` or ``dask`` (``Emitter(...,
transport=...)``) chooses instead, ``auto`` being the default (UDP when
ROASTOP_HELLO=0 switched hellos off). Outside a worker's task, UDP only.
distributed is never imported here: a worker has it imported already."""
import atexit
import itertools
import os
import select
import socket
import sys
import threading
import time

from roastop._state import current_pid, shared
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


    def _put(self, sock, data):
        """Hands data to the kernel on sock, or to the batch on the Dask path
        (and while the hello waits): True when taken, else counted in
        ``lost``. Never raises."""
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


class DaskPath:
    """The Emitter's path per process, and its Dask-path batch."""

    def choose_path(self):
        """This process's path, chosen once (on its first chunk, from the
        task's thread, where get_worker answers): "dask" when the process is
        a Dask worker's and ROASTOP_TRANSPORT says dask, or says auto and
        no ack answers a hello; else "udp". The hello's wait is a thread's
        of its own (_check_path): meanwhile the path is CHECKING, and the
        datagrams wait in the batch. Never raises, never blocks."""
        pid = current_pid()
        if self._path_pid == pid:
            return self.path
        with shared("transport_locks", dict).setdefault(pid, threading.Lock()):
            if self._path_pid != pid:
                self._batch, self._batch_bytes = [], 0   # a forked child's own
                self._batch_lock, self._send_lock = threading.Lock(), threading.Lock()
                self.path_chosen = threading.Event()
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

    def _check_path(self, worker):
        self._take_path(None if self.hello() else worker)

    def _take_path(self, worker):
        """The path chosen: "dask" through worker, its batch sent by a
        thread of its own every DASK_FLUSH_INTERVAL (without a thread, each
        datagram goes at once) and what is left at the worker's close
        (close_flush); else "udp", and what waited in the batch goes now."""
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
        """Adds data to this process's batch: True when it was taken, False
        (counted in ``lost``) when DASK_PENDING batches' worth wait unsent,
        None when the path became "udp" meanwhile. The lock is held for the
        append only; on the Dask path, a batch that reached a bound is sent
        now unless another thread is sending one (then it, or the flusher's
        next round, takes this one too)."""
        n = len(data)
        with self._batch_lock:
            if self.path == "udp":
                return None
            count, size = len(self._batch) + 1, self._batch_bytes + n
            if count <= DASK_BATCH_COUNT * DASK_PENDING and \
                    size <= DASK_BATCH_BYTES * DASK_PENDING:
                if count == 1:
                    self._batch_since = time.monotonic()
                self._batch.append(data)
                self._batch_bytes = size
            else:
                count = 0
        if not count:
            self.lost += 1
            return False
        if self.path == "dask" and (count >= DASK_BATCH_COUNT or size >= DASK_BATCH_BYTES
                                    or self._flusher is None):
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
