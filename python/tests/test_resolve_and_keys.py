"""Issue 22, items 6 and 12 on the emitter side: no name lookup ever blocks
a chunk (the collector resolves once, with a bounded wait, and ships the
number; a host name elsewhere is looked up in the background), one key rule
(exactly 64 hex digits, optionally one newline), and a processor whose
__getattr__ raises something other than AttributeError is still run.

A resolver that never answers is injected here by wrapping
socket.getaddrinfo (lookups of names block, numeric ones do not);
tests/faults/test_emitter_faults.py does it with a real resolver."""
import socket
import threading
import time
import warnings

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, nothing_arrives, receive, receive_chunk, fresh_process_state, sink)
from roastop_fakes import Events

from roastop import MetricsCollector, track_metrics, track_time
from roastop.emitter import Emitter, emitter_for, parse_key

RESOLVE_TIMEOUT = 1.0  # the collector's stated wait for its lookup (docs/protocol.md)
MARGIN = 2.0          # seconds of slack for a loaded machine, on top of a stated bound
CHUNK_BOUND = 0.5     # a chunk that looked a name up would take the resolver's time


@pytest.fixture()
def hung_resolver(monkeypatch):
    """socket.getaddrinfo that never answers for a name (until released, or
    20 s), as a resolver behind a dead nameserver; numeric lookups as usual."""
    real = socket.getaddrinfo
    release = threading.Event()
    asked = []

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if flags & socket.AI_NUMERICHOST:
            return real(host, port, family, type, proto, flags)
        asked.append(host)
        release.wait(20)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield asked
    release.set()


class Proc:
    @track_metrics
    def process(self, events):
        with track_time(self, "select"):
            pass
        return {"n": len(events)}


def test_collector_waits_at_most_the_timeout_then_warns_and_sends_nothing(hung_resolver):
    p = Proc()
    t = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with MetricsCollector(None, processor_instance=p, addr="roastop.example:8790",
                              key=KEY) as mc:
            took = time.monotonic() - t
            assert p.process(Events(3)) == {"n": 3}
    assert hung_resolver == ["roastop.example"]
    assert took < RESOLVE_TIMEOUT + MARGIN
    assert mc.emitter is None and not getattr(p, "_roastcoffea_collect_metrics", False)
    texts = [str(w.message) for w in caught]
    assert len(texts) == 1 and "did not resolve within 1 s" in texts[0]


def test_collector_ships_the_numeric_address(sink):
    port = sink.getsockname()[1]
    p = Proc()
    with MetricsCollector(None, processor_instance=p, addr="localhost:%d" % port, key=KEY):
        assert p._roastop_addr in ("127.0.0.1:%d" % port, "[::1]:%d" % port)
        if p._roastop_addr.startswith("127."):
            assert receive(sink)["type"] == "run_start"


def test_resolve():
    from roastop.transport import resolve
    assert resolve("127.0.0.1:8790") == "127.0.0.1:8790"
    assert resolve("[::1]:8790") == "[::1]:8790"
    with pytest.raises(ValueError):
        resolve("nonsense")
    with pytest.raises(OSError):
        resolve("no-such-host.invalid:9")


def test_a_host_name_is_looked_up_off_the_sending_thread(hung_resolver):
    """ROASTOP_ADDR with a name in a worker's environment: chunks go on at
    full speed, their datagrams dropped and counted while the lookup hangs."""
    e = Emitter("roastop.example:8790", KEY)
    worst = 0.0
    for _ in range(200):
        t = time.monotonic()
        assert e.send({"type": "run_end"}) is False
        worst = max(worst, time.monotonic() - t)
    assert worst < CHUNK_BOUND
    assert e.lost == e.unresolved == 200 and e.sent == 0
    assert hung_resolver == ["roastop.example"]       # one lookup, in the background


def test_decorated_chunks_never_wait_on_the_resolver(hung_resolver, monkeypatch):
    monkeypatch.setenv("ROASTOP_ADDR", "roastop.example:8790")
    monkeypatch.setenv("ROASTOP_KEY", KEY.hex())
    p = Proc()
    p._roastcoffea_collect_metrics = True
    worst = 0.0
    for i in range(50):
        t = time.monotonic()
        assert p.process(Events(i)) == {"n": i}
        worst = max(worst, time.monotonic() - t)
    assert worst < CHUNK_BOUND


