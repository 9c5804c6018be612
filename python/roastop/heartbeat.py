"""A process's heartbeat (docs/protocol.md, "heartbeat"), and the
chunk_start datagrams of the chunks still running at its beats."""
import atexit
import os
import threading
import time
from contextlib import suppress

from roastop.instrumentation import MB, process_memory_mb

HEARTBEAT_INTERVAL = 1.0   # seconds between a process's heartbeats


class Ticker:
    """A daemon thread that calls tick() now and every ``step`` s until
    stop(), at interpreter exit at the latest. Its pid is the process that
    made it; RuntimeError when no thread can be had."""

    def __init__(self, step, name):
        self.pid = os.getpid()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(step,), daemon=True, name=name)
        self._thread.start()
        atexit.register(self.stop)

    def _run(self, step):
        while True:
            with suppress(Exception):  # never worth a traceback
                self.tick()
            if self._stop.wait(step):
                return

    def alive(self):
        return self._thread.is_alive()

    def stop(self, timeout=2.0):
        """Ends the thread (at most ``timeout`` seconds' wait); idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)


class Heartbeat(Ticker):
    """One process's heartbeat: its RSS, CPU time, chunks in flight (and
    the Dask worker's name) every ``interval`` s. A forked child makes its
    own (Emitter.chunk_began)."""

    def __init__(self, emitter, interval=HEARTBEAT_INTERVAL, worker=None):
        self.emitter, self.interval, self.worker = emitter, interval, worker
        self.in_flight = 0
        self.pending = {}             # id(start) -> Emitter.chunk_begin's handle
        self.beats = 0
        self._lock = threading.Lock()
        super().__init__(interval, "roastop-heartbeat")

    def add(self, n):
        with self._lock:
            self.in_flight += n

    def begin(self, start):
        """A chunk in flight, its start (chunk_begin's handle) pending unless None."""
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
        """Sends the chunk_start of each chunk pending and not yet announced,
        keeping the seq it went with; one not sent is tried at the next beat."""
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

    def tick(self):
        self.announce()
        if self.emitter.send(self.message()):
            self.beats += 1
