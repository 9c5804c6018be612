"""roastop's HTTP server (--serve, issue 21 item 2) on the real binary over
loopback: by default on the UDP listener's host and port over TCP, every
route behind the session key as a bearer token; /metrics is OpenMetrics that
prometheus_client's parsers read during a live run; after the run closes,
GET /runs/<id>/metrics.json is the file's bytes (409 before); bad requests
get 4xx and the loop keeps serving, datagrams included; --serve off serves
nothing and a taken port costs only the server."""
import http.client
import json
import re
import socket
import subprocess
import time

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse

from conftest import ROASTOP, Listener, load_metrics, run_dirs, sigterm_seconds

DEADLINE = 90  # generous: CI is a loaded 2-core machine
SERVING = re.compile(r"serving runs and metrics on http://(\S+):(\d+)/")


def wait_until(what, timeout=DEADLINE, step=0.1):
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what.__doc__ or what}"
        time.sleep(step)


def checkpointed(lst, n):
    """Until a checkpoint (--checkpoint 1) holds n chunks: roastop's loop
    has run, past the server's opening, and applied what was sent."""
    def got():
        try:
            return load_metrics(lst.out)["num_chunks"] == n
        except (OSError, ValueError):
            return False
    wait_until(got)


def serve_port(lst):
    text = wait_until(lambda: SERVING.search(lst.err_path.read_text()))
    return int(text.group(2))


class Http:
    def __init__(self, port, key):
        self.port, self.key = port, key

    def get(self, path, method="GET", key="session", body=None, headers=None):
        """(status, headers, body bytes)."""
        h = dict(headers or {})
        k = self.key.hex() if key == "session" else key
        if k is not None:
            h["Authorization"] = "Bearer " + k
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def json(self, path):
        status, _, body = self.get(path)
        assert status == 200, (path, status, body)
        return json.loads(body)


def raw(port, data, timeout=30):
    """Bytes sent as they are on a new connection; what comes back until the
    server closes it (b"" when it closes without an answer)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                part = s.recv(65536)
            except ConnectionResetError:
                return out
            if not part:
                return out
            out += part
            if b"\r\n\r\n" in out and b"Connection: close" not in out:
                return out  # answered on a kept-alive connection
    finally:
        s.close()


def status_of(answer):
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(m.group(1)) if m else None


def chunk(seq, **kw):
    return dict({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
                 "duration": 0.25, "num_events": 1000, "dataset": "ds"}, **kw)


def start_run(lst, n):
    lst.send({"type": "run_start", "run_id": "r", "name": "served", "host": "h", "pid": 7,
              "seq": 0, "processor": "P"})
    for seq in range(1, n + 1):
        lst.send(chunk(seq))
        if seq % 200 == 0:
            time.sleep(0.01)


def families(text):
    """The OpenMetrics parser's families by name (it raises on a bad line)."""
    assert text.endswith("# EOF\n")
    return {f.name: f for f in om_parse(text)}


def prom_value(text, sample, **labels):
    """A sample's value as the classic Prometheus text parser reads it (it
    knows no OpenMetrics counter family: it reads a counter's samples as an
    untyped family of their own name)."""
    for f in prom_parse(text):
        for s in f.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def value(fams, name, sample=None, **labels):
    for s in fams[name].samples:
        if s.name == (sample or name) and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


