"""Nothing arrives while the scheduler shows tasks: a real `dask scheduler`
and worker on loopback run tasks that sleep, no emitter sends anything, and
the main view's header says so in the alert colour with the likely cause,
whole at 80x24 (its short form) and at 200x60; a run that begins starts the
count again, and a chunk of it ends the alert. Headless, one line on stderr.
The real roastop binary in a tmux pane (the Screen of test_screen.py)."""
import hashlib
import hmac
import re
import socket
import time

import pytest

from conftest import Listener, v2_body
from test_screen import COLOUR_SGR, SGR, pytestmark, screen  # noqa: F401 (tmux or skip; the fixture)

LONG = ("scheduler runs 2 tasks, no chunk arrived: is process() decorated and "
        "ROASTOP_ADDR/KEY exported to this roastop?")
SHORT = "2 tasks run, no chunk came: process() decorated? ROASTOP_* exported?"
QUIET_AFTER = 15.0  # src/app_alerts.c: tasks executing this long with no chunk


@pytest.fixture(scope="module")
def busy_cluster(tmp_path_factory):
    """A scheduler and two one-thread workers, each running a task that
    sleeps for the whole module."""
    from dask_cluster import Cluster
    c = Cluster(tmp_path_factory.mktemp("busy"), n_workers=2)
    client = c.client()
    try:
        futures = [client.submit(time.sleep, 3600, pure=False) for _ in range(2)]
        yield c
        del futures
    finally:
        client.close()
        c.stop()


def send(port, key, msg):
    body = v2_body(dict(msg, host="h", pid=7))
    tag = hmac.new(key, body, hashlib.sha256).digest()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"RTP2\x01" + tag + body, ("127.0.0.1", port))


def gone(s, head):
    deadline = time.monotonic() + 60
    while head in s.text():
        assert time.monotonic() < deadline, s.text()
        time.sleep(0.2)
    return time.monotonic()


@pytest.mark.parametrize("cols,rows,text", [(80, 24, SHORT), (200, 60, LONG)])
def test_tasks_run_and_no_chunk_comes(screen, tmp_path, busy_cluster, cols, rows, text):
    key_file = tmp_path / "key"
    s = screen(["--listen", "127.0.0.1:0", "--key-file", str(key_file),
                "--scheduler", busy_cluster.dashboard_url], cols=cols, rows=rows)
    first = s.wait_for(re.compile(r"executing 2\b"), timeout=60)
    busy_at = time.monotonic()
    head = text.split(":")[0]  # "... no chunk came" / "... no chunk arrived"
    assert head not in first
    shown = s.wait_for(text, timeout=QUIET_AFTER + 60)
    took = time.monotonic() - busy_at
    print(f"{cols}x{rows}: alert {took:.1f} s after the screen showed 2 tasks executing")
    assert took >= QUIET_AFTER - 2, took  # not before the tasks ran that long
    row = next(r for r in shown.splitlines() if text in r)
    print(row)
    assert row.strip().startswith(text)  # first on its line: never cut
    # the alert's row with its escapes, whole (a capture of its own: wait for it)
    erow = s.wait_for(lambda e: next((r for r in e.splitlines()
                                      if head in r and text in SGR.sub("", r)), None),
                      timeout=60, escapes=True)
    assert COLOUR_SGR.search(erow[:erow.index(head)]), erow
    # a run begins (its collector got through): it has had no chunk only since
    # now, so the alert goes and comes back QUIET_AFTER later
    port = int(re.search(r"udp 127\.0\.0\.1:(\d+) rx ", shown).group(1))  # read whole
    key = bytes.fromhex(key_file.read_text().strip())
    send(port, key, {"type": "run_start", "run_id": "r1", "name": "quiet", "seq": 0})
    began = gone(s, head)
    s.wait_for(text, timeout=QUIET_AFTER + 60)
    took = time.monotonic() - began
    print(f"{cols}x{rows}: again {took:.1f} s after the run began")
    assert took >= QUIET_AFTER - 2, took
    # a chunk of the run arrives: the alert goes
    send(port, key, {"type": "chunk", "run_id": "r1", "seq": 1, "duration": 0.5,
                     "num_events": 1000, "dataset": "ds"})
    gone(s, head)


def test_headless_says_it_once(tmp_path, busy_cluster):
    lst = Listener(tmp_path, "--scheduler", busy_cluster.dashboard_url)
    try:
        deadline = time.monotonic() + QUIET_AFTER + 40
        while f"roastop: {LONG}" not in lst.err_path.read_text():
            assert time.monotonic() < deadline, lst.err_path.read_text()
            time.sleep(0.2)
        time.sleep(2.5)  # a second line, if there were one, would be written by now
    finally:
        lst.stop()
    assert lst.err_path.read_text().count("no chunk arrived") == 1
