"""Shared test helpers (not a conftest.py: tests/integration has one, and the two
are collected together): a local UDP sink and a receiver that checks every
datagram's framing and re-derives its HMAC tag independently."""
import hashlib
import hmac
import json
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

KEY = bytes(range(32))


@pytest.fixture()
def sink():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    yield s
    s.close()


def addr_of(sock):
    return "127.0.0.1:%d" % sock.getsockname()[1]


def split_datagram(data, key=KEY):
    """The JSON body of one datagram, after checking magic and tag by hand."""
    assert data[:5] == b"RTP1 "
    sp = data.index(b" ", 5)
    tag, body = data[5:sp], data[sp + 1:]
    if key is None:
        assert tag == b"-"
    else:
        assert len(tag) == 64 and tag == tag.lower()
        assert hmac.compare_digest(tag, hmac.new(key, body, hashlib.sha256).hexdigest().encode())
    body.decode("utf-8")  # valid UTF-8
    return json.loads(body)


def receive(sock, key=KEY):
    return split_datagram(sock.recv(70000), key)


def nothing_arrives(sock, wait=0.3):
    sock.settimeout(wait)
    try:
        sock.recv(70000)
    except socket.timeout:
        return True
    finally:
        sock.settimeout(2)
    return False


@pytest.fixture(autouse=True)
def fresh_process_state():
    """Per-process caches of the package, reset between tests."""
    from roastop import collector, decorator, emitter
    emitter._cache.clear()
    decorator._env_emitter.clear()
    decorator._files_seen.clear()
    collector._warned.clear()
    yield
