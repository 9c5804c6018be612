"""MetricsCollector's roastcoffea calls after the run (roastop.fetch): a fake
roastop HTTP channel on the TCP port of the collector's address, speaking the
routes of docs/serve.md. The real server is tested in
tests/integration/test_collector_api.py."""
import http.server
import json
import threading
import time
import warnings

import pytest
from roastop_testutil import KEY, fresh_process_state  # noqa: F401 - a fixture

from roastop import MetricsCollector, MetricsUnavailable

METRICS = {"total_events": 7, "num_chunks": 1, "roastop": {"run_status": "completed"}}
SUMMARY = b"roastop summary\nChunks  1\n"


class FakeRoastop(http.server.ThreadingHTTPServer):
    """Answers /runs/<id>[/file]; the run closes after ``open_polls`` polls."""

    def __init__(self, port=0):
        super().__init__(("127.0.0.1", port), Handler)
        self.key, self.run_id, self.open_polls = KEY.hex(), None, 2
        self.seen, self.polls = [], 0
        self.metrics_body = json.dumps(METRICS, indent=1).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body, kind="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        srv = self.server
        srv.seen.append(self.path)
        if self.headers.get("Authorization") != f"Bearer {srv.key}":
            return self.answer(401, b'{"error": "unauthorized"}')
        base = f"/runs/{srv.run_id}"
        if self.path == base:
            srv.polls += 1
            closed = srv.polls > srv.open_polls
            row = {"run_id": srv.run_id, "closed": closed,
                   "status": "completed" if closed else "running"}
            return self.answer(200, json.dumps(row).encode())
        if self.path == base + "/metrics.json":
            return self.answer(200, srv.metrics_body)
        if self.path == base + "/summary.txt":
            return self.answer(200, SUMMARY, "text/plain")
        return self.answer(404, b'{"error": "no such run"}')


@pytest.fixture()
def roastop(monkeypatch):
    monkeypatch.setenv("ROASTOP_HELLO", "0")
    srv = FakeRoastop()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def collected(srv, **kw):
    """A finished run whose id the fake roastop knows."""
    mc = MetricsCollector(None, addr=f"127.0.0.1:{srv.server_address[1]}", key=KEY, **kw)
    with mc:
        srv.run_id = mc.run_id
    return mc


def test_get_metrics_waits_for_the_close_and_returns_the_file(roastop):
    mc = collected(roastop)
    assert mc.get_metrics() == METRICS
    assert roastop.polls == 3                      # running, running, closed
    assert mc.get_metrics() is mc.get_metrics()    # fetched once
    assert mc.metrics == METRICS
    assert roastop.seen.count(f"/runs/{mc.run_id}/metrics.json") == 1


def test_save_measurement_writes_roastcoffeas_layout(roastop, tmp_path):
    mc = collected(roastop)
    path = mc.save_measurement(tmp_path / "out", "mine")
    assert path == tmp_path / "out" / "mine"
    assert (path / "metrics.json").read_bytes() == roastop.metrics_body
    assert (path / "summary.txt").read_bytes() == SUMMARY
    t0, t1 = map(float, (path / "start_end_time.txt").read_text().split(","))
    assert t0 == mc.t_start and t1 == mc.t_end and t0 <= t1
    meta = json.loads((path / "metadata.json").read_text())
    assert meta["format"] == "roastcoffea_measurement_v1" and meta["run_id"] == mc.run_id
    auto = mc.save_measurement(tmp_path / "out")
    assert auto.parent == tmp_path / "out" and auto.name[:2] == "20"


def test_print_summary_prints_roastops_summary(roastop, capsys):
    collected(roastop).print_summary()
    assert capsys.readouterr().out == SUMMARY.decode()


def test_another_key_is_said(roastop):
    roastop.key = "00" * 32
    mc = collected(roastop)
    with pytest.raises(MetricsUnavailable, match="another session key"):
        mc.get_metrics()


def test_a_run_that_never_closes_gives_up_at_the_timeout(roastop):
    roastop.open_polls = 10**9
    mc = collected(roastop)
    t = time.monotonic()
    with pytest.raises(MetricsUnavailable, match="not closed in time.*still running"):
        mc.get_metrics(timeout=0.5)
    assert time.monotonic() - t < 5


def test_an_unknown_run_is_said(roastop):
    mc = collected(roastop)
    roastop.run_id = "another"
    with pytest.raises(MetricsUnavailable, match="no run of this id"):
        mc.get_metrics(timeout=0.3)


def test_nothing_listening_is_said_at_once(roastop, monkeypatch):
    mc = collected(roastop)
    roastop.shutdown()
    roastop.server_close()
    t = time.monotonic()
    with pytest.raises(MetricsUnavailable, match="not reachable"):
        mc.get_metrics()
    assert time.monotonic() - t < mc.fetch_timeout


def test_metrics_attribute_warns_and_is_none(roastop):
    roastop.key = "00" * 32
    mc = collected(roastop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert mc.metrics is None
    assert any("another session key" in str(w.message) for w in caught)


def test_before_the_end_and_without_an_address(roastop, monkeypatch):
    mc = MetricsCollector(None, addr=f"127.0.0.1:{roastop.server_address[1]}", key=KEY)
    with pytest.raises(RuntimeError, match="before the context manager completes"):
        mc.get_metrics()
    with mc:
        with pytest.raises(RuntimeError, match="before the context manager completes"):
            mc.get_metrics()
    monkeypatch.delenv("ROASTOP_ADDR", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        silent = MetricsCollector(None)
    with silent:
        pass
    with pytest.raises(MetricsUnavailable, match="no metrics were sent"):
        silent.get_metrics()
    assert silent.metrics is None
