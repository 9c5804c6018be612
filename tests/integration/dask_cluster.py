"""A real Dask cluster on loopback for the tests: `dask scheduler` and
`dask worker` processes (one thread each) from the pinned distributed in the
build's virtual environment, on free ports, in an environment that cannot
import roastop — as a real cluster whose nodes never had roastop installed;
with tls=True its comms are TLS only (distributed's --tls-* options, one
self-signed certificate), as coffea-casa's and every dask-gateway cluster's
are; with https=True its dashboards are HTTPS, with the same certificate.
Also workers whose UDP to roastop is dropped, a reverse proxy in front of a
dashboard, and the example's client."""
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HERE = Path(__file__).resolve().parent
DASK = str(Path(sys.executable).parent / "dask")
# the LD_PRELOAD shim that drops a process's datagrams to one port (tests/tools/udpdrop.c)
UDPDROP = Path(os.environ.get("TOOLS", "build/tools")).resolve() / "udpdrop.so"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env():
    """The scheduler's and workers' environment: no roastop anywhere. The
    tests' own task functions (this directory) do import there."""
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("ROASTOP")}
    env["PYTHONPATH"] = str(HERE)
    return env


def client_env(**extra):
    """The client's environment: roastop from where run.sh installed it
    (ROASTOP_CLIENT), else from the repository's python/ directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROASTOP")}
    env["PYTHONPATH"] = os.environ.get("ROASTOP_CLIENT") or str(REPO / "python")
    env.update(extra)
    return env


def self_signed(pem: Path):
    """A self-signed certificate for 127.0.0.1 and its key, both in one PEM
    file (its own CA: what verifies it is the file itself)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(pem), "-out", str(pem)], check=True, capture_output=True)
    return pem


