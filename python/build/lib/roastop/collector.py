"""MetricsCollector with roastcoffea 0.1.2's signature: instead of gathering
metrics in the client, it tells roastop where a run starts and ends, sends
coffea's report, and hands roastop's address and key to the workers inside
the processor instance (pickled with it), so nothing is set up on workers."""
import os
import socket
import uuid
import warnings

from roastop.emitter import PROTOCOL, emitter_for, emitter_from_env

FLAG = "_roastcoffea_collect_metrics"


class MetricsCollector:
    def __init__(self, client=None, backend="dask", track_workers=True,
                 worker_tracking_interval=1.0, processor_instance=None, addr=None, key=None,
                 run_name=None):
        self.client = client
        self.backend = backend
        self.track_workers = track_workers
        self.worker_tracking_interval = worker_tracking_interval
        self.processor_instance = processor_instance
        self.processor_name = (type(processor_instance).__name__
                               if processor_instance is not None else None)
        self.run_name = run_name
        self.run_id = uuid.uuid4().hex
        self.datasets = []
        self.coffea_report = None
        if addr is None and key is None:
            self.emitter = emitter_from_env()
        else:
            key = key or os.environ.get("ROASTOP_KEY")
            addr = addr or os.environ.get("ROASTOP_ADDR")
            self.emitter = emitter_for(addr, key) if addr else None
        if self.emitter is None:
            warnings.warn("roastop: ROASTOP_ADDR is not set; nothing will be sent "
                          "(start roastop and export what it prints)", stacklevel=2)

    @property
    def datagrams_sent(self):
        return self.emitter.sent if self.emitter else 0

    @property
    def datagrams_lost(self):
        return self.emitter.lost if self.emitter else 0

    def _install_scheduler_route(self):
        """The scheduler route that serves roastop live state belongs to the
        Dask poller issue; nothing is installed yet."""

    def set_fileset(self, fileset):
        """Records dataset names for run-start (call before entering)."""
        self.datasets = sorted(fileset)

    def __enter__(self):
        if self.emitter is None:
            return self
        proc = self.processor_instance
        if proc is not None:
            setattr(proc, FLAG, True)
            setattr(type(proc), FLAG, True)  # survives pickling, as in roastcoffea
            proc._roastop_addr = self.emitter.addr
            proc._roastop_key = self.emitter.key.hex() if self.emitter.key else None
            proc._roastop_run_id = self.run_id
        self._install_scheduler_route()
        self.emitter.send({"type": "run_start", "run_id": self.run_id,
                           "name": self.run_name or self.processor_name or "coffea run",
                           "processor": self.processor_name, "datasets": self.datasets,
                           "client_host": socket.gethostname(), "client_pid": os.getpid(),
                           "protocol": PROTOCOL})
        return self

    def set_coffea_report(self, report, custom_metrics=None):
        self.coffea_report = report
        self.custom_metrics = custom_metrics
        if self.emitter is not None and report is not None:
            self.emitter.send_report(dict(report), self.run_id)

    def __exit__(self, exc_type, exc, tb):
        if self.emitter is None:
            return False
        self.emitter.send({"type": "run_end", "run_id": self.run_id})
        proc = self.processor_instance
        if proc is not None:
            setattr(proc, FLAG, False)
            if FLAG in vars(type(proc)):
                delattr(type(proc), FLAG)
        return False
