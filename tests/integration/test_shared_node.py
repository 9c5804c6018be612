"""Two people on one login node, each starting roastop without --listen: both
run, each one's export line delivers chunks to it alone, and each one's line
is the same after a restart. The two users are two config directories (their
keys and remembered ports); the default port is held by the test, as another
user's roastop would hold it."""
import errno
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import Listener

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
DEFAULT_PORT = 8790

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from roastop import MetricsCollector, track_metrics

    class Events(list):
        def __init__(self, i):
            super().__init__(range(10))
            self.metadata = {"dataset": "ds", "filename": "f%d.root" % i,
                             "entrystart": 0, "entrystop": 10}
            self.attrs = {}

    class Processor:
        @track_metrics
        def process(self, events):
            return {"n": len(events)}

    p = Processor()
    with MetricsCollector(None, processor_instance=p) as mc:
        for i in range(int(sys.argv[2])):
            p.process(Events(i))
    print(mc.datagrams_sent, mc.datagrams_lost)
""")


def hold_default_port():
    """The default port's UDP, held as another user's roastop holds it (None
    when somebody else already does: it is taken either way)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", DEFAULT_PORT))
    except OSError as e:
        assert e.errno == errno.EADDRINUSE, e
        s.close()
        return None
    return s


def user_env(home: Path):
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"))
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def start(tmp_path: Path, user: str, session: int):
    d = tmp_path / f"{user}-{session}"
    d.mkdir()
    # the HTTP server on the listener's port, by default: both must be free
    return Listener(d, listen=None, env=user_env(tmp_path / user))


def emit(tmp_path: Path, lst: Listener, chunks: int):
    """chunks through the real emitter, with the line lst printed."""
    script = tmp_path / "emit.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, ROASTOP_ADDR="%s:%d" % lst.addr, ROASTOP_KEY=lst.key.hex(),
               ROASTOP_HEARTBEAT="0")
    out = subprocess.run([sys.executable, str(script), str(PYTHON_DIR), str(chunks)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    sent, lost = map(int, out.stdout.split())
    assert lost == 0 and sent >= chunks, out.stdout
    return sent


def test_two_users_without_listen_each_get_their_own_stable_line(tmp_path):
    held = hold_default_port()
    try:
        a, b = start(tmp_path, "ann", 1), start(tmp_path, "bob", 1)
        assert a.addr != b.addr
        assert DEFAULT_PORT not in (a.addr[1], b.addr[1])
        for lst in (a, b):  # each has its own key, kept in its config directory
            assert lst.key_path.startswith(str(tmp_path)), lst.key_path
        for lst in (a, b):  # one line says what happened and where the port is kept
            err = lst.err_path.read_text()
            assert (f"roastop: port {DEFAULT_PORT} is taken; listening on udp "
                    f"127.0.0.1:{lst.addr[1]} instead (kept for your next sessions in "
                    f"{lst.key_path}.port)") in err, err
        sent_a, sent_b = emit(tmp_path, a, 5), emit(tmp_path, b, 3)
        a.wait_received(sent_a)
        b.wait_received(sent_b)
        lines = {"ann": a.emitter_line, "bob": b.emitter_line}
        _, ma = a.stop()
        _, mb = b.stop()
        assert (ma["num_chunks"], mb["num_chunks"]) == (5, 3)
        # restarted, in the other order: the same lines, each its own port again
        b2, a2 = start(tmp_path, "bob", 2), start(tmp_path, "ann", 2)
        try:
            assert (a2.emitter_line, b2.emitter_line) == (lines["ann"], lines["bob"])
            assert "is taken" not in a2.err_path.read_text()
        finally:
            a2.stop()
            b2.stop()
    finally:
        if held:
            held.close()


def test_an_explicit_listen_on_a_taken_port_fails_loudly(tmp_path):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        p = subprocess.run([os.environ["ROASTOP"], "--headless", "--listen",
                            f"127.0.0.1:{port}", "--duration", "5", "--output",
                            str(tmp_path / "out")], capture_output=True, text=True, timeout=60,
                           env=user_env(tmp_path / "ann"))
    finally:
        s.close()
    assert p.returncode != 0
    assert f"cannot listen on udp 127.0.0.1:{port}: Address already in use" in p.stderr
    assert "instead" not in p.stderr
