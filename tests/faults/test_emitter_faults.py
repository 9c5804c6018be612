"""The Python emitter where it runs, against the real roastop: a resolver that
never answers costs the client at most its stated 1 s wait and a worker's
chunks nothing (the collector ships the numeric address; a host name is
looked up off the processing thread); one key rule on both sides (64 hex
digits, optionally one newline) so that a key is refused once and clearly
instead of every datagram failing roastop's tag check; a processor whose
__getattr__ raises KeyError is still run and measured.

The resolver is real: the client runs under ``unshare -m -n`` (CI runs as
root) with /etc/resolv.conf bind-mounted to one naming a UDP server on
127.0.0.1:53 inside the new network namespace that reads queries and never
answers (glibc would wait 20 s for it)."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import ROASTOP, Listener, load_metrics  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
RESOLVE_TIMEOUT = 1.0   # the collector's stated wait (docs/protocol.md)
MARGIN = 2.0            # slack for a loaded 2-core machine
CHUNK_BOUND = 0.5       # a chunk that waited on this resolver would take 20 s


@pytest.fixture(autouse=True)
def no_heartbeat(monkeypatch):
    """Exact datagram counts here: the heartbeat (tests/integration/test_executors.py)
    is off in every process these tests start."""
    monkeypatch.setenv("ROASTOP_HEARTBEAT", "0")

PROCESSORS = textwrap.dedent("""
    import time

    from roastop import track_metrics, track_time

    class Events(list):
        def __init__(self, n):
            super().__init__(range(n))
            self.metadata = {"dataset": "ds", "filename": "f.root"}
            self.attrs = {}

    class DimuonProcessor:
        @track_metrics
        def process(self, events):
            with track_time(self, "select"):
                pass
            return {"n": len(events)}

    class DictBacked(DimuonProcessor):
        # attributes from a dict: a missing one raises KeyError, not AttributeError
        def __init__(self):
            self.__dict__["_data"] = {}

        def __getattr__(self, name):
            return self._data[name]

    def run_chunks(p, n):
        \"\"\"n chunks through p.process; the longest one's seconds.\"\"\"
        worst = 0.0
        for i in range(n):
            t = time.monotonic()
            assert p.process(Events(i)) == {"n": i}
            worst = max(worst, time.monotonic() - t)
        return worst
