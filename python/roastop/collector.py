"""MetricsCollector with roastcoffea 0.1.2's signature: instead of gathering
metrics in the client, it tells roastop where a run starts and ends, sends
coffea's report, and hands roastop's address and key to the workers inside
the processor instance (pickled with it), so nothing is set up on workers."""
import json
import operator
import os
import socket
import sys
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import suppress
from datetime import datetime
from pathlib import Path

from roastop._state import ship_by_value
from roastop.fetch import FETCH_TIMEOUT, Channel, MetricsUnavailable
from roastop.emitter import emitter_for
from roastop.transport import HELLO_TIMEOUT, RESOLVE_TIMEOUT, flush_dask_all, resolve
from roastop.wire import parse_key

FLAG = "_roastcoffea_collect_metrics"

_warned = []


def _warn_once(text):
    if text not in _warned:
        _warned.append(text)
        warnings.warn(text, RuntimeWarning, stacklevel=3)


MAX_EVENTS = 10**15  # roastop's bound on expected_events (docs/recording.md)


def _events_count(n):
    """expected_events as given, or ValueError: a wrong total would make
    every ETA wrong without a word."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_EVENTS:
        raise ValueError(f"expected_events must be an int in [0, {MAX_EVENTS}], got {n!r}")
    return n


def _chunk_entries(item):
    """The entries of a coffea WorkItem (anything with a dataset and an
    integer entry range, numpy's included), None for anything else."""
    try:
        start, stop = operator.index(item.entrystart), operator.index(item.entrystop)
        return stop - start if stop >= start and item.dataset is not None else None
    except (AttributeError, TypeError):
        return None


STREAM_WAIT = 0.5   # seconds a worker waits at most for its stream to take the batches


async def _run_end_on_worker(dask_worker, heartbeat=True):
    """Runs on each worker's event loop before run_end: its process's
    Dask-path batches go now and reach the scheduler before this answers
    (waiting at most STREAM_WAIT s), so roastop's last poll finds them;
    then its heartbeat, with the fine metrics of the run's last second."""
    import asyncio
    if flush_dask_all():
        stream = getattr(dask_worker, "batched_stream", None)
        deadline = time.monotonic() + STREAM_WAIT
        while getattr(stream, "buffer", None) and time.monotonic() < deadline:
            await asyncio.sleep(0.002)
    if heartbeat:
        await dask_worker.heartbeat()


class MetricsCollector:
    """Context manager around a coffea run, as roastcoffea's::

        with MetricsCollector(client, processor_instance=proc) as collector:
            output, report = runner(fileset, processor_instance=proc)
            collector.set_coffea_report(report)

    ``addr`` ("host:port" or "[v6]:port") and ``key`` (64 hex digits, or
    bytes) default to ROASTOP_ADDR and ROASTOP_KEY; a malformed one raises
    ValueError here. A host name is looked up once, here (at most
    RESOLVE_TIMEOUT), and the workers get the numeric address. Without an
    address, or when it does not resolve, the collector warns once and does
    nothing. ``backend`` is accepted for roastcoffea and ignored.

    ``__enter__`` sends roastop a hello and waits at most HELLO_TIMEOUT for
    its ack (docs/protocol.md, "Hello and acknowledgement"): without one it
    warns once and sends the run anyway. ``roastop_answered`` is True,
    False, or None when not checked (``hello=False``, or ROASTOP_HELLO=0).

    ``expected_events`` is the number of events the run will process, for
    progress and an ETA; ``set_fileset`` given the Runner's preprocessed
    chunks adds it up (docs/emitter.md, "Progress in events").

    After the with-block, ``get_metrics()``, ``metrics``,
    ``save_measurement()`` and ``print_summary()`` mean what they mean in
    roastcoffea, with roastop's measurement of the run, fetched over TCP
    (docs/serve.md) within ``fetch_timeout`` s; when roastop cannot give it
    they raise ``MetricsUnavailable`` (``metrics`` warns and is None)."""

    def __init__(self, client=None, backend="dask", track_workers=True,
                 worker_tracking_interval=1.0, processor_instance=None, addr=None, key=None,
                 run_name=None, expected_events=None, hello=None,
                 fetch_timeout=FETCH_TIMEOUT):
        self.client = client
        self.backend = backend
        self.track_workers = track_workers
        self.worker_tracking_interval = worker_tracking_interval
        self.processor_instance = processor_instance
        self.processor_name = (type(processor_instance).__name__
                               if processor_instance is not None else None)
        self.run_name = run_name
        self.expected_events = _events_count(expected_events)
        self.run_id = self.coffea_report = self.custom_metrics = None
        self.datasets = []
        self._metrics = self._metrics_bytes = self._summary_bytes = None
        self.fetch_timeout = float(fetch_timeout)
        self.t_start = self.t_end = None
        self.emitter = None
        self.shipped_by_value = False
        self._active = False
        self.hello = (os.environ.get("ROASTOP_HELLO", "").strip() != "0"
                      if hello is None else bool(hello))
        self.roastop_answered = None
        addr = addr or os.environ.get("ROASTOP_ADDR") or None
        if key is None:
            key = os.environ.get("ROASTOP_KEY") or None
        if not addr:
            _warn_once("roastop: ROASTOP_ADDR is not set; no metrics will be sent "
                       "(start roastop and export what it prints)")
            return
        key = parse_key(key)                     # a wrong key fails here, on the client
        self._key_hex = key.hex() if key else None
        try:
            addr = resolve(addr, RESOLVE_TIMEOUT)  # ValueError: not HOST:PORT
        except OSError as exc:
            _warn_once(f"{exc}; no metrics will be sent (a numeric "
                       "ROASTOP_ADDR needs no lookup)")
            return
        self.emitter = emitter_for(addr, self._key_hex)

    @property
    def datagrams_sent(self):
        return self.emitter.sent if self.emitter is not None else 0

    @property
    def datagrams_lost(self):
        return self.emitter.lost if self.emitter is not None else 0

    def _install_scheduler_route(self):
        """Opens a Dask span for the run (its fine metrics) and installs
        roastop.route on the scheduler. Failure is not fatal (roastop then has
        no fine metrics); the reason is kept in route_error."""
        self.span_id = None
        self.route_error = None
        if self.client is None or self.backend != "dask":
            return
        from roastop import route
        try:
            from distributed import span
            self._span = span("roastop", self.run_name or self.processor_name or "run")
            self.span_id = self._span.__enter__()
        except Exception as exc:  # an old distributed without spans
            self._span = None
            self.route_error = f"no span: {type(exc).__name__}: {exc}"
        routes, why = route.install_on(self.client, self.span_id)
        if routes is None:
            self.route_error = why
            _warn_once(f"roastop: could not install the scheduler route ({why}); "
                       "roastop will show no fine metrics")

    def _flush_workers(self):
        """Each worker sends its Dask-path datagrams and, with a span, its
        heartbeat now (_run_end_on_worker), before run_end."""
        if self.client is None or self.backend != "dask":
            return
        with suppress(Exception):  # a closed client, a worker gone: the metrics wait
            self.client.run(_run_end_on_worker, heartbeat=self.span_id is not None)

    def _close_span(self, exc_type, exc, tb):
        span_cm, self._span = getattr(self, "_span", None), None
        if span_cm is not None:
            with suppress(Exception):
                span_cm.__exit__(exc_type, exc, tb)

    def set_fileset(self, fileset):
        """Records the fileset's dataset names for run_start (call before
        entering). Given a list of the Runner's WorkItems, also the events they
        cover, as expected_events unless given. A generator is left alone:
        reading it would use up the Runner's chunks."""
        entries = ([_chunk_entries(c) for c in fileset]
                   if isinstance(fileset, (list, tuple)) and fileset else [None])
        if None not in entries:
            self.datasets = list(dict.fromkeys(str(c.dataset) for c in fileset))
            if self.expected_events is None and sum(entries) <= MAX_EVENTS:
                self.expected_events = sum(entries)
            return
        self.datasets = []
        if not isinstance(fileset, Iterator):
            with suppress(TypeError):
                self.datasets = [str(d) for d in fileset]

    def __enter__(self):
        # before anything else: a processor decorated with track_metrics must
        # reach workers without roastop even when nothing will be sent
        self.shipped_by_value = ship_by_value()
        self.t_start, self.t_end = time.time(), None
        self._metrics = self._metrics_bytes = self._summary_bytes = None
        if self.emitter is None:
            return self
        if self.hello:
            self.roastop_answered = self.emitter.hello(HELLO_TIMEOUT)
            if not self.roastop_answered:
                try:
                    _warn_once(f"roastop at {self.emitter.addr} did not answer within "
                               f"{HELLO_TIMEOUT:g} s: not running, firewalled, or another "
                               "key (ROASTOP_KEY); sending anyway")
                except Warning as w:  # warnings made errors: still not into the analysis
                    print(f"roastop: {w}", file=sys.stderr)
        self.run_id = uuid.uuid4().hex
        self._active = True
        proc = self.processor_instance
        if proc is not None:
            setattr(proc, FLAG, True)
            with suppress(AttributeError, TypeError):
                setattr(type(proc), FLAG, True)  # survives pickling, as in roastcoffea
            proc._roastop_addr = self.emitter.addr
            proc._roastop_key = self._key_hex
            proc._roastop_run_id = self.run_id
            # the client's choice of path for the workers (docs/protocol.md, "The Dask
            # path"): a worker's own ROASTOP_TRANSPORT, when it has one, comes first
            proc._roastop_transport = os.environ.get("ROASTOP_TRANSPORT")
        self._install_scheduler_route()
        msg = {"type": "run_start", "run_id": self.run_id,
               "name": self.run_name or self.processor_name or "coffea run",
               "datasets": list(self.datasets),
               "client_host": socket.gethostname(), "client_pid": os.getpid()}
        if self.processor_name is not None:
            msg["processor"] = self.processor_name
        if self.expected_events is not None:
            msg["expected_events"] = self.expected_events
        self.emitter.send(msg)
        return self

    def set_coffea_report(self, report, custom_metrics=None):
        """Keeps coffea's report (Runner(savemetrics=True)) and sends it to roastop."""
        self.coffea_report = report
        self.custom_metrics = custom_metrics
        if self.emitter is not None and report is not None:
            try:
                report = dict(report)
            except (TypeError, ValueError):
                return
            self.emitter.send_report(report, self.run_id)

    def __exit__(self, exc_type, exc, tb):
        """Sends run_end, completed or failed (the exception's type and
        message). The exception goes on; telemetry never raises its own."""
        self.t_end = time.time()
        if self.emitter is None or not self._active:
            return False
        self._active = False
        self._flush_workers()
        self._close_span(exc_type, exc, tb)
        self.emitter.send_run_end(self.run_id, exc_type, exc)
        proc = self.processor_instance
        if proc is not None:
            try:
                setattr(proc, FLAG, False)
                if FLAG in vars(type(proc)):
                    delattr(type(proc), FLAG)
            except (AttributeError, TypeError):
                pass
        return False

    def extract_metrics_from_output(self, output):
        """roastcoffea compatibility: removes roastcoffea's key if present;
        roastop's chunk records never travel in the output."""
        with suppress(AttributeError, TypeError):
            output.pop("__roastcoffea_metrics__", None)

    def _channel(self):
        if self.emitter is None:
            raise MetricsUnavailable("roastop: no metrics were sent (no ROASTOP_ADDR, or "
                                     "it did not resolve), so roastop has none to give")
        if self.run_id is None or self._active:
            raise RuntimeError("Cannot get metrics before the context manager completes")
        return Channel(self.emitter.addr, self._key_hex)

    def get_metrics(self, timeout=None):
        """The run's metrics.json as a dict (roastcoffea's keys, plus roastop's
        own), waiting at most ``timeout`` s (``fetch_timeout``) for roastop to
        close the run. RuntimeError before the with-block has ended."""
        if self._metrics is None:
            self._fetch_measurement(timeout)
        return self._metrics

    def _fetch_measurement(self, timeout):
        """The closed run's summary.txt, then metrics.json: roastop
        --exit-on-run-end waits for that one before it exits (docs/serve.md)."""
        channel = self._channel()
        deadline = time.monotonic() + (self.fetch_timeout if timeout is None else timeout)
        channel.wait_closed(self.run_id, deadline)
        self._summary_bytes = channel.run_file(self.run_id, "summary.txt", deadline)
        self._metrics_bytes = channel.run_file(self.run_id, "metrics.json", deadline)
        self._metrics = json.loads(self._metrics_bytes)

    @property
    def metrics(self):
        """roastcoffea's attribute: the metrics after the run, else None
        (with a warning saying why when roastop could not give them)."""
        if self._metrics is None and self.run_id is not None and not self._active:
            try:
                self.get_metrics()
            except RuntimeError as exc:
                _warn_once(str(exc))
        return self._metrics

    @metrics.setter
    def metrics(self, value):
        self._metrics = value

    def save_measurement(self, output_dir, measurement_name=None, timeout=None):
        """roastcoffea's layout (its load_measurement() reads it):
        OUTPUT_DIR/NAME/ with roastop's metrics.json and summary.txt,
        start_end_time.txt (this client's clock around the with-block) and
        metadata.json. NAME defaults to the local time. The directory's Path."""
        if self._metrics_bytes is None:
            self._fetch_measurement(timeout)
        summary = self._summary_bytes
        name = measurement_name or datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        path = Path(output_dir) / name
        path.mkdir(parents=True, exist_ok=True)
        (path / "metrics.json").write_bytes(self._metrics_bytes)
        (path / "summary.txt").write_bytes(summary)
        (path / "start_end_time.txt").write_text(f"{self.t_start},{self.t_end}\n",
                                                 encoding="utf-8")
        metadata = {"timestamp": datetime.now().isoformat(),
                    "elapsed_time_seconds": self.t_end - self.t_start,
                    "format": "roastcoffea_measurement_v1", "writer": "roastop",
                    "run_id": self.run_id}
        (path / "metadata.json").write_text(json.dumps(metadata, indent=2), encoding="utf-8")
        return path

    def print_summary(self, timeout=None):
        """Prints roastop's summary.txt of the run; raises as get_metrics()."""
        if self._summary_bytes is None:
            self._fetch_measurement(timeout)
        sys.stdout.write(self._summary_bytes.decode("utf-8", "replace"))
        sys.stdout.flush()
