"""A real Dask cluster for the coffea tests: `dask scheduler` and two
`dask worker` processes (one thread each) from the pinned venv, on 127.0.0.1,
in an environment that cannot import roastop (no PYTHONPATH), as a real
cluster whose nodes never had roastop installed."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
DASK = str(Path(sys.executable).parent / "dask")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env():
    """The environment of the scheduler and workers: no roastop anywhere."""
    return {k: v for k, v in os.environ.items()
            if k != "PYTHONPATH" and not k.startswith("ROASTOP")}


def client_env(**extra):
    """The client's environment: roastop from where run.sh installed it
    (ROASTOP_CLIENT), else from the repository's python/ directory."""
    env = cluster_env()
    env["PYTHONPATH"] = os.environ.get("ROASTOP_CLIENT") or str(REPO / "python")
    env.update(extra)
    return env


class Cluster:
    def __init__(self, workdir: Path, workers=2):
        self.port, self.dashboard = free_port(), free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.dashboard_url = f"http://127.0.0.1:{self.dashboard}"
        self.logs = workdir
        self.procs = []
        env = cluster_env()
        self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port",
                                  str(self.port), "--dashboard-address",
                                  f"127.0.0.1:{self.dashboard}"], env, workdir)
        for i in range(workers):
            self._start(f"worker{i}", [DASK, "worker", self.address, "--nthreads", "1",
                                       "--name", f"w{i}", "--host", "127.0.0.1",
                                       "--no-dashboard", "--local-directory",
                                       str(workdir / f"w{i}")], env, workdir)
        self._wait_for_workers(workers)

    def _start(self, name, args, env, cwd):
        log = open(self.logs / f"{name}.log", "w")
        self.procs.append(subprocess.Popen(args, env=env, cwd=cwd, stdout=log,
                                           stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL))

    def _wait_for_workers(self, n, timeout=90):
        from distributed import Client
        deadline = time.monotonic() + timeout
        while True:
            try:
                with Client(self.address, timeout=10) as c:
                    c.wait_for_workers(n, timeout=max(deadline - time.monotonic(), 1))
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def log(self, name):
        return (self.logs / f"{name}.log").read_text()

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run_example(cluster, files, result, *extra, env=None, timeout=300):
    """examples/run_dimuon.py as a client process on the cluster; its JSON result."""
    p = subprocess.run([sys.executable, str(EXAMPLES / "run_dimuon.py"), "--scheduler",
                        cluster.address, "--files", str(files), "--result", str(result),
                        *map(str, extra)], env=env or client_env(), capture_output=True,
                       text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    import json
    return json.loads(Path(result).read_text())
