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
