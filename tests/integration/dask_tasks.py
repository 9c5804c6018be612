"""Functions the Dask tests run on the scheduler and the workers. They live
apart from the tests because the cluster's environment has no roastop: a
worker unpickling `spin` imports this module, which must import nothing the
cluster lacks."""
import time


def spin(i):
    """A task with known CPU and non-CPU time: ~0.3 s busy, 0.1 s asleep."""
    t = time.thread_time()
    while time.thread_time() - t < 0.3:
        pass
    time.sleep(0.1)
    return i


def span_truth(dask_scheduler, span_id):
    """Execute-context fine metrics of the span, as roastop's route sees them."""
    span = dask_scheduler.extensions["spans"].spans[span_id]
    return {"|".join(map(str, k)): v for k, v in span.cumulative_worker_metrics.items()
            if k[0] == "execute"}


def workers_now(dask_scheduler):
    """Each worker the scheduler holds: its threads and its memory metric."""
    return [(ws.nthreads, ws.metrics.get("memory")) for ws in dask_scheduler.workers.values()]


def worker_truth(dask_scheduler):
    """Each worker as the scheduler holds it, read as version 1 of roastop's
    route read it (WorkerState.memory)."""
    return {ws.address: {"facts": [ws.address, str(ws.name), ws.host, ws.nthreads,
                                   ws.memory_limit, ws.pid],
                         "status": ws.status.name,
                         "managed": ws.memory.managed, "spilled": ws.memory.spilled,
                         "executing": len(ws.executing), "processing": len(ws.processing),
                         "occupancy": ws.occupancy}
            for ws in dask_scheduler.workers.values()}


def install_route_old(dask_scheduler, version=1):
    """An earlier collector's handler, as version 1 or 2 of roastop's route
    left it on a scheduler (version 2 marked its state with its version)."""
    from tornado import web

    class Old(web.RequestHandler):
        def get(self):
            self.write({"roastop_route": version, "workers": [], "fine": [], "span": None})

    dask_scheduler.http_application.add_handlers(r".*", [("/roastop/v1/state.json", Old)])
    dask_scheduler._roastop_route = {"span_id": None, "routes": ["/roastop/v1/state.json"]}
    if version > 1:
        dask_scheduler._roastop_route["version"] = version


def _rules(router):
    for rule in getattr(router, "rules", ()):
        yield rule
        yield from _rules(rule.target)


def record_route_answers(dask_scheduler):
    """Wraps the route's handler in place: each answer's ?have= and whether
    it left the workers' facts out, in dask_scheduler._route_answers."""
    log = dask_scheduler.__dict__.setdefault("_route_answers", [])
    for rule in _rules(dask_scheduler.http_application.default_router):
        cls = rule.target
        path = getattr(rule.matcher, "_path", None) or ""
        if not path.endswith("/roastop/v1/state.json") or getattr(cls, "_recorded", False):
            continue

        def get(self, _get=cls.get):
            _get(self)
            short = b'"workers":' not in b"".join(self._write_buffer)
            log.append((self.get_query_argument("have", None), short))
        cls.get, cls._recorded = get, True


def route_answers(dask_scheduler):
    return list(dask_scheduler.__dict__.get("_route_answers", ()))
