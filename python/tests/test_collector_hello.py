"""The collector's hello (docs/protocol.md, "Hello and acknowledgement"):
a stand-in roastop here checks each hello by hand and answers it as the
document says, rightly or in one of the ways that must be ignored; the
collector waits at most HELLO_TIMEOUT, warns once without an authentic
answer, and never raises."""
import hashlib
import hmac
import socket
import struct
import threading
import time
import warnings

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state is a fixture
    KEY, addr_of, split_datagram, fresh_process_state)

from roastop import MetricsCollector
from roastop.emitter import Emitter
from roastop.transport import HELLO_TIMEOUT
from roastop.wire import ack_ok, keyed_mac

NONCE = "0123456789abcdef0123456789abcdef"
SLACK = 2.0     # a loaded 2-core machine may be this late to give the client back


def signed(msg, key=KEY):
    """The datagram of an ack (or a hello) holding only its nonce, encoded
    and tagged by hand from docs/protocol.md (not with the emitter's code):
    the kind, then id 71 and the nonce as a str."""
    nonce = msg["nonce"].encode()
    body = bytes([{"ack": 8, "hello": 7}[msg["type"]], 71]) + struct.pack("<H", len(nonce)) + nonce
    if key is None:
        return b"RTP2\x00" + body
    return b"RTP2\x01" + hmac.new(key, body, hashlib.sha256).digest() + body


class Roastop:
    """A UDP socket that answers each hello it receives, as ``mode`` says:
    ok, wrong_tag, wrong_nonce, other_address (right ack, from another
    socket), untagged, silent. The hellos it saw are in ``hellos``."""

    def __init__(self, mode="ok", key=KEY):
        self.mode, self.key, self.hellos = mode, key, []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addr = addr_of(self.sock)
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                data, src = self.sock.recvfrom(70000)
            except socket.timeout:
                continue
            msg = split_datagram(data, self.key)      # checks the tag by hand
            self.hellos.append(msg)
            if msg.get("type") == "hello":
                self._answer(msg["nonce"], src)

    def _answer(self, nonce, src):
        ack = {"type": "ack", "nonce": nonce}
        if self.mode == "ok":
            self.sock.sendto(signed(ack, self.key), src)
        elif self.mode == "wrong_tag":
            self.sock.sendto(signed(ack, bytes(32)), src)
        elif self.mode == "wrong_nonce":
            self.sock.sendto(signed(dict(ack, nonce="f" * 32), self.key), src)
        elif self.mode == "other_address":
            self.other.sendto(signed(ack, self.key), src)
        elif self.mode == "untagged":
            self.sock.sendto(signed(ack, None), src)

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()
        self.other.close()


@pytest.fixture()
def roastop_like(request):
    servers = []

    def make(mode="ok", key=KEY):
        servers.append(Roastop(mode, key))
        return servers[-1]
    yield make
    for s in servers:
        s.close()


def seen(r, n):
    """The first n datagrams r received, waiting for them (60 s at most)."""
    deadline = time.monotonic() + 60
    while len(r.hellos) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return r.hellos[:n]