def test_live_metrics_then_the_runs_file(tmp_path):
    lst = Listener(tmp_path)
    try:
        port = serve_port(lst)
        assert port == lst.addr[1]  # found from ROASTOP_ADDR alone
        api = Http(port, lst.key)
        start_run(lst, 300)

        def chunks_served():
            status, h, body = api.get("/metrics")
            assert status == 200
            assert h["Content-Type"] == ("application/openmetrics-text; version=1.0.0; "
                                         "charset=utf-8")
            fams = families(body.decode())
            n = value(fams, "roastop_chunks", "roastop_chunks_total", run_id="r")
            if n != 300:
                return None
            assert prom_value(body.decode(), "roastop_chunks_total", run_id="r") == 300
            return fams
        fams = wait_until(chunks_served)
        assert value(fams, "roastop_events", "roastop_events_total", run_id="r") == 300000
        assert value(fams, "roastop_run_status", run_id="r", status="running") == 1
        assert value(fams, "roastop_run_status", run_id="r", status="completed") == 0
        assert value(fams, "roastop_udp_datagrams", "roastop_udp_datagrams_total") >= 301
        assert "roastop_workers" not in fams  # no scheduler: not measured, no sample

        runs = api.json("/runs")["runs"]
        assert [(r["run_id"], r["name"], r["status"], r["closed"], r["dir"]) for r in runs] \
            == [("r", "served", "running", False, runs[0]["dir"])]
        assert api.json("/runs/latest") == runs[0]
        status, _, body = api.get("/runs/r/metrics.json")
        assert status == 409 and json.loads(body) == {"error": "run not closed",
                                                      "status": "running"}
        assert api.get("/runs/r/summary.txt")[0] == 409

        lst.send({"type": "run_end", "run_id": "r", "host": "h", "pid": 7, "seq": 301,
                  "status": "completed"})
        row = wait_until(lambda: (lambda r: r if r["closed"] else None)(api.json("/runs/r")))
        assert row["status"] == "completed" and row["dir"]
        disk = tmp_path / "measurement" / row["dir"]
        status, h, body = api.get("/runs/r/metrics.json")
        assert status == 200 and h["Content-Type"] == "application/json"
        assert body == (disk / "metrics.json").read_bytes()
        m = json.loads(body)
        assert m["num_chunks"] == 300 and m["run_status"] == "completed"
        assert m["roastop"]["serve"]["listen"] == f"127.0.0.1:{port}"
        assert m["roastop"]["serve"]["rejected"]["not_closed"] == 2
        status, h, body = api.get("/runs/latest/summary.txt")
        assert status == 200 and h["Content-Type"] == "text/plain; charset=utf-8"
        assert body == (disk / "summary.txt").read_bytes()
        status, h, body = api.get("/runs/r/metrics.json", method="HEAD")
        assert status == 200 and body == b""
        assert int(h["Content-Length"]) == (disk / "metrics.json").stat().st_size
        report = disk / "report.html"  # written at the close (report_html.h)
        status, h, body = api.get("/runs/r/report.html")
        assert status == 200 and h["Content-Type"] == "text/html; charset=utf-8"
        assert body == report.read_bytes()
    finally:
        lst.stop()
    assert [d.name for d in run_dirs(tmp_path / "measurement")] == [row["dir"]]


def test_every_route_needs_the_key_but_an_opened_metrics(tmp_path):
    lst = Listener(tmp_path)
    try:
        port = serve_port(lst)
        api = Http(port, lst.key)
        start_run(lst, 10)
        for path in ("/runs", "/runs/r", "/runs/latest", "/runs/r/metrics.json",
                     "/runs/r/summary.txt", "/runs/r/report.html", "/metrics", "/nowhere"):
            for key in (None, "0" * 64, lst.key.hex()[:-1], lst.key.hex() + "0"):
                status, h, body = api.get(path, key=key)
                assert status == 401, (path, key, status)
                assert h["WWW-Authenticate"].startswith("Bearer")
                assert "error" in json.loads(body)
        status, _, body = api.get("/runs", headers={"Authorization": "Basic " + lst.key.hex()},
                                  key=None)
        assert status == 401
        assert api.get("/runs")[0] == 200
        assert api.get("/metrics", key=lst.key.hex().upper())[0] == 200
    finally:
        lst.stop()

    (tmp_path / "open").mkdir()
    lst = Listener(tmp_path / "open", "--serve-metrics-open")
    try:
        api = Http(serve_port(lst), lst.key)
        status, _, body = api.get("/metrics", key=None)
        assert status == 200 and body.endswith(b"# EOF\n")
        assert api.get("/runs", key=None)[0] == 401
        assert api.get("/runs/latest/metrics.json", key=None)[0] == 401
    finally:
        lst.stop()