def test_a_host_name_resolves_in_the_background_then_sends(sink):
    e = Emitter("localhost:%d" % sink.getsockname()[1], KEY)
    deadline = time.monotonic() + 30
    while not e.send({"type": "run_end"}) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert e.sent == 1 and e.lost == e.unresolved
    if e._target[0] == "127.0.0.1":
        assert receive(sink)["type"] == "run_end"


def test_a_failed_lookup_is_retried_in_the_background(monkeypatch):
    from roastop import transport
    real = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if flags & socket.AI_NUMERICHOST:
            return real(host, port, family, type, proto, flags)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    e = Emitter("roastop.example:9", KEY)
    deadline = time.monotonic() + 30
    while e._lookup.failed is None and time.monotonic() < deadline:
        time.sleep(0.01)
    first = e._lookup
    assert not e.send({"type": "run_end"}) and e._lookup is first   # not at once
    monkeypatch.setattr(transport, "RESOLVE_RETRY", 0.0)
    assert not e.send({"type": "run_end"}) and e._lookup is not first


# One key rule on both sides: what roastop takes, the emitter takes.

HEX = KEY.hex()


@pytest.mark.parametrize("bad", [
    HEX[:32],                 # a 16-byte key
    HEX + "\nxyz",            # trailing junk after the newline
    HEX + "00",               # 66 hex digits
    HEX + " ", " " + HEX,     # spaces
    HEX + "\n\n", HEX + "\r", "zz" * 32,
    KEY[:16],                 # 16 raw bytes
])
def test_a_key_that_is_not_64_hex_digits_is_refused(bad):
    with pytest.raises(ValueError, match="roastop key"):
        parse_key(bad)
    with pytest.raises(ValueError, match="roastop key"):
        Emitter("127.0.0.1:9", bad)
    with pytest.raises(ValueError, match="roastop key"):
        MetricsCollector(None, addr="127.0.0.1:9", key=bad)


@pytest.mark.parametrize("good", [HEX, HEX + "\n", HEX + "\r\n", HEX.upper(), KEY])
def test_a_key_with_one_newline_is_taken(good, sink):
    assert parse_key(good) == KEY
    e = emitter_for(addr_of(sink), good)
    assert e is emitter_for(addr_of(sink), KEY)       # one key, one sender
    assert e.send({"type": "run_end"})
    assert receive(sink, KEY)["type"] == "run_end"


def test_a_bad_key_on_a_worker_is_refused_once(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_ADDR", addr_of(sink))
    monkeypatch.setenv("ROASTOP_KEY", HEX[:32])
    p = Proc()
    p._roastcoffea_collect_metrics = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(20):
            assert p.process(Events(i)) == {"n": i}
    assert [str(w.message) for w in caught] == [
        "roastop key has only 32 hex digits: a key (ROASTOP_KEY) is exactly 64 hex digits, "
        "optionally followed by one newline; this process sends no metrics"]
    assert nothing_arrives(sink)


# A processor whose attribute lookup raises KeyError (a dict behind __getattr__).

class DictBacked:
    def __init__(self):
        self.__dict__["_data"] = {}

    def __getattr__(self, name):
        return self._data[name]           # KeyError, not AttributeError

    @track_metrics
    def process(self, events):
        with track_time(self, "select"):
            pass
        return {"n": len(events)}


def test_getattr_raising_keyerror_with_collection_off():
    p = DictBacked()
    assert p.process(Events(3)) == {"n": 3}


def test_getattr_raising_keyerror_with_collection_on(sink):
    p = DictBacked()
    with MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY):
        assert receive(sink)["type"] == "run_start"
        assert p.process(Events(3)) == {"n": 3}
        rec = receive_chunk(sink)
        assert rec["num_events"] == 3 and "select" in rec["timing"]
    assert p.process(Events(4)) == {"n": 4}
