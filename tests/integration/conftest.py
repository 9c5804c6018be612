"""Shared fixtures: the real roastop binary and the recording generator."""
import atexit
import contextlib
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import types
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ROASTOP = os.environ.get("ROASTOP", "build/roastop")
TOOLS = os.environ.get("TOOLS", "build/tools")

# Without --key-file roastop keeps its key in $XDG_CONFIG_HOME/roastop/key:
# every roastop the tests start (tests/faults import this module too) gets a
# config directory of the test session's own, never the user's ~/.config.
_CONFIG_HOME = tempfile.mkdtemp(prefix="roastop-tests-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG_HOME
atexit.register(shutil.rmtree, _CONFIG_HOME, True)


def no_nan(text):
    """json.loads that fails on NaN/Infinity, which roastop must never write."""
    def reject(name):
        raise ValueError(f"non-finite number {name} in JSON")
    return json.loads(text, parse_constant=reject)


def generate(path: Path, truth: Path, **opts):
    args = [f"{TOOLS}/gen_recording", "--truth", str(truth)]
    for key, value in opts.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    with open(path, "wb") as out:
        subprocess.run(args, stdout=out, check=True)
    return no_nan(truth.read_text())


def roastop(*args, timeout=120, **kw):
    return subprocess.run([ROASTOP, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def sigterm_seconds(proc):
    """SIGTERM, then the seconds until proc is gone (an AssertionError when
    it ignores the signal for 10 s: it is killed then)."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("SIGTERM ignored for 10 s")
    return time.monotonic() - t0


RUN_DIR_NAME = re.compile(r"^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d(_[A-Za-z0-9._-]+)?(-\d+)?$")


def run_dir(outdir: Path) -> Path:
    """The directory holding a measurement: outdir itself when it is one (a
    run's directory), else the run `latest` points to under the output root."""
    outdir = Path(outdir)
    latest = outdir / "latest"
    if latest.exists() or not (outdir / "metrics.json").exists():
        return latest
    return outdir


def run_start_of(d: Path):
    """A run directory's start (start_end_time.txt), for ordering; None if unread."""
    try:
        start = float((d / "start_end_time.txt").read_text().split(",")[0])
    except (OSError, ValueError, IndexError):
        return None
    return None if start != start else start  # nan: not measured


def run_dirs(root: Path):
    """The run directories under an output root (each run writes
    ROOT/<YYYY-MM-DD_HH-MM-SS>[_<name>]/), `latest` and anything else left
    out; oldest first, by the run's start, then by name."""
    root = Path(root)
    if not root.is_dir():
        return []
    dirs = [d for d in root.iterdir()
            if d.is_dir() and not d.is_symlink() and RUN_DIR_NAME.match(d.name)]
    return sorted(dirs, key=lambda d: (run_start_of(d) or float("inf"), d.name))


def run_metrics(out, n, timeout=120):
    """The n run directories under out with their metrics.json, once all n
    are written and closed (completed), oldest first."""
    def ready():
        got = []
        for d in run_dirs(out):
            try:
                got.append((d, no_nan((d / "metrics.json").read_text())))
            except (OSError, ValueError):
                return None
        return got if len(got) == n and all(m["run_status"] == "completed"
                                            for _, m in got) else None
    from dask_cluster import wait_for
    return wait_for(ready, timeout=timeout, step=0.2)


def recorded_events(rec: Path):
    """The whole lines of a recording so far (--record, flushed behind the
    events), as JSON; the line being written is left out."""
    out = []
    try:
        text = Path(rec).read_text()
    except OSError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # the line being written
    return out


def wait_polled(rec: Path, after: float, n=1, timeout=120):
    """Until roastop has applied n scheduler samples (polls) timed after
    `after` (time.time()): what it shows or writes then was polled since."""
    deadline = time.monotonic() + timeout
    while True:
        got = [e for e in recorded_events(rec) if e.get("type") == "sample"
               and e.get("t", 0) > after]
        if len(got) >= n:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(got)} of {n} polls after {after} in {rec}")
        time.sleep(0.1)


def load_metrics(outdir: Path):
    """metrics.json of the newest run under an output root (its `latest`),
    or of the run directory given."""
    return no_nan((run_dir(outdir) / "metrics.json").read_text())


def memory_env():
    """The environment for a roastop whose memory a test measures. Under
    ASan (make asan) freed blocks wait in a quarantine of up to 256 MB and
    would count as roastop's own; these runs turn it off (a plain build
    ignores ASAN_OPTIONS)."""
    env = dict(os.environ)
    opts = [o for o in env.get("ASAN_OPTIONS", "").split(":") if o]
    env["ASAN_OPTIONS"] = ":".join(opts + ["quarantine_size_mb=0",
                                           "thread_local_quarantine_size_kb=0"])
    return env


def _wire_tables():
    """{type: (kind, {name: (id, encoding)})}: the reference decoder's tables
    (python/tests/roastop_testutil.py, typed in from docs/protocol.md and
    checked against roastop's by test_wire_table.py), turned round."""
    import sys
    sys.path.insert(0, str(REPO_ROOT / "python" / "tests"))
    import roastop_testutil
    return ({name: (kind, {field: (fid, enc) for fid, (field, enc) in table.items()})
             for kind, (name, table) in roastop_testutil.V2_KINDS.items()},
            roastop_testutil.V2_META_FIELDS)


WIRE, META = _wire_tables()


def _str(value):
    data = value.encode()
    return struct.pack("<H", len(data)) + data


def _value(encoding, value):
    if encoding in ("num", "int"):
        return struct.pack("<d", value)
    if encoding == "str":
        return _str(value)
    if encoding == "strlist":
        return struct.pack("<H", len(value)) + b"".join(_str(v) for v in value)
    if encoding == "kv":
        return struct.pack("<H", len(value)) + b"".join(
            _str(k) + struct.pack("<d", v) for k, v in value.items())
    ids = {name: (mid, enc) for mid, (name, enc) in META.items()}   # file_metadata
    return bytes([len(value)]) + b"".join(
        bytes([ids[k][0]]) + _value(ids[k][1], v) for k, v in value.items())


def v2_body(msg):
    """The datagram body of msg (its "type", chunk when none, names the kind),
    encoded here from docs/protocol.md, not by roastop's emitter: the kind,
    then <id><value> per field in msg's order. A field the kind's table
    lacks is a KeyError: the test meant something the wire cannot say."""
    kind, table = WIRE[msg.get("type", "chunk")]
    out = [bytes([kind])]
    for name, value in msg.items():
        if name != "type" and value is not None:
            fid, encoding = table[name]
            out.append(bytes([fid]) + _value(encoding, value))
    return b"".join(out)


class Listener:
    """roastop --headless on a free loopback port; reads the address and key
    it prints for emitters."""

    def __init__(self, tmp_path, *extra, listen="127.0.0.1:0", env=None):
        """listen=None: no --listen (roastop's own choice of port)."""
        self.out = tmp_path / "measurement"
        self.err_path = tmp_path / "stderr.txt"
        where = ["--listen", listen] if listen else []
        self.proc = subprocess.Popen(
            [ROASTOP, "--headless", *where, "--output", str(self.out),
             "--duration", "60", *extra],
            stdout=subprocess.PIPE, stderr=open(self.err_path, "w"), text=True, env=env)
        # the emitter line whole (to its newline): the address and the key's path
        line = re.compile(r"roastop: emitters: export ROASTOP_ADDR=(\S+)"
                          r"(?: ROASTOP_KEY=\$\(cat \S+\))?\n")
        deadline = time.monotonic() + 30
        while True:
            text = self.err_path.read_text()
            m = line.search(text)
            if m:
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError("roastop printed no emitter line: " + text)
            time.sleep(0.05)
        self.emitter_line = m.group(0)
        host, port = m.group(1).rsplit(":", 1)
        self.addr = (host.strip("[]"), int(port))
        k = re.search(r"ROASTOP_KEY=\$\(cat (\S+)\)", text)
        self.key_path = k.group(1) if k else None
        self.key = bytes.fromhex(open(self.key_path).read().strip()) if k else None
        family = socket.AF_INET6 if ":" in self.addr[0] else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)

    def send(self, msg, key="session", tagged=True, cut=0):
        """msg as a datagram (v2_body), tagged under key (the session's
        unless given) unless not ``tagged``; ``cut`` drops that many bytes
        from the end of the body."""
        body = v2_body(msg)
        body = body[:len(body) - cut]
        k = self.key if key == "session" else key
        tag = b"\x01" + hmac.new(k, body, hashlib.sha256).digest() if tagged else b"\x00"
        self.sock.sendto(b"RTP2" + tag + body, self.addr)

    def served(self, path):
        """GET path from roastop's HTTP server (on the listener's port, the
        session key as the bearer token): the body, or None while the server
        does not answer 200."""
        import http.client
        c = http.client.HTTPConnection(self.addr[0], self.addr[1], timeout=10)
        try:
            c.request("GET", path, headers={"Authorization": "Bearer " + self.key.hex()}
                      if self.key else {})
            r = c.getresponse()
            body = r.read().decode()
        except OSError:
            return None
        finally:
            c.close()
        return body if r.status == 200 else None

    def served_count(self, family):
        """A counter of roastop's /metrics, or None while it does not answer."""
        body = self.served("/metrics")
        if body is None:
            return None
        m = re.search(rf"^{family}(?:{{[^}}]*}})? (\S+)$", body, re.M)
        return float(m.group(1)) if m else 0.0

    def wait_received(self, n, timeout=60):
        """Until roastop's loop has read n datagrams (its /metrics says so):
        what was sent is in, not left to the drain at its stop."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.served_count("roastop_udp_datagrams_total")
            if got is not None and got >= n:
                return got
            if time.monotonic() > deadline:
                raise AssertionError(f"roastop read {got} datagrams of {n}")
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        stdout, _ = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, self.err_path.read_text()
        return stdout, load_metrics(self.out)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A generated recording: 5,000 chunks, 16 workers joining and leaving,
    3 datasets, every 97th chunk failing; plus the generator's own truth."""
    d = tmp_path_factory.mktemp("small")
    rec, truth = d / "run.jsonl", d / "truth.json"
    t = generate(rec, truth, chunks=5000, workers=16, hours=0.5, sample_interval=1,
                 datasets=3, files=45, fail_every=97, seed=7)
    return rec, t


# The real coffea analysis (examples/) on a real Dask cluster, shared by the
# end-to-end and the roastcoffea side-by-side tests.

CHUNKSIZE = 10000


@pytest.fixture(scope="session")
def dimuon_files(tmp_path_factory):
    """The example's ROOT files (2 datasets x 3 files x 50,000 events) and
    the event counts make_files.py wrote them with."""
    import sys
    from dask_cluster import EXAMPLES
    d = tmp_path_factory.mktemp("dimuon-files")
    subprocess.run([sys.executable, str(EXAMPLES / "make_files.py"), str(d)], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    return d, json.loads((d / "truth.json").read_text())


@contextlib.contextmanager
def warm_cluster(tmp_path_factory, dimuon_files, n_workers=2, env=None):
    """`dask scheduler` + n_workers `dask worker` (1 thread each, named w0,
    w1, ...; env added to their environment), warmed up by one unmeasured
    run of the example, so that the measured runs that follow all find
    workers that have already imported coffea and read the files; stopped
    after the block."""
    from dask_cluster import Cluster, run_example
    c = Cluster(tmp_path_factory.mktemp("cluster"), n_workers=n_workers, env=env)
    try:
        files, _ = dimuon_files
        run_example(c, files, tmp_path_factory.mktemp("warmup") / "result.json",
                    "--collector", "none", "--chunksize", CHUNKSIZE)
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory, dimuon_files):
    """The session's warm cluster of two 1-thread workers (warm_cluster)."""
    with warm_cluster(tmp_path_factory, dimuon_files) as c:
        yield c


def exact_chunks(m, r, truth):
    """metrics.json m of one run of the example (result r) on the files of
    truth: the chunks alone add up to the files, each chunk once, none lost,
    none rejected, every chunk_start matched by its chunk."""
    import math
    per_file = math.ceil(50000 / CHUNKSIZE)
    assert m["num_chunks"] == r["report"]["chunks"] == per_file * truth["files"]
    assert m["total_events_from_chunks"] == truth["total_events"] == r["report"]["entries"]
    for ds, n in truth["events_per_dataset"].items():
        assert m["per_dataset"][ds]["total_events"] == n
    assert m["roastop"]["events_applied"]["chunk"] == m["num_chunks"]
    udp = m["roastop"]["udp"]
    assert udp["missing"] == 0 and udp["rejected"]["total"] == 0, udp
    fl = m["roastop"]["in_flight"]
    assert fl["unmatched_ends"] == 0 and fl["matched"] == fl["chunk_starts"], fl


def start_roastop_live(workdir: Path, *extra):
    """roastop --headless listening on a free loopback port (authentication
    on); returns the process and the emitter environment it printed."""
    import re
    import time
    err = workdir / "roastop.stderr"
    proc = subprocess.Popen([ROASTOP, "--headless", "--listen", "127.0.0.1:0", *map(str, extra)],
                            stdout=subprocess.PIPE, stderr=open(err, "w"), text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = err.read_text()
        # the emitter line whole, to its newline
        addr = re.search(r"ROASTOP_ADDR=(\S+) ROASTOP_KEY=\$\(cat \S+\)\n", text)
        key = re.search(r"ROASTOP_KEY=\$\(cat (\S+)\)\n", text)
        if addr and key:
            env = {"ROASTOP_ADDR": addr.group(1),
                   "ROASTOP_KEY": Path(key.group(1)).read_text().strip()}
            return proc, env
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("roastop did not print its address: " + err.read_text())


@contextlib.contextmanager
def measuring(workdir: Path, out: Path, *extra, wait=60):
    """roastop --headless measuring one run live into out until the run's
    end (--exit-on-run-end), with extra options (--scheduler, --duration,
    ...). Yields a namespace whose env is the emitter's environment; after
    the block roastop is waited for (wait seconds at most), must have
    exited 0, and its stdout is the namespace's stdout. A block that raises
    kills it."""
    proc, env = start_roastop_live(workdir, "--exit-on-run-end", "--output", out,
                                   "--checkpoint", 0, *extra)
    live = types.SimpleNamespace(env=env, stdout=None)
    try:
        yield live
        live.stdout, _ = proc.communicate(timeout=wait)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, (workdir / "roastop.stderr").read_text()


@pytest.fixture(scope="session")
def roastop_dimuon_run(tmp_path_factory, dask_cluster, dimuon_files):
    """The example measured live by roastop: roastop polls the scheduler's
    dashboard and receives the chunks, and stops on the run's end."""
    from dask_cluster import client_env, run_example
    d = tmp_path_factory.mktemp("roastop-run")
    out = d / "measurement"
    files, truth = dimuon_files
    with measuring(d, out, "--scheduler", dask_cluster.dashboard_url, "--duration", 600) as live:
        result = run_example(dask_cluster, files, d / "result.json", "--collector", "roastop",
                             "--chunksize", CHUNKSIZE, env=client_env(**live.env))
    return {"metrics": load_metrics(out), "out": out, "result": result, "truth": truth,
            "stdout": live.stdout, "dir": d}