def wait_for(pred, timeout=30, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


STARTED = []  # the processes spawn() started that no stop_group() has ended yet
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def spawn(args, **kw):
    """args started in a session of its own (stop_group ends it and all it
    starts), its standard input /dev/null, remembered in STARTED."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    p = subprocess.Popen(args, start_new_session=True, **kw)
    STARTED.append(p)
    return p


def stop_group(*procs, timeout=15):
    """Each of procs, started in a session of its own, and all it started:
    SIGTERM to every one's process group at once; SIGKILL to those that
    have not ended within timeout seconds, and to what is left of a group
    whose first process ended."""
    def killpg(p, sig):
        try:
            os.killpg(p.pid, sig)
        except OSError:  # the group has ended
            pass
    procs = [p for p in procs if p is not None]
    for p in procs:
        if p.poll() is None:
            killpg(p, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            pass
        killpg(p, signal.SIGKILL)
        p.wait()
        if p in STARTED:
            STARTED.remove(p)


def end_with_me():
    """For a benchmark: every process spawn() started ends with it. At exit
    they are stopped, and SIGINT, SIGTERM or SIGHUP end the program through
    its finally blocks (the next such signals ignored while it stops)."""
    def on_signal(signum, frame_):
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        raise SystemExit(128 + signum)
    for s in SIGNALS:
        signal.signal(s, on_signal)
    atexit.register(lambda: stop_group(*reversed(STARTED)))


def busy_until(client, done, timeout=120):
    """Tasks run on the cluster (dask_tasks.spin), batch after batch, until
    done() says so."""
    from dask_tasks import spin
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "not done while tasks ran"
        futures = client.map(spin, range(8), pure=False)
        while not done() and not all(f.done() for f in futures):
            time.sleep(0.1)
        client.gather(futures)


def busy_until_workers_read(cluster, listener):
    """Tasks run until the roastop listening as listener (conftest.Listener)
    says it reads the workers' own /metrics (identity.json answers 500 while
    tasks run); then it stops: its measurement."""
    client = cluster.client()
    try:
        busy_until(client, lambda: "memory and CPU from workers' /metrics"
                   in listener.err_path.read_text(), timeout=300)
    finally:
        client.close()
        _, m = listener.stop()
    return m


class Cluster:
    """`dask scheduler` + n `dask worker` processes. Workers serve their own
    dashboard (roastop reads their /metrics when identity.json answers 500)."""

    def __init__(self, workdir: Path, n_workers=2, prefix=None, dask=DASK, tls=False,
                 https=False, env=None):
        """env: variables added to the scheduler's and workers' environment
        (a DASK_ configuration)."""
        self.logs = Path(workdir)
        self.dask = dask  # the dask command: another environment's for another version
        self.port, self.dashboard_port = free_port(), free_port()
        self.prefix = prefix
        self.address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{self.port}"
        self.dashboard_url = f"{'https' if https else 'http'}://127.0.0.1:{self.dashboard_port}"
        self.n_workers = n_workers
        self.env = {**cluster_env(), **(env or {})}
        # TLS: every process (and the client) presents and verifies one
        # certificate; plain TCP is refused (require-encryption)
        self.tls = tls
        self.cert = self_signed(self.logs / "cluster.pem") if tls or https else None
        if tls:
            self.env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] = "True"
        if https:  # every dashboard, the scheduler's and the workers'
            self.env["DASK_DISTRIBUTED__SCHEDULER__DASHBOARD__TLS__CERT"] = str(self.cert)
            self.env["DASK_DISTRIBUTED__SCHEDULER__DASHBOARD__TLS__KEY"] = str(self.cert)
        self.scheduler, self.workers = None, []
        try:
            self.start_scheduler()
            self.start_workers()
            self.wait_ready()
        except BaseException:  # not up in time, or interrupted: nothing left running
            self.stop()
            raise

    def _spawn(self, name, args):
        log = open(self.logs / f"{name}.log", "a")
        return spawn([self.dask, *args], stdout=log, stderr=subprocess.STDOUT, env=self.env,
                     cwd=self.logs)

    def tls_args(self):
        return ["--tls-ca-file", self.cert, "--tls-cert", self.cert,
                "--tls-key", self.cert] if self.tls else []

    def client_dask_env(self):
        """What a client process needs in its environment (dask's config) to
        connect: the certificate as a client's, for a TLS cluster."""
        if not self.tls:
            return {}
        return {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(self.cert),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(self.cert),
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(self.cert),
                "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}

    def example_args(self):
        """run_dimuon.py's options that join this cluster."""
        return ["--scheduler", self.address]

    def start_scheduler(self):
        args = ["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                "--dashboard-address", f"127.0.0.1:{self.dashboard_port}", "--no-show",
                *(["--protocol", "tls", *self.tls_args()] if self.tls else [])]
        if self.prefix:
            args += ["--dashboard-prefix", self.prefix]
        self.scheduler = self._spawn("scheduler", args)

    def start_workers(self):
        self.workers = [self._spawn(f"worker{i}", [
            "worker", self.address, "--nthreads", "1", "--name", f"w{i}", "--host",
            "127.0.0.1", "--dashboard-address", "127.0.0.1:0", "--memory-limit", "2GiB",
            "--local-directory", str(self.logs / f"w{i}"), *self.tls_args()])
            for i in range(self.n_workers)]

    def identity_url(self):
        prefix = "/" + self.prefix.strip("/") if self.prefix else ""
        return f"{self.dashboard_url}{prefix}/json/identity.json"

    def identity(self, timeout=10):
        """The scheduler's identity.json (over HTTPS verified with the
        cluster's certificate when its dashboard is HTTPS)."""
        import ssl
        ctx = (ssl.create_default_context(cafile=str(self.cert))
               if self.dashboard_url.startswith("https:") else None)
        with urllib.request.urlopen(self.identity_url(), timeout=timeout, context=ctx) as r:
            return json.load(r)

    def wait_ready(self, timeout=90):
        """Until the dashboard answers and every worker has registered."""
        def ready():
            try:
                return len(self.identity(timeout=2)["workers"]) == self.n_workers
            except OSError:
                return False
        wait_for(ready, timeout=timeout, step=0.2)

    def client(self, timeout=60):
        from distributed import Client
        from distributed.security import Security
        security = Security(tls_ca_file=str(self.cert), tls_client_cert=str(self.cert),
                            tls_client_key=str(self.cert),
                            require_encryption=True) if self.tls else None
        c = Client(self.address, timeout=timeout, security=security)
        c.wait_for_workers(self.n_workers, timeout=timeout)
        return c

    def log(self, name):
        return (self.logs / f"{name}.log").read_text()

    def kill_scheduler(self):
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait(timeout=10)

    def wait_workers_gone(self, timeout=30):
        for p in self.workers:
            p.wait(timeout=timeout)

    def stop(self):
        stop_group(*self.workers, self.scheduler, timeout=30)

    close = stop


class DroppingCluster(Cluster):
    """Workers with the shim (UDPDROP): worker i drops its datagrams to the
    port written in drop_file(i) (none while the file is empty), as a
    firewall between batch nodes and a login node drops them."""

    def drop_file(self, i):
        return self.logs / f"drop-worker{i}"

    def _spawn(self, name, args):
        if not name.startswith("worker"):
            return super()._spawn(name, args)
        self.drop_file(int(name[len("worker"):])).write_text("")
        base = self.env
        self.env = dict(base, LD_PRELOAD=str(UDPDROP),
                        UDPDROP_FILE=str(self.drop_file(int(name[len("worker"):]))))
        try:
            return super()._spawn(name, args)
        finally:
            self.env = base

    def drop(self, port, workers=None):
        """Workers (all when None) drop their datagrams to port from now on;
        the others send them."""
        for i in range(self.n_workers):
            self.drop_file(i).write_text(str(port) if workers is None or i in workers else "")


def run_example(cluster, files, result, *extra, env=None, timeout=300):
    """examples/run_dimuon.py as a client process on the cluster; its JSON result."""
    p = subprocess.run([sys.executable, str(EXAMPLES / "run_dimuon.py"), *cluster.example_args(),
                        "--files", str(files), "--result", str(result), *map(str, extra)],
                       env={**(env or client_env()), **cluster.client_dask_env()},
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(Path(result).read_text())


class Proxy:
    """A reverse proxy in front of a dashboard, as JupyterHub's would be: https
    with a self-signed certificate, a path prefix and a required token."""

    PREFIX = "/user/me/proxy/8787"

    def __init__(self, tmp_path, upstream, token="s3cret"):
        import http.server
        import ssl
        import threading
        self.cert = self_signed(tmp_path / "proxy.pem")
        proxy = self
        self.seen_auth = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                proxy.seen_auth.append(self.headers.get("Authorization"))
                if self.headers.get("Authorization") != f"token {token}":
                    return self.send_error(403)
                if not self.path.startswith(proxy.PREFIX + "/"):
                    return self.send_error(404)
                try:
                    url = upstream + self.path[len(proxy.PREFIX):]
                    with urllib.request.urlopen(url, timeout=5) as r:
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
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