def enter(addr, key=KEY, **kw):
    """A collector entered and left; (seconds __enter__ took, warnings, collector)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mc = MetricsCollector(None, addr=addr, key=key, **kw)
        t = time.monotonic()
        mc.__enter__()
        took = time.monotonic() - t
        mc.__exit__(None, None, None)
    return took, [str(w.message) for w in caught if w.category is RuntimeWarning], mc


# ---- the ack's check ------------------------------------------------------

def test_ack_ok_takes_only_the_tagged_ack_of_the_nonce():
    mac = keyed_mac(KEY)
    ack = {"type": "ack", "nonce": NONCE}
    assert ack_ok(signed(ack), mac, NONCE)
    assert not ack_ok(signed(ack), mac, "f" * 32)                     # another nonce
    assert not ack_ok(signed(ack, bytes(32)), mac, NONCE)             # another key
    assert not ack_ok(signed(ack, None), mac, NONCE)                  # untagged, we have a key
    assert not ack_ok(signed({"type": "hello", "nonce": NONCE}), mac, NONCE)
    assert not ack_ok(signed(ack)[:-1], mac, NONCE)                   # cut: the tag fails
    for junk in (b"", b"RTP2", b"RTP1 - {", b"RTP2\x01" + bytes(40), b"\xff" * 100):
        assert not ack_ok(junk, mac, NONCE)
    assert ack_ok(signed(ack, None), None, NONCE)                     # no key: untagged only
    assert not ack_ok(signed(ack), None, NONCE)


def test_the_hello_is_framed_signed_and_takes_no_sequence_number(roastop_like):
    r = roastop_like()
    took, warned, mc = enter(r.addr)
    assert warned == [] and mc.roastop_answered is True
    hello, start, end = seen(r, 3)
    assert hello["type"] == "hello" and len(hello["nonce"]) == 32
    int(hello["nonce"], 16)
    assert hello["host"] == socket.gethostname() and hello["pid"] > 0
    assert hello["instance"] >= 1 and "seq" not in hello
    assert start["type"] == "run_start" and start["seq"] == 0 and end["seq"] == 1
    assert mc.datagrams_sent == 2                # run_start and run_end: the hello is a probe
    assert took < HELLO_TIMEOUT


# ---- answers, and answers to ignore ----------------------------------------

def test_an_answer_ends_the_wait_at_once(roastop_like):
    r = roastop_like()
    took, warned, mc = enter(r.addr)
    assert mc.roastop_answered is True and warned == []
    assert took < HELLO_TIMEOUT * 0.9, took  # unanswered, it waits the whole timeout


@pytest.mark.parametrize("mode", ["silent", "wrong_tag", "wrong_nonce", "other_address",
                                  "untagged"])
def test_no_authentic_answer_waits_the_timeout_and_warns(roastop_like, mode):
    r = roastop_like(mode)
    took, warned, mc = enter(r.addr)
    assert mc.roastop_answered is False
    assert HELLO_TIMEOUT * 0.9 <= took < HELLO_TIMEOUT + SLACK, took
    assert warned == [f"roastop at {r.addr} did not answer within {HELLO_TIMEOUT:g} s: "
                      "not running, firewalled, or another key (ROASTOP_KEY); sending anyway"]
    assert [m["type"] for m in seen(r, 2)] == ["hello", "run_start"]   # sent anyway


def test_no_key_takes_an_untagged_ack(roastop_like, monkeypatch):
    monkeypatch.delenv("ROASTOP_KEY", raising=False)
    r = roastop_like("untagged", key=None)
    took, warned, mc = enter(r.addr, key=None)
    assert mc.roastop_answered is True and warned == []


def test_warns_once_per_address(roastop_like):
    r = roastop_like("silent")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            with MetricsCollector(None, addr=r.addr, key=KEY) as mc:
                assert mc.roastop_answered is False
    assert len([w for w in caught if "did not answer" in str(w.message)]) == 1


def test_nothing_listening_costs_the_timeout_only():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    addr = addr_of(s)
    s.close()                                        # a closed port: nobody answers
    took, warned, mc = enter(addr)
    assert mc.roastop_answered is False and len(warned) == 1
    assert took < HELLO_TIMEOUT + SLACK, took


# ---- never raises, never longer -------------------------------------------

def test_a_socket_that_fails_is_a_missing_answer(roastop_like, monkeypatch):
    r = roastop_like()

    def broken(self):
        raise OSError("no socket today")
    monkeypatch.setattr(Emitter, "_socket", broken)
    took, warned, mc = enter(r.addr)
    assert mc.roastop_answered is False and len(warned) == 1
    assert took < HELLO_TIMEOUT, took                # failed at once: no wait


def test_warnings_made_errors_do_not_raise(roastop_like, capsys):
    r = roastop_like("silent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with MetricsCollector(None, addr=r.addr, key=KEY) as mc:
            assert mc.roastop_answered is False
    assert "did not answer" in capsys.readouterr().err


def test_a_flood_of_other_datagrams_does_not_extend_the_wait(roastop_like):
    r = roastop_like("silent")
    e = Emitter(r.addr, KEY)
    port = e._socket().getsockname()[1]         # connected, so bound: known before the hello
    stop = threading.Event()

    def flood():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        while not stop.is_set():
            s.sendto(b"RTP1 - {}", ("127.0.0.1", port))
        s.close()
    t = threading.Thread(target=flood, daemon=True)
    t.start()
    try:
        started = time.monotonic()
        assert e.hello(0.3) is False
        took = time.monotonic() - started
    finally:
        stop.set()
        t.join()
    assert 0.27 <= took < 0.3 + SLACK, took


# ---- skipping it -------------------------------------------------------------

@pytest.mark.parametrize("how", ["argument", "environment"])
def test_the_hello_can_be_skipped(roastop_like, monkeypatch, how):
    r = roastop_like("silent")
    if how == "environment":
        monkeypatch.setenv("ROASTOP_HELLO", "0")
        kw = {}
    else:
        monkeypatch.delenv("ROASTOP_HELLO", raising=False)
        kw = {"hello": False}
    took, warned, mc = enter(r.addr, **kw)
    assert warned == [] and mc.roastop_answered is None
    assert took < HELLO_TIMEOUT


def test_the_argument_wins_over_the_environment(roastop_like, monkeypatch):
    monkeypatch.setenv("ROASTOP_HELLO", "0")
    r = roastop_like()
    took, warned, mc = enter(r.addr, hello=True)
    assert mc.roastop_answered is True and seen(r, 1)[0]["type"] == "hello"