""")

# Runs as root inside a new mount and network namespace (argv: work dir,
# python dir, roastop binary): the resolver never answers, /etc/hosts names
# the sink until the "workers" start.
DRIVER = textwrap.dedent("""
    import json, os, pickle, re, socket, subprocess, sys, threading, time, warnings
    work, pydir, roastop = sys.argv[1:4]
    sys.path[:0] = [work, pydir]
    try:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True, capture_output=True)
        for name in ("resolv.conf", "hosts"):
            subprocess.run(["mount", "--bind", os.path.join(work, name), "/etc/" + name],
                           check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        sys.exit("SETUP: %s: %s" % (" ".join(exc.cmd), exc.stderr.decode().strip()))

    queries = []                                  # the nameserver that never answers
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind(("127.0.0.1", 53))
    threading.Thread(target=lambda: [queries.append(dns.recv(4096)) for _ in iter(int, 1)],
                     daemon=True).start()

    err = open(os.path.join(work, "roastop.err"), "w")
    rt = subprocess.Popen([roastop, "--headless", "--listen", "127.0.0.1:0", "--output",
                           os.path.join(work, "m"), "--duration", "150", "--exit-on-run-end"],
                          stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 30
    # the emitter line whole, to its newline
    while (not re.search(r"ROASTOP_KEY=\\$\\(cat \\S+\\)\\n", open(err.name).read())
           and time.monotonic() < deadline):
        time.sleep(0.05)
    text = open(err.name).read()
    port = int(re.search(r"ROASTOP_ADDR=127.0.0.1:(\\d+)", text).group(1))
    key = open(re.search(r"ROASTOP_KEY=\\$\\(cat (\\S+)\\)", text).group(1)).read()

    from roastop import MetricsCollector
    from procs import DimuonProcessor
    out = {}

    # 1. the client, with a name that only the silent nameserver could resolve
    p = DimuonProcessor()
    t = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with MetricsCollector(None, processor_instance=p, addr="roastop-hang.test:%d" % port,
                              key=key) as mc:
            out["enter"] = time.monotonic() - t
    out["warnings"] = [str(w.message) for w in caught]
    out["client_shipped"] = mc.emitter is not None
    deadline = time.monotonic() + 10
    while not queries and time.monotonic() < deadline:
        time.sleep(0.01)
    out["client_queries"] = len(queries)

    # 2. a name the client resolves (/etc/hosts); the workers could not (no hosts entry)
    def worker(*args, env=None):
        r = subprocess.run([sys.executable, "-c", WORKER, work, pydir, *args], timeout=150,
                           env=dict(os.environ, **(env or {})), capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    p = DimuonProcessor()
    with MetricsCollector(None, processor_instance=p, addr="roastop-sink.test:%d" % port,
                          key=key):
        out["shipped"] = p._roastop_addr
        with open(os.path.join(work, "proc.pickle"), "wb") as f:
            pickle.dump(p, f)
        subprocess.run(["umount", "/etc/hosts"], check=True)
        before = len(queries)
        out["worker"] = worker("proc.pickle")
        out["worker_queries"] = len(queries) - before
        # 3. ROASTOP_ADDR with a name in a worker's environment, no collector
        out["env_worker"] = worker("-", env={"ROASTOP_ADDR": "roastop-hang.test:%d" % port,
                                            "ROASTOP_KEY": key})
    rt.wait(timeout=60)
    out["roastop_rc"] = rt.returncode
    print(json.dumps(out))
""")

# A Dask worker's processing thread, simulated: the processor as pickled by
# the client (or one with only the environment), 50 chunks.
WORKER = textwrap.dedent("""
    import json, os, pickle, sys
    work, pydir, what = sys.argv[1:4]
    sys.path[:0] = [work, pydir]
    from procs import DimuonProcessor, run_chunks
    if what == "-":
        p = DimuonProcessor()
        p._roastcoffea_collect_metrics = True
    else:
        with open(os.path.join(work, what), "rb") as f:
            p = pickle.load(f)
    worst = run_chunks(p, 50)
    from roastop._state import shared
    e = next(iter(shared("emitter_cache", dict).values()), None) or shared("env_emitter", list)[0]
    print(json.dumps({"worst": worst, "sent": e.sent, "lost": e.lost,
                      "unresolved": getattr(e, "unresolved", None)}))
""")


def _namespaces_or_skip():
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.skip("needs ip(8) and unshare(1)")
    r = subprocess.run(["unshare", "-m", "-n", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"unshare -m -n is not permitted here (needs root): {r.stderr.strip()}")


def test_no_chunk_waits_on_a_resolver_that_never_answers(tmp_path):
    _namespaces_or_skip()
    (tmp_path / "resolv.conf").write_text("nameserver 127.0.0.1\noptions timeout:20 attempts:1\n")
    (tmp_path / "hosts").write_text("127.0.0.1 localhost\n127.0.0.1 roastop-sink.test\n")
    (tmp_path / "procs.py").write_text(PROCESSORS)
    driver = tmp_path / "driver.py"
    driver.write_text("WORKER = " + repr(WORKER) + "\n" + DRIVER)
    r = subprocess.run(["unshare", "-m", "-n", sys.executable, str(driver), str(tmp_path),
                        str(PYTHON_DIR), os.path.realpath(ROASTOP)],
                       capture_output=True, text=True, timeout=400)
    if r.stderr.startswith("SETUP: "):
        pytest.skip("cannot set up the namespace here: " + r.stderr.strip())
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    if not out["client_queries"]:
        pytest.skip("name lookups here do not go to /etc/resolv.conf's nameserver (nsswitch)")

    # the client: one bounded wait, one warning, nothing shipped
    assert out["enter"] < RESOLVE_TIMEOUT + MARGIN, out
    assert not out["client_shipped"]
    assert len(out["warnings"]) == 1 and "did not resolve within 1 s" in out["warnings"][0]

    # the shipped processor carries the number: no lookup at all on the worker
    port = int(out["shipped"].rsplit(":", 1)[1])
    assert out["shipped"] == "127.0.0.1:%d" % port
    assert out["worker"]["worst"] < CHUNK_BOUND, out
    assert out["worker"]["sent"] == 2 * 50 and out["worker_queries"] == 0, out  # start + chunk

    # a name in a worker's environment: looked up in the background, chunks dropped and counted
    assert out["env_worker"]["worst"] < CHUNK_BOUND, out
    assert out["env_worker"]["lost"] == out["env_worker"]["unresolved"] == 2 * 50, out

    # roastop took the run from the shipped address: every chunk, nothing rejected
    assert out["roastop_rc"] == 0
    m = load_metrics(tmp_path / "m")
    assert m["num_chunks"] == 50
    assert not any(m["roastop"]["udp"]["rejected"].values())


CLIENT = textwrap.dedent("""
    import os, sys, warnings
    sys.path[:0] = sys.argv[1:3]
    from roastop import MetricsCollector
    import procs
    warnings.simplefilter("always")
    run_chunks = procs.run_chunks
    p = getattr(procs, sys.argv[3])()
    run_chunks(p, 3)                                 # collection off
    try:
        with MetricsCollector(None, processor_instance=p) as mc:
            run_chunks(p, 20)
        print("collected", mc.datagrams_sent, mc.datagrams_lost)
    except ValueError as exc:
        print("refused:", exc)
        p._roastcoffea_collect_metrics = True        # a worker with ROASTOP_* in its environment
        run_chunks(p, 20)
""")


def _client(tmp_path, lst, key_text, processor="DimuonProcessor"):
    """CLIENT: 3 chunks with collection off, then 20 in a run (or, when the
    collector refuses, 20 with only the environment, as a worker would)."""
    (tmp_path / "procs.py").write_text(PROCESSORS)
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    env = dict(os.environ, ROASTOP_ADDR="%s:%d" % lst.addr, ROASTOP_KEY=key_text)
    return subprocess.run([sys.executable, str(script), str(tmp_path), str(PYTHON_DIR),
                           processor], env=env, capture_output=True, text=True, timeout=120)


def _twenty_chunks_and_no_rejects(lst, r):
    assert r.returncode == 0, r.stderr
    # run_start, run_end, and a chunk_start and a chunk for each of the 20
    assert r.stdout.split() == ["collected", "42", "0"], r.stdout + r.stderr
    lst.proc.communicate(timeout=60)
    assert lst.proc.returncode == 0
    m = load_metrics(lst.out)
    assert m["num_chunks"] == 20
    assert not any(m["roastop"]["udp"]["rejected"].values())


def test_a_processor_whose_getattr_raises_keyerror_is_run_and_measured(tmp_path):
    lst = Listener(tmp_path, "--exit-on-run-end")
    _twenty_chunks_and_no_rejects(lst, _client(tmp_path, lst, lst.key.hex(), "DictBacked"))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_key_file_with_one_newline_works_end_to_end(tmp_path, newline):
    key_file = tmp_path / "session.key"
    key_file.write_bytes((os.urandom(32).hex() + newline).encode())
    key_file.chmod(0o600)
    lst = Listener(tmp_path, "--key-file", str(key_file), "--exit-on-run-end")
    r = _client(tmp_path, lst, key_file.read_bytes().decode())   # the file's bytes, as read
    _twenty_chunks_and_no_rejects(lst, r)


@pytest.mark.parametrize("bad", ["16 bytes", "66 digits", "junk"])
def test_a_bad_key_is_refused_once_and_nothing_reaches_roastop(tmp_path, bad):
    lst = Listener(tmp_path, "--checkpoint", "1")
    good = lst.key.hex()
    key_text = {"16 bytes": good[:32], "66 digits": good + "00", "junk": good + "\nxyz"}[bad]
    r = _client(tmp_path, lst, key_text)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused: roastop key "), r.stdout + r.stderr
    assert "exactly 64 hex digits, optionally followed by one newline" in r.stdout
    warned = [line for line in r.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and "this process sends no metrics" in warned[0], r.stderr
    # a signed chunk after the client's datagrams (on loopback they were queued
    # at roastop's socket as the client sent them): once it is applied, all were read
    lst.send({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": 0,
              "duration": 0.25, "num_events": 1000, "dataset": "ds"})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if load_metrics(lst.out)["num_chunks"] == 1:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    _, m = lst.stop()
    assert m["num_chunks"] == 1
    assert m["roastop"]["udp"]["rejected"].get("bad_tag", 0) == 0
