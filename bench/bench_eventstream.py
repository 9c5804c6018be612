"""The Dask scheduler's /eventstream on a real loopback cluster (2 workers):
what the task stream costs on the wire per task, for roastop's source
(docs/metrics.md, "Dask tasks").

    bench eventstream_bytes_per_task     message bytes per task computed
    bench eventstream_messages_per_task  messages per task (one per startstop)

A dask.array reduction (fused chunk tasks, aggregates that fetch their
inputs: transfers) and 2,000 independent delayed calls. BENCH_SMOKE=1 (make
bench-smoke): one worker, a 4 x 4-chunk array and 50 calls; the figures then
mean nothing."""
import asyncio
import os
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from dask_cluster import Cluster, end_with_me  # noqa: E402

SMOKE = os.environ.get("BENCH_SMOKE") == "1"
WORKERS = 1 if SMOKE else 2
SIDE = 400 if SMOKE else 2000     # the array's side, in chunks of 100 x 100
CALLS = 50 if SMOKE else 2000     # independent delayed calls
QUIET = 1 if SMOKE else 3         # seconds without a message, once done: the stream's end


def line(name, value, unit, target):
    print(f"bench {name}: {value} {unit} ({target})", flush=True)


def work(address):
    import dask.array as da
    from dask import delayed
    from distributed import Client, wait
    import taskstream_tasks as tt
    with Client(address) as client:
        x = (da.ones((SIDE, SIDE), chunks=(100, 100)) + 1).sum(axis=0)
        wait(client.persist(x))
        wait(client.persist([delayed(tt.inc)(i) for i in range(CALLS)]))


async def measure(cluster):
    from tornado.websocket import websocket_connect
    ws = await websocket_connect(cluster.dashboard_url.replace("http", "ws", 1) + "/eventstream")
    # the work in a daemon thread: an interrupted bench ends without waiting for it
    done = []
    job = threading.Thread(target=lambda: done.append(work(cluster.address)), daemon=True)
    job.start()
    messages = nbytes = computes = 0
    while True:
        try:
            m = await asyncio.wait_for(ws.read_message(), 10 if job.is_alive() else QUIET)
        except asyncio.TimeoutError:
            if not job.is_alive():
                break
            continue
        if m is None:
            break
        if '"name": "transition"' in m:
            messages += 1
            nbytes += len(m.encode())
            computes += '"action": "compute", "start"' in m
    job.join()
    ws.close()
    assert done, "the work failed (its traceback above)"
    return messages, nbytes, computes


def main():
    end_with_me()
    with tempfile.TemporaryDirectory() as d:
        cluster = Cluster(Path(d), n_workers=WORKERS)
        try:
            messages, nbytes, tasks = asyncio.run(measure(cluster))
        finally:
            cluster.stop()
    tasks = max(tasks, 1)
    line("eventstream_bytes_per_task", f"{nbytes / tasks:.0f}", "B", "target <= 1024")
    line("eventstream_messages_per_task", f"{messages / tasks:.2f}", "messages", "target <= 2")
    print(f"  ({tasks} tasks, {messages} messages, {nbytes} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
