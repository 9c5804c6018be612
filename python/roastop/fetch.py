"""The client's side of roastop's HTTP channel (docs/serve.md): a run's
measurement, fetched once the run has closed in roastop, over TCP at the
port of ROASTOP_ADDR with the session key as a bearer token."""
import http.client
import json
import time

from roastop.transport import parse_addr

FETCH_TIMEOUT = 30.0  # seconds: a run closes ~1 s after run_end (SESSION_SETTLE)
POLL_EVERY = 0.1
MAX_BODY = 256 << 20  # a measurement is bounded well below this (docs/metrics.md)


class MetricsUnavailable(RuntimeError):
    """roastop could not give this run's measurement: not reachable over
    TCP, another key, the run unknown to it or not closed in time. A
    RuntimeError, as roastcoffea's get_metrics() raises when it has none."""


def _error_text(status, body):
    try:
        why = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        why = body[:200].decode("utf-8", "replace")
    return f"HTTP {status}: {why}"


class Channel:
    """GETs to one roastop, each bounded by what is left of a deadline."""

    def __init__(self, addr, key_hex):
        self.addr = addr
        self.host, self.port = parse_addr(addr)
        self.key_hex = key_hex

    def get(self, path, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn = http.client.HTTPConnection(self.host, self.port, timeout=left)
        try:
            conn.request("GET", path, headers={"Authorization": f"Bearer {self.key_hex}"})
            resp = conn.getresponse()
            body = resp.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise MetricsUnavailable(f"roastop at {self.addr} sent more than "
                                         f"{MAX_BODY >> 20} MiB for {path}")
            return resp.status, body
        finally:
            conn.close()

    def _fail(self, what, why):
        return MetricsUnavailable(f"roastop at {self.addr} (tcp): {what}: {why}")

    def wait_closed(self, run_id, deadline):
        """The run's row once roastop has closed it (its measurement
        written); MetricsUnavailable when it cannot be had by the deadline."""
        last = "no answer"
        while True:
            try:
                status, body = self.get(f"/runs/{run_id}", deadline)
            except TimeoutError:
                raise self._fail(f"run {run_id} not closed in time", last) from None
            except OSError as exc:
                raise self._fail("not reachable", f"{exc} (roastop not running or "
                                 "not serving (--serve), or gone: with --exit-on-run-end "
                                 "it waits 3 s after the run for this call; the "
                                 "measurement is in its --output directory)") from None
            if status == 401:
                raise self._fail("refused", "another session key (ROASTOP_KEY)")
            if status == 200:
                row = json.loads(body)
                if row.get("closed"):
                    return row
                last = f"still {row.get('status')}"
            elif status == 404:
                last = "roastop has no run of this id (yet)"
            else:
                raise self._fail(f"run {run_id}", _error_text(status, body))
            if time.monotonic() + POLL_EVERY >= deadline:
                raise self._fail(f"run {run_id} not closed in time", last)
            time.sleep(POLL_EVERY)

    def run_file(self, run_id, name, deadline):
        """One file of a closed run's measurement, as bytes."""
        try:
            status, body = self.get(f"/runs/{run_id}/{name}", deadline)
        except TimeoutError:
            raise self._fail(name, "timed out") from None
        except OSError as exc:
            raise self._fail("not reachable", str(exc)) from None
        if status != 200:
            raise self._fail(name, _error_text(status, body))
        return body
