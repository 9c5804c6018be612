"""Why nothing arrives: datagrams rejected for their tag (a previous
session's key: bad_tag; no key: no_tag) are said on the main view, whole at
80x24 and in the alert colour, within a second of their arrival; headless,
in one line on stderr. The real roastop binary in a tmux pane (the Screen of
test_screen.py), datagrams sent from here over loopback."""
import hashlib
import hmac
import os
import re
import socket
import time

from conftest import Listener, v2_body
from test_screen import (COLOUR_SGR, SGR, elapsed_shown, pytestmark,  # noqa: F401 (tmux or skip)
                         screen)

WRONG = "datagrams rejected: wrong key (bad_tag); re-export ROASTOP_KEY"
NONE = "datagrams rejected: no key (no_tag); export ROASTOP_KEY"
SEND_TO_SCREEN = 3.0  # the 1 s the alert may take, with slack for a loaded machine


def send(port, n, key=None, seq0=0):
    """n chunk datagrams, tagged with key (bytes) or untagged (None)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for seq in range(seq0, seq0 + n):
        body = v2_body({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
                        "duration": 0.5, "num_events": 1000, "dataset": "ds"})
        head = b"RTP2\x01" + hmac.new(key, body, hashlib.sha256).digest() if key else b"RTP2\x00"
        sock.sendto(head + body, ("127.0.0.1", port))
    sock.close()
    return time.monotonic()


def start_live(screen, tmp_path):
    key_file = tmp_path / "key"
    s = screen(["--listen", "127.0.0.1:0", "--key-file", str(key_file)], cols=80, rows=24)
    text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:(\d+) rx 0"), timeout=30)
    port = int(re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1))
    return s, port, bytes.fromhex(key_file.read_text().strip())


def wait_alert(s, line, sent):
    """Waits for the alert whole on one screen line (with any count: the
    frame drawn when it starts may count part of the burst), then for line;
    returns the seconds from the send to the first."""
    text = line.split(" datagrams ", 1)[1]
    s.wait_for(re.compile(r"(all|\d+ of) \d+ datagrams " + re.escape(text)), timeout=60)
    took = time.monotonic() - sent
    head = line.split(";")[0]  # no escape inside the alert's one segment

    def alert_row(escaped):
        """the row holding the whole line, with its escapes"""
        return next((r for r in escaped.splitlines() if head in r and line in SGR.sub("", r)),
                    None)
    row = s.wait_for(alert_row, timeout=30, escapes=True)  # the colours of the row waited for
    before = row[:row.index(head)]
    assert COLOUR_SGR.search(before), f"alert not in a colour: {row!r}"
    return took


def test_wrong_key_then_no_key_alert_within_a_second(screen, tmp_path):
    s, port, key = start_live(screen, tmp_path)
    assert "rejected" not in s.text()
    sent = send(port, 33, key=os.urandom(32))
    took = wait_alert(s, f"all 33 {WRONG}", sent)
    print(f"wrong key: alert {took:.2f} s after the send")
    assert took < SEND_TO_SCREEN, f"wrong-key alert after {took:.2f} s"
    sent = send(port, 33, key=None, seq0=33)
    took = wait_alert(s, f"all 66 {NONE}", sent)
    print(f"no key: alert {took:.2f} s after the send")
    assert took < SEND_TO_SCREEN, f"no-key alert after {took:.2f} s"
    # accepted datagrams turn "all" into "N of M"; the alert goes once
    # rejections stop coming (10 s, docs/dashboard.md, "Alerts in the header")
    send(port, 10, key=key, seq0=66)
    s.wait_for(f"66 of 76 {NONE}", timeout=30)
    # the alert gone, and the count read on that same capture, whole
    text = s.wait_for(lambda t: t if "rejected" not in t and re.search(r"\brx \d+ lost", t)
                      else None, timeout=60)
    assert "rx 76 lost" in text


def test_right_key_no_alert(screen, tmp_path):
    s, port, key = start_live(screen, tmp_path)
    send(port, 10, key=key)
    text = s.wait_for(lambda t: t if "rx 10 lost 0" in t and elapsed_shown(t) is not None
                      else None, timeout=30)
    counted_at = elapsed_shown(text)

    def two_frames_later(t):
        """a frame two seconds of roastop's own clock after the one that
        counted the datagrams; none before it has the alert"""
        assert "rejected" not in t, t
        e = elapsed_shown(t)
        return t if e is not None and e >= counted_at + 2 else None
    s.wait_for(two_frames_later, timeout=60)


def test_headless_says_it_once(tmp_path):
    li = Listener(tmp_path)
    try:
        li.send({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": 0}, tagged=False)
        deadline = time.monotonic() + 30
        while f"all 1 {NONE}" not in li.err_path.read_text():
            assert time.monotonic() < deadline, li.err_path.read_text()
            time.sleep(0.05)
        for seq in range(1, 20):
            li.send({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq},
                    key=os.urandom(32))
        time.sleep(1.5)  # a second line, if there were one, would be written by now
    finally:
        li.stop()
    assert li.err_path.read_text().count("datagrams rejected:") == 1
