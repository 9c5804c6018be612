"""A process's heartbeat (docs/protocol.md, "heartbeat"), and the
chunk_start datagrams of the chunks still running at its beats."""
import atexit
import os
import threading
import time

from roastop.instrumentation import MB, process_memory_mb

HEARTBEAT_INTERVAL = 1.0   # seconds between a process's heartbeats


class Heartbeat:
    """One process's heartbeat (docs/protocol.md, "heartbeat"): a daemon
    thread that sends its RSS, CPU time, chunks in flight (and the Dask
    worker's name) every ``interval`` s. A forked child makes its own
    (Emitter.chunk_began). Stopped at exit; never raises."""

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
