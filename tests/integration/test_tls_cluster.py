"""A cluster whose comms are TLS only, without a gateway (issue 42 item 2), as
coffea-casa's scheduler requires: a real `dask scheduler --protocol tls` and
two `dask worker`s given a certificate made here (distributed's --tls-ca-file,
--tls-cert, --tls-key; plain TCP refused), the client with the same
certificate from dask's configuration. The workers' UDP to roastop is dropped
(tests/tools/udpdrop.c), so every chunk reaches roastop by the Dask path
(docs/protocol.md): Worker.log_event over the worker's TLS connection to the
scheduler, then the collector's route, which roastop polls on the dashboard.
The real coffea example must add up to the files exactly. The dashboard is
plain HTTP, as coffea-casa's is behind JupyterHub, or HTTPS with the same
certificate (distributed's dashboard.tls), which roastop verifies with
--cacert. Without the collector's route, identity.json answers 500 while
tasks run (dask#8370) and roastop reads each worker's own dashboard: over
HTTPS when the dashboards are."""
import pytest

from conftest import CHUNKSIZE, Listener, exact_chunks, load_metrics, measuring
from dask_cluster import (UDPDROP, Cluster, DroppingCluster, busy_until_workers_read,
                          client_env, run_example)

DASHBOARDS = dict(params=["http", "https"], ids=lambda d: f"{d}-dashboard")


@pytest.fixture(scope="module", **DASHBOARDS)
def tls_cluster(request, tmp_path_factory):
    assert UDPDROP.exists(), "make build/tools/udpdrop.so"
    c = DroppingCluster(tmp_path_factory.mktemp("tls-cluster"), tls=True,
                        https=request.param == "https")
    try:
        yield c
    finally:
        c.stop()


def verify(cluster):
    """roastop's options to verify the dashboard: its certificate when HTTPS."""
    return ["--cacert", cluster.cert] if cluster.dashboard_url.startswith("https:") else []


def test_tls_cluster_chunks_by_dask(tls_cluster, dimuon_files, tmp_path):
    # the cluster speaks TLS: the scheduler and each worker are at tls://
    ident = tls_cluster.identity()
    assert ident["address"].startswith("tls://"), ident["address"]
    assert sorted(w.split("://")[0] for w in ident["workers"]) == ["tls", "tls"]
    files, truth = dimuon_files
    out = tmp_path / "measurement"
    with measuring(tmp_path, out, "--scheduler", tls_cluster.dashboard_url, *verify(tls_cluster),
                   "--duration", 600) as live:
        tls_cluster.drop(live.env["ROASTOP_ADDR"].rsplit(":", 1)[1])
        r = run_example(tls_cluster, files, tmp_path / "result.json", "--collector", "roastop",
                        "--chunksize", CHUNKSIZE, env=client_env(**live.env))
    m = load_metrics(out)
    exact_chunks(m, r, truth)
    udp = m["roastop"]["udp"]
    # the client by UDP (its hello acked), each worker process by Dask
    assert udp["senders_by_path"] == {"udp": 1, "dask": 2}, udp
    assert udp["datagrams_by_path"]["dask"] >= m["num_chunks"], udp
    # every payload read went to the listener, which alone counts it
    assert not {"elsewhere", "rejected"} & set(m["roastop"]["scheduler"]["datagrams"])
    assert m["roastop"]["run_ended"] is True


@pytest.fixture(**DASHBOARDS)
def routeless_cluster(request, tmp_path):
    """A TLS cluster no collector has run on: the roastop route, which stays
    once installed, is not there."""
    c = Cluster(tmp_path, tls=True, https=request.param == "https")
    try:
        yield c
    finally:
        c.stop()


def test_workers_own_dashboards_read_in_their_scheme(routeless_cluster, tmp_path):
    """No route (no collector): identity.json answers 500 while tasks run,
    and each worker's /metrics gives memory and CPU; with HTTPS dashboards
    it must be asked over HTTPS (distributed serves the scheduler's and the
    workers' dashboards from one configuration)."""
    c = routeless_cluster
    lst = Listener(tmp_path, "--no-auth", "--scheduler", c.dashboard_url, *verify(c),
                   "--interval", "0.5", "--duration", "600")
    m = busy_until_workers_read(c, lst)
    assert m["roastop"]["scheduler"]["identity_500"] > 0
