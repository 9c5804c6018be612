"""A real Dask cluster on loopback for the tests: `dask scheduler` and
`dask worker` processes from the pinned distributed in the build's virtual
environment, on free ports."""
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, tmp_path, n_workers=2, prefix=None):
        self.tmp = tmp_path
        self.port, self.dash = free_port(), free_port()
        self.prefix = prefix
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.dashboard = f"http://127.0.0.1:{self.dash}"
        self.n_workers = n_workers
        self.scheduler = self.workers = None
        # the tests' own task functions import on the workers; roastop does not
        # need to (what it runs there travels by value)
        self.env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
        self.start_scheduler()
        self.start_workers()
        self.wait_ready()

    def _spawn(self, name, args):
        log = open(self.tmp / f"{name}.log", "a")
        return subprocess.Popen([str(BIN / "dask"), *args], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)

    def start_scheduler(self):
        args = ["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                "--dashboard-address", f"127.0.0.1:{self.dash}", "--no-show"]
        if self.prefix:
            args += ["--dashboard-prefix", self.prefix]
        self.scheduler = self._spawn("scheduler", args)

    def start_workers(self):
        self.workers = self._spawn("workers", [
            "worker", self.address, "--nworkers", str(self.n_workers), "--nthreads", "1",
            "--memory-limit", "2GiB", "--host", "127.0.0.1", "--dashboard"])

    def wait_ready(self, timeout=60):
        """Until the dashboard answers and every worker has registered."""
        import json
        import urllib.request
        url = self.dashboard + "/" + (self.prefix or "").strip("/") + "/json/identity.json"

        def ready():
            try:
                with urllib.request.urlopen(url.replace("//json", "/json"), timeout=2) as r:
                    return len(json.load(r)["workers"]) == self.n_workers
            except OSError:
                return False
        wait_for(ready, timeout=timeout, step=0.2)

    def client(self, timeout=60):
        from distributed import Client
        c = Client(self.address, timeout=timeout)
        c.wait_for_workers(self.n_workers, timeout=timeout)
        return c

    def kill_scheduler(self):
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait(timeout=10)

    def close(self):
        for p in (self.workers, self.scheduler):
            if p is not None and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=15)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    os.killpg(p.pid, signal.SIGKILL)


def wait_for(pred, timeout=30, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


class Proxy:
    """A reverse proxy in front of a dashboard, as JupyterHub's would be: https
    with a self-signed certificate and a required Authorization header. The
    test can cut it (stop forwarding) to make a partition."""

    PREFIX = "/user/me/proxy/8787"

    def __init__(self, tmp_path, upstream, token="s3cret"):
        import http.server
        import ssl
        import threading
        import urllib.request
        self.cert = tmp_path / "proxy.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(self.cert), "-out", str(self.cert)],
                       check=True, capture_output=True)
        proxy = self
        self.cut = False
        self.seen_auth = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                proxy.seen_auth.append(self.headers.get("Authorization"))
                if proxy.cut:
                    self.close_connection = True
                    return  # a partition: no answer at all
                if self.headers.get("Authorization") != f"token {token}":
                    self.send_error(403)
                    return
                if not self.path.startswith(proxy.PREFIX + "/"):
                    self.send_error(404)
                    return
                path = self.path[len(proxy.PREFIX):]
                try:
                    with urllib.request.urlopen(upstream + path, timeout=5) as r:
                        body, code = r.read(), r.status
                except urllib.error.HTTPError as e:
                    body, code = e.read(), e.code
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(self.cert))
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
