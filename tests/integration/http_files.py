"""ROOT files served over HTTP from a directory, as a site's storage is: a
threaded server on a loopback address of its own (127.0.0.2 is another host
than 127.0.0.1 to every client, so two servers are two sites), answering
HEAD and single-range GETs, each request after `delay` seconds (a far or
busy site). Used by the findings tests for slow_site and io_bound."""
import contextlib
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Files(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _path(self):
        p = (self.server.root / self.path.lstrip("/").split("?")[0]).resolve()
        return p if p.is_file() and self.server.root in p.parents else None

    def _head(self, code, length, extra=()):
        self.send_response(code)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self):
        time.sleep(self.server.delay)
        p = self._path()
        if p is None:
            return self._head(404, 0)
        self._head(200, p.stat().st_size)

    def do_GET(self):
        time.sleep(self.server.delay)
        p = self._path()
        if p is None:
            return self._head(404, 0)
        size = p.stat().st_size
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start, end = (int(m.group(1)), int(m.group(2) or size - 1)) if m else (0, size - 1)
        end = min(end, size - 1)
        with open(p, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        extra = [("Content-Range", f"bytes {start}-{end}/{size}")] if m else []
        self._head(206 if m else 200, len(body), extra)
        self.wfile.write(body)


@contextlib.contextmanager
def serving(root: Path, host: str, delay: float = 0.0):
    """The files under root at http://host:PORT/ until the block ends; yields
    the base URL."""
    server = ThreadingHTTPServer((host, 0), _Files)
    server.daemon_threads = True
    server.root, server.delay = Path(root).resolve(), delay
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        t.join(timeout=10)


def fileset_over(files: Path, out: Path, base_of) -> Path:
    """A directory out with a fileset.json naming each file of files' fileset
    by URL: base_of(file name) gives its server's base URL."""
    import json
    fs = json.loads((files / "fileset.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    urls = {ds: [f"{base_of(os.path.basename(f))}/{os.path.basename(f)}" for f in fl]
            for ds, fl in fs.items()}
    (out / "fileset.json").write_text(json.dumps(urls))
    return out
