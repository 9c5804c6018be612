"""A real dask-gateway (issue 42 item 1), as coffea-casa and the Elastic
Analysis Facility run one: dask-gateway-server on loopback with its own Go
proxy, UnsafeLocalBackend (clusters are local processes), SimpleAuthenticator
(HTTP Basic, one shared password). A cluster of two one-thread workers is made
through the gateway's Python client; its comms are TLS (every gateway
cluster's are), the client reaches the scheduler through the proxy's TLS
port, and its dashboard is the proxy's /clusters/NAME/. roastop is started as
docs/facilities.md tells a gateway user:

    roastop --scheduler http://GATEWAY --dashboard-prefix /clusters/NAME

The workers' UDP to roastop is dropped (tests/tools/udpdrop.c, given to them
through the gateway's ClusterConfig.environment), as a pod network drops it,
so every chunk of the real coffea example reaches roastop by the Dask path
(docs/protocol.md): Worker.log_event over TLS, the collector's route on the
scheduler, roastop's poll through the proxy. The chunks must add up to the
files exactly."""
import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import CHUNKSIZE, exact_chunks, load_metrics, measuring
from dask_cluster import (DASK, UDPDROP, client_env, cluster_env, free_port, run_example,
                          wait_for)

SERVER = str(Path(sys.executable).parent / "dask-gateway-server")
USER, PASSWORD = "analyst", "not-a-secret"  # SimpleAuthenticator: one password for all

CONFIG = """\
c.DaskGateway.address = "127.0.0.1:{api}"
c.Proxy.address = "127.0.0.1:{http}"
c.Proxy.tcp_address = "127.0.0.1:{tcp}"
c.DaskGateway.backend_class = "dask_gateway_server.backends.local.UnsafeLocalBackend"
c.DaskGateway.authenticator_class = "dask_gateway_server.auth.SimpleAuthenticator"
c.SimpleAuthenticator.password = {password!r}
c.LocalBackend.clusters_directory = {clusters!r}
c.ClusterConfig.scheduler_cmd = [{dask!r}, "scheduler"]
c.ClusterConfig.worker_cmd = [{dask!r}, "worker"]
c.ClusterConfig.worker_cores = 1
c.ClusterConfig.worker_memory = "2 G"
c.ClusterConfig.environment = {environment!r}
"""