def test_bad_requests_get_4xx_and_the_loop_keeps_serving(tmp_path):
    lst = Listener(tmp_path)
    try:
        port = serve_port(lst)
        api = Http(port, lst.key)
        start_run(lst, 50)
        auth = b"Authorization: Bearer " + lst.key.hex().encode() + b"\r\n"
        status, h, body = api.get("/runs", method="POST", body=b"x")
        assert status == 405 and h["Allow"] == "GET, HEAD"
        assert api.get("/runs", method="DELETE")[0] == 405
        status, _, body = api.get("/runs", body=b"a body")
        assert status == 413 and "error" in json.loads(body)
        assert status_of(raw(port, b"GET /runs HTTP/1.1\r\nHost: x\r\n" + auth +
                             b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")) \
            in (400, 413)
        for path in (b"/nowhere", b"/runs/", b"/runs/nope", b"/runs/r/../../stderr.txt",
                     b"/runs/..%2f..%2fstderr.txt", b"/runs/r/metrics.json/x"):
            answer = raw(port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + auth +
                         b"Connection: close\r\n\r\n")
            assert status_of(answer) in (400, 404), (path, answer[:200])
            assert b"Authorization" not in answer and b"ROASTOP" not in answer
        long_url = raw(port, b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert long_url == b"" or 400 <= status_of(long_url) < 500, long_url[:200]
        garbage = raw(port, b"\x00\xff garbage \r\n\r\n")
        assert garbage == b"" or status_of(garbage) == 400, garbage[:200]
        bare = raw(port, b"GET\r\n\r\n")  # no path, no version
        assert bare == b"" or status_of(bare) == 400, bare[:200]

        # clients that connect and stay silent, up to the connection limit,
        # hold nothing up: datagrams and a new request are still served
        idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(15)]
        idle[0].sendall(b"GET /runs HTTP/1.1\r\nHo")  # half a request
        start_more = 51
        for seq in range(start_more, start_more + 50):
            lst.send(chunk(seq))

        def hundred():
            fams = families(api.get("/metrics")[2].decode())
            return value(fams, "roastop_chunks", "roastop_chunks_total", run_id="r") == 100
        wait_until(hundred)
        for s in idle:
            s.close()
        assert api.json("/runs")["runs"][0]["run_id"] == "r"

        def closes_seen():
            """/metrics once the server has taken the closed idle connections
            in (it counts them as it cleans them up, in its own loop)"""
            fams = families(api.get("/metrics")[2].decode())
            n = value(fams, "roastop_http_connections_without_request",
                      "roastop_http_connections_without_request_total")
            return fams if n and n >= 1 else None
        fams = wait_until(closes_seen)
        rej = {s.labels["reason"]: s.value for s in fams["roastop_http_requests_rejected"].samples}
        assert rej["method"] == 2 and rej["body"] >= 1 and rej["not_found"] >= 4, rej
        assert value(fams, "roastop_http_connections_without_request",
                     "roastop_http_connections_without_request_total") >= 1
    finally:
        _, m = lst.stop()
    serve = m["roastop"]["serve"]
    assert serve["rejected"]["method"] == 2 and serve["requests"] > 10, serve
    assert m["num_chunks"] == 100


def test_serve_off_and_a_taken_port(tmp_path):
    (tmp_path / "off").mkdir()
    lst = Listener(tmp_path / "off", "--serve", "off", "--checkpoint", "1")
    try:
        wait_until(lambda: "emitters:" in lst.err_path.read_text())
        start_run(lst, 5)
        # the loop ran (the server opens, or is said not to, before it starts)
        checkpointed(lst, 5)
        assert "serving" not in lst.err_path.read_text()
        try:
            socket.create_connection(("127.0.0.1", lst.addr[1]), timeout=5).close()
            assert False, "something listens on tcp with --serve off"
        except ConnectionRefusedError:
            pass
    finally:
        _, m = lst.stop()
    assert "serve" not in m["roastop"]

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    (tmp_path / "taken").mkdir()
    try:
        lst = Listener(tmp_path / "taken", "--checkpoint", "1", listen=f"127.0.0.1:{port}")
        try:
            said = wait_until(lambda: re.search(r"roastop: not serving HTTP: cannot listen on tcp "
                                                rf"127\.0\.0\.1:{port}: (.+); everything else",
                                                lst.err_path.read_text()))
            assert "in use" in said.group(1)
            start_run(lst, 20)
            checkpointed(lst, 20)  # applied by the loop, not only by the drain at the stop
        finally:
            _, m = lst.stop()
    finally:
        taken.close()
    assert m["num_chunks"] == 20  # the main job goes on
    assert m["roastop"]["serve"]["listen"] is None
    assert m["roastop"]["serve"]["open_failures"] == 1
    assert "in use" in m["roastop"]["serve"]["error"]


def test_a_replay_serves_only_when_asked(tmp_path, small_run):
    """A replay has no listener: no server unless --serve is given; then the
    key is read as a live roastop would, and the routes answer as live."""
    rec, _ = small_run
    key_file = tmp_path / "key"

    def start(name, *extra):
        err = tmp_path / f"{name}.err"
        proc = subprocess.Popen(
            [ROASTOP, "--headless", "--replay", str(rec), "--speed", "1", "--key-file",
             str(key_file), "--output", str(tmp_path / name), *extra],
            stdout=subprocess.DEVNULL, stderr=open(err, "w"))
        return proc, err

    proc, err = start("plain")
    try:
        wait_until(lambda: "collecting" in err.read_text())
    finally:
        assert sigterm_seconds(proc) < 10
    # the server would say so just after "collecting", before the loop: all
    # of stderr, once roastop is gone, is where to look
    assert "collecting" in err.read_text() and "serving" not in err.read_text()
    proc, err = start("served", "--serve", "127.0.0.1:0")
    try:
        port = int(wait_until(lambda: SERVING.search(err.read_text())).group(2))
        api = Http(port, bytes.fromhex(key_file.read_text().strip()))
        assert api.get("/runs", key=None)[0] == 401
        wait_until(lambda: api.json("/runs")["runs"])
        fams = wait_until(lambda: (lambda f: f if "roastop_chunks" in f else None)(
            families(api.get("/metrics")[2].decode())))
        assert fams["roastop_chunks"].samples[0].value > 0
        assert "roastop_udp_datagrams" not in fams  # no listener in a replay
    finally:
        assert sigterm_seconds(proc) < 10


def test_the_diagnosis_runs_once_per_tick_not_per_reader(tmp_path):
    """A live run written at every second's checkpoint (metrics.json,
    summary.txt, report.html: each with the findings) while /metrics is
    scraped many times a second: the diagnosis is evaluated once per tick
    for the one open run (roastop_diagnoses against roastop_ticks, its own
    counts), however many read the findings."""
    lst = Listener(tmp_path, "--checkpoint", "1")
    try:
        serve_port(lst)
        start_run(lst, 50)
        checkpointed(lst, 50)
        scrapes = 0

        def counts():
            body = lst.served("/metrics")
            assert body is not None
            fams = families(body)
            return (value(fams, "roastop_ticks", "roastop_ticks_total"),
                    value(fams, "roastop_diagnoses", "roastop_diagnoses_total"))
        ticks0, _ = counts()
        while True:
            ticks, diagnoses = counts()
            scrapes += 1
            if ticks >= ticks0 + 4:
                break
            time.sleep(0.02)
        first = load_metrics(lst.out)["roastop"]["findings"]
        assert first == []  # a healthy run: the findings are written, none holds
        assert scrapes >= 2 * (ticks - ticks0)  # readers outnumber ticks
        # the watch's snapshot before the run, the run's opened between two
        # ticks, then the run's at each tick: never one per reader
        assert 1 <= diagnoses <= ticks + 1, (ticks, diagnoses, scrapes)
    finally:
        lst.stop()
