"""A dashboard behind an https reverse proxy with a path prefix and a token,
as on a JupyterHub: --dashboard-prefix, --header, --cacert, --insecure, and
TLS verification on by default."""
import pytest

from conftest import Listener
from dask_cluster import Cluster, Proxy, busy_until_workers_read, wait_for

TOKEN_HEADER = "Authorization: token s3cret"


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("proxy")
    c = Cluster(tmp)
    p = Proxy(tmp, c.dashboard_url)
    yield c, p
    p.close()
    c.close()


def watch(tmp_path, proxy, *extra):
    return Listener(tmp_path, "--no-auth", "--scheduler", proxy.url, "--dashboard-prefix",
                    Proxy.PREFIX, "--interval", "0.5", *extra)


def test_https_prefix_and_token(tmp_path, proxied):
    _, proxy = proxied
    proxy.seen_auth.clear()
    lst = watch(tmp_path, proxy, "--cacert", proxy.cert, "--header", TOKEN_HEADER)
    wait_for(lambda: "scheduler connected" in lst.err_path.read_text())
    _, m = lst.stop()
    assert m["peak_workers"] == 2
    assert m["roastop"]["scheduler_samples"] > 0
    assert proxy.seen_auth and set(proxy.seen_auth) == {"token s3cret"}


def test_tls_verified_by_default(tmp_path, proxied):
    _, proxy = proxied
    lst = watch(tmp_path, proxy, "--header", TOKEN_HEADER)
    wait_for(lambda: "scheduler lost" in lst.err_path.read_text())
    _, m = lst.stop()
    assert "certificate" in lst.err_path.read_text().lower()
    assert m["roastop"]["scheduler_samples"] == 0
    assert m["peak_workers"] is None  # never seen: null, not 0


def test_insecure_skips_verification(tmp_path, proxied):
    _, proxy = proxied
    lst = watch(tmp_path, proxy, "--insecure", "--header", TOKEN_HEADER)
    wait_for(lambda: "scheduler connected" in lst.err_path.read_text())
    _, m = lst.stop()
    assert m["peak_workers"] == 2


def test_missing_token_is_degraded_not_lost(tmp_path, proxied):
    _, proxy = proxied
    lst = watch(tmp_path, proxy, "--cacert", proxy.cert)
    wait_for(lambda: "HTTP 403" in lst.err_path.read_text())
    _, m = lst.stop()
    assert m["roastop"]["sources"]["scheduler"]["state"] == "degraded"
    assert m["roastop"]["scheduler_samples"] == 0


def test_workers_dashboards_in_http_behind_an_https_proxy(tmp_path, proxied):
    """Without a route, identity.json answers 500 while tasks run and each
    worker's own /metrics is read, at the host and port identity.json
    named, not through the proxy: over HTTP here, though the scheduler's
    URL is https (roastop's first guess), so roastop must turn to HTTP."""
    cluster, proxy = proxied
    lst = watch(tmp_path, proxy, "--cacert", proxy.cert, "--header", TOKEN_HEADER,
                "--duration", "600")
    m = busy_until_workers_read(cluster, lst)
    assert m["roastop"]["scheduler"]["identity_500"] > 0