def get_json(url):
    """The JSON at url, or None while it does not answer 200 (the proxy
    answers 404 for a route it has not loaded yet)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


class Gateway:
    """dask-gateway-server and its proxy, on free loopback ports, in the
    cluster environment (no roastop: its clusters inherit PATH and
    PYTHONPATH from it). Each cluster's processes run with the shim and
    drop their datagrams to the port written in drop_file."""

    def __init__(self, workdir: Path):
        self.dir = Path(workdir)
        self.clusters = self.dir / "clusters"
        self.drop_file = self.dir / "drop-port"
        self.drop_file.write_text("")
        self.http, self.tcp = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.http}"
        env = {"LD_PRELOAD": str(UDPDROP), "UDPDROP_FILE": str(self.drop_file)}
        (self.dir / "config.py").write_text(CONFIG.format(
            api=free_port(), http=self.http, tcp=self.tcp, password=PASSWORD,
            clusters=str(self.clusters), dask=DASK, environment=env))
        self.proc = subprocess.Popen(
            [SERVER, "-f", str(self.dir / "config.py")], cwd=self.dir, env=cluster_env(),
            stdout=open(self.dir / "gateway.log", "w"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        self.cluster = None  # the name of the cluster made

    def wait_ready(self, timeout=120):
        """Until the proxy routes /api to the server and the server is up:
        the health check through the proxy passes."""
        def healthy():
            assert self.proc.poll() is None, self.log()
            return (get_json(self.url + "/api/health") or {}).get("status") == "pass"
        wait_for(healthy, timeout=timeout, step=0.2)

    def log(self):
        return (self.dir / "gateway.log").read_text()

    def client_dask_env(self):
        """dask's configuration for dask_gateway.Gateway() in a client
        process: the address, the scheduler proxy and Basic auth."""
        return {"DASK_GATEWAY__ADDRESS": self.url,
                "DASK_GATEWAY__PROXY_ADDRESS": f"tls://127.0.0.1:{self.tcp}",
                "DASK_GATEWAY__AUTH__TYPE": "basic",
                "DASK_GATEWAY__AUTH__KWARGS__USERNAME": USER,
                "DASK_GATEWAY__AUTH__KWARGS__PASSWORD": PASSWORD}

    def gateway_client(self):
        """The gateway's Python client, as a user makes one. Asynchronous:
        a synchronous one closed by hand is closed again by its __del__,
        which distributed 2026.8.0's LoopRunner refuses (an exception in
        __del__ at garbage collection); the asynchronous one has none."""
        import dask_gateway
        return dask_gateway.Gateway(self.url, proxy_address=f"tls://127.0.0.1:{self.tcp}",
                                    auth=dask_gateway.BasicAuth(USER, PASSWORD),
                                    asynchronous=True)

    async def _new_cluster(self, n_workers):
        async with self.gateway_client() as gw:
            cluster = await gw.new_cluster(shutdown_on_close=False)
            await cluster.scale(n_workers)
            await cluster.close()  # the client's state only: the cluster goes on
            return cluster.name

    async def _stop_cluster(self, name):
        async with self.gateway_client() as gw:
            await gw.stop_cluster(name)

    def new_cluster(self, n_workers):
        """A cluster made by the gateway's client, scaled to n_workers; a
        GatewayCluster once its dashboard, through the proxy, lists them."""
        self.cluster = asyncio.run(self._new_cluster(n_workers))
        c = GatewayCluster(self, self.cluster, n_workers)
        wait_for(lambda: len((c.identity() or {}).get("workers", ())) == n_workers,
                 timeout=180, step=0.2)
        return c

    def stop(self):
        """The cluster stopped through the gateway, the gateway (which
        stops what clusters it still has) by SIGTERM; then any process left
        whose working directory is one of this gateway's clusters'."""
        try:
            if self.cluster is not None:
                asyncio.run(self._stop_cluster(self.cluster))
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            kill_left_in(self.clusters)


def kill_left_in(directory: Path):
    """SIGKILL every process whose working directory is under directory
    (a cluster's scheduler and workers run in theirs), should the gateway
    have left one; the directories are this test's own."""
    prefix = str(directory) + os.sep
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(prefix):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


class GatewayCluster:
    """A gateway cluster as run_example and roastop see it: the example
    joins it by name (--gateway-cluster), roastop reads its dashboard
    through the proxy under /clusters/NAME."""

    def __init__(self, gateway, name, n_workers):
        self.gateway, self.name, self.n_workers = gateway, name, n_workers
        self.prefix = f"/clusters/{name}"

    def identity(self):
        return get_json(f"{self.gateway.url}{self.prefix}/json/identity.json")

    def example_args(self):
        return ["--gateway-cluster", self.name]

    def client_dask_env(self):
        return self.gateway.client_dask_env()

    def drop(self, port):
        self.gateway.drop_file.write_text(str(port))


@pytest.fixture(scope="module")
def gateway_cluster(tmp_path_factory):
    assert UDPDROP.exists(), "make build/tools/udpdrop.so"
    g = Gateway(tmp_path_factory.mktemp("gateway"))
    try:
        g.wait_ready()
        yield g.new_cluster(2)
    finally:
        g.stop()


def test_gateway_cluster_chunks_by_dask(gateway_cluster, dimuon_files, tmp_path):
    gc = gateway_cluster
    ident = gc.identity()  # a gateway cluster's comms are TLS
    assert ident["address"].startswith("tls://"), ident["address"]
    assert sorted(w.split("://")[0] for w in ident["workers"]) == ["tls", "tls"]
    files, truth = dimuon_files
    out = tmp_path / "measurement"
    with measuring(tmp_path, out, "--scheduler", gc.gateway.url, "--dashboard-prefix", gc.prefix,
                   "--duration", 600) as live:
        gc.drop(live.env["ROASTOP_ADDR"].rsplit(":", 1)[1])
        r = run_example(gc, files, tmp_path / "result.json", "--collector", "roastop",
                        "--chunksize", CHUNKSIZE, env=client_env(**live.env))
    m = load_metrics(out)
    # what roastop says it polls is the cluster's dashboard, not the gateway's root
    assert (f"polling the Dask scheduler at {gc.gateway.url}{gc.prefix}/ every"
            in (tmp_path / "roastop.stderr").read_text())
    exact_chunks(m, r, truth)
    udp = m["roastop"]["udp"]
    # the client by UDP (its hello acked), each worker process by Dask
    assert udp["senders_by_path"] == {"udp": 1, "dask": 2}, udp
    assert udp["datagrams_by_path"]["dask"] >= m["num_chunks"], udp
    # every payload read went to the listener, which alone counts it
    assert not {"elsewhere", "rejected"} & set(m["roastop"]["scheduler"]["datagrams"])
    assert m["peak_workers"] == 2 and m["roastop"]["scheduler_samples"] > 0
    assert m["roastop"]["run_ended"] is True


def test_dashboard_needs_no_credentials_the_api_does(gateway_cluster):
    """Why roastop's command line for a gateway has no --header: the proxy
    serves a cluster's dashboard to anyone, the gateway's API only with
    the user's Basic credentials."""
    gc = gateway_cluster
    assert gc.identity()["address"].startswith("tls://")  # no Authorization sent
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{gc.gateway.url}/api/v1/clusters/", timeout=10)
    assert refused.value.code == 401
    auth = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    listed = urllib.request.Request(f"{gc.gateway.url}/api/v1/clusters/",
                                    headers={"Authorization": auth})
    with urllib.request.urlopen(listed, timeout=10) as r:
        assert gc.name in json.load(r)
