"""A misbehaving Dask dashboard for the fault tests: serves the responses a
real scheduler (distributed 2026.8.0) gave, captured in tests/fixtures, and
can be told to fail in the ways real ones do."""
import http.server
import json
import socket
import ssl
import threading
import time
from pathlib import Path

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "dask-2026.8.0"
SITEMAP = b'{"paths": ["/health", "/json/identity.json", "/metrics", "/sitemap.json"]}'


STATE = "/roastop/v1/state.json"


def bomb(size):
    """A roastop route answer of `size` bytes that is almost all `0,`: a few
    bytes of input per JSON value, the worst case for a tree-building parser."""
    head, tail = b'{"roastop_route":1,"workers":[],"fine":[],"x":[', b"0]}"
    return head + b"0," * ((size - len(head) - len(tail)) // 2) + tail


def worst_bomb(size, workers=3000, values=700_000):
    """The costliest route answer the parse budget lets through to cJSON:
    enough empty workers that the count of values passes, one long string
    (its copy costs its length), then short strings (80 bytes of tree for 4
    of body) until the tree reaches its byte cap."""
    head = b'{"roastop_route":1,"fine":[],"workers":[' + b",".join([b"{}"] * workers) + b'],"x":['
    tail = b'"a",' * values + b"0]}"
    return head + b'"' + b"a" * (size - len(head) - len(tail) - 3) + b'",' + tail


class FakeScheduler:
    """mode: ok | 500 | slow | truncated | short | huge | huge_stream | drop | hang
    | bomb (the route answers bomb(bomb_size); the rest is normal)
    | bomb_all (every JSON route answers it)
    | redirect (302 to redirect_to + the path, every route)
    | redirect_same (302 to /moved + the path, served there)
    | redirect_loop (302 to the same path)
    | stale_facts (the route of version 3, a captured body; asked with
      ?have=, it leaves the facts out under a token roastop does not hold).
    Every request's path and headers are kept in `seen`."""

    def __init__(self, slow_seconds=12.0, bomb_size=60_000_000, redirect_to=None, tls_cert=None):
        self.mode = "ok"
        self.slow_seconds = slow_seconds
        self.redirect_to = redirect_to
        self.requests = 0
        self.bombs = 0  # bomb answers begun
        self.seen = []
        self.bomb_body = bomb(bomb_size)
        self.identity = (FIX / "identity-idle.json").read_bytes()
        self.metrics = (FIX / "scheduler-metrics.txt").read_bytes()
        self.state_v3 = json.loads((FIX / "state-v3-idle.json").read_bytes())
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                fake.requests += 1
                fake.seen.append((self.path, dict(self.headers)))
                fake.answer(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        scheme = "http"
        if tls_cert:  # a PEM holding the key and the certificate
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(str(tls_cert))
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def body_for(self, path):
        if path == "/sitemap.json":
            return SITEMAP
        if path == "/json/identity.json":
            return self.identity
        if path == "/metrics":
            return self.metrics
        return None

    def stale_state(self, path):
        doc = dict(self.state_v3)
        if "?have=" in path:
            del doc["workers"], doc["worker_status"]
            doc["facts_token"] = "not-" + doc["facts_token"]
        return json.dumps(doc).encode()

    def answer(self, h):
        body, mode = self.body_for(h.path), self.mode
        if mode == "stale_facts" and h.path.split("?")[0] == STATE:
            return self.send(h, 200, self.stale_state(h.path))
        if mode.startswith("redirect"):
            return self.redirect(h)
        if (mode == "bomb" and h.path == STATE) or (mode == "bomb_all" and h.path.endswith(".json")):
            self.bombs += 1
            return self.send(h, 200, self.bomb_body)
        if body is None:
            return self.send(h, 404, b"not found")
        if mode == "500":
            return self.send(h, 500, b"<html><title>500: Internal Server Error</title></html>")
        if mode == "hang":  # a partition: the request is read, nothing ever comes back
            while self.mode == "hang":
                time.sleep(0.05)
            h.close_connection = True
            return
        if mode == "slow":
            time.sleep(self.slow_seconds)
        if mode == "short":  # Content-Length promises more than is sent, then close
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[: len(body) // 2])
            h.close_connection = True
            return
        if mode == "drop":  # the connection reset mid-body
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[:100])
            h.wfile.flush()
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            h.close_connection = True
            return
        if mode == "truncated":  # a complete HTTP answer whose JSON is cut
            body = body[: len(body) // 2]
        if mode in ("huge", "huge_stream"):
            return self.send_huge(h, 200 << 20, declared=mode == "huge")
        self.send(h, 200, body)

    def redirect(self, h):
        if self.mode == "redirect_same" and h.path.startswith("/moved/"):
            body = self.body_for(h.path[len("/moved"):])
            return self.send(h, 200, body) if body else self.send(h, 404, b"not found")
        where = {"redirect": self.redirect_to, "redirect_same": "/moved"}.get(self.mode, "")
        h.send_response(302)
        h.send_header("Location", where + h.path)
        h.send_header("Content-Length", "0")
        h.end_headers()

    @staticmethod
    def send(h, code, body):
        h.send_response(code)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            h.wfile.write(body)
        except OSError:
            h.close_connection = True  # roastop hung up over its cap

    @staticmethod
    def send_huge(h, size, declared):
        h.send_response(200)
        if declared:
            h.send_header("Content-Length", str(size))
        else:  # no length: the body ends when the connection closes
            h.send_header("Connection", "close")
        h.end_headers()
        chunk = b"[" * 65536
        try:
            for _ in range(size // len(chunk)):
                h.wfile.write(chunk)
        except OSError:
            pass  # roastop hung up once over its cap
        h.close_connection = True

    def close(self):
        self.mode = "ok"
        self.server.shutdown()
        self.server.server_close()
