"""The collector's hello against the real roastop (docs/protocol.md, "Hello
and acknowledgement"): with roastop down, with a wrong key and with the
right key, what the client says (a warning or not), how long its __enter__
took, and what roastop counted (metrics.json roastop.udp)."""
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import Listener

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
sys.path.insert(0, str(PYTHON_DIR))
from roastop.transport import HELLO_TIMEOUT  # noqa: E402

SLACK = 3.0  # above the timeout: a loaded 2-core machine may hand the client back late

CLIENT = textwrap.dedent("""
    import json, sys, time, warnings
    sys.path.insert(0, sys.argv[1])
    from roastop import MetricsCollector
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        mc = MetricsCollector(None, run_name="hello test")
        t = time.monotonic()
        mc.__enter__()
        enter = time.monotonic() - t
        mc.__exit__(None, None, None)
    print(json.dumps({"enter": enter, "answered": mc.roastop_answered,
                      "sent": mc.datagrams_sent,
                      "warnings": [str(w.message) for w in caught
                                   if w.category is RuntimeWarning]}))
""")


def client(tmp_path, addr, key_hex):
    """The collector in its own process (its own emitter, socket and warnings)."""
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    env = dict(os.environ, ROASTOP_ADDR=addr, ROASTOP_KEY=key_hex)
    env.pop("ROASTOP_HELLO", None)
    r = subprocess.run([sys.executable, str(script), str(PYTHON_DIR)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    print(f"{addr}: __enter__ took {out['enter'] * 1000:.1f} ms, answered {out['answered']}")
    return out


def no_answer(out, addr):
    assert out["answered"] is False
    assert out["warnings"] == [f"roastop at {addr} did not answer within {HELLO_TIMEOUT:g} s: "
                               "not running, firewalled, or another key (ROASTOP_KEY); "
                               "sending anyway"]
    assert HELLO_TIMEOUT * 0.9 <= out["enter"] < HELLO_TIMEOUT + SLACK, out
    assert out["sent"] == 2  # run_start and run_end go anyway


def test_roastop_down(tmp_path):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()  # nothing listens there now
    no_answer(client(tmp_path, addr, os.urandom(32).hex()), addr)


def test_wrong_key(tmp_path):
    lst = Listener(tmp_path)
    addr = "%s:%d" % lst.addr
    try:
        out = client(tmp_path, addr, os.urandom(32).hex())
    finally:
        _, m = lst.stop()
    no_answer(out, addr)
    u = m["roastop"]["udp"]
    # the hello failed its tag like the run's two datagrams; nothing answered
    assert u["rejected"]["bad_tag"] == u["datagrams"] == 3, u
    assert u["hellos"] == u["acks_sent"] == u["acks_refused"] == u["acks_failed"] == 0, u


def test_right_key(tmp_path):
    lst = Listener(tmp_path)
    addr = "%s:%d" % lst.addr
    try:
        out = client(tmp_path, addr, lst.key.hex())
    finally:
        _, m = lst.stop()
    assert out["answered"] is True and out["warnings"] == [], out
    # the answer ends the wait: without it the client waits the whole timeout
    # (no_answer); how soon within it is make bench's business, not a test's
    assert out["enter"] < HELLO_TIMEOUT * 0.9, out
    u = m["roastop"]["udp"]
    assert u["hellos"] == u["acks_sent"] == 1, u
    assert u["acks_refused"] == u["acks_failed"] == 0, u
    # the hello is answered, not applied: the run sees run_start and run_end only
    assert u["datagrams"] == 3 and u["applied"] == 2 and u["rejected"]["total"] == 0, u
    assert u["senders"] == 1 and u["missing"] == 0, u


def test_no_auth_answers_a_client_without_a_key(tmp_path):
    lst = Listener(tmp_path, "--no-auth")
    addr = "%s:%d" % lst.addr
    try:
        out = client(tmp_path, addr, "")  # no key: untagged hello, untagged ack
    finally:
        _, m = lst.stop()
    assert out["answered"] is True and out["warnings"] == [], out
    assert out["enter"] < HELLO_TIMEOUT * 0.9, out  # the answer ended the wait
    u = m["roastop"]["udp"]
    assert u["hellos"] == u["acks_sent"] == 1 and u["applied"] == 2, u
