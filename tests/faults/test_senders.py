"""Replay protection per sender (docs/protocol.md, "Ordering, duplicates and
loss"): past the sender cap a datagram from a new sender is rejected and
counted, never applied without a window; a process that reuses a host and
pid (a restart in a container) is a new sender through its instance id; one
absurd sequence number is rejected as a jump, leaving the window and
`missing` where they were. Each test waits for roastop to have read every
datagram sent (its checkpoint every second), then stops it."""
import hashlib
import hmac
import re
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from conftest import Listener, load_metrics, v2_body  # noqa: E402

from roastop.emitter import Emitter  # noqa: E402

UDP_MAX_SENDERS = 100000  # include/roastop/udp.h
SEQ_MAX = 2 ** 53 - 1


def chunk(seq, host="node1", pid=4242, **kw):
    return dict({"type": "chunk", "run_id": "r", "host": host, "pid": pid, "seq": seq,
                 "duration": 0.25, "num_events": 10, "dataset": "ds"}, **kw)


def udp_now(lst):
    """roastop.udp of the last checkpoint, or None before the first."""
    try:
        return load_metrics(lst.out)["roastop"]["udp"]
    except (OSError, ValueError, KeyError):
        return None


def wait_read(lst, sent, timeout=120):
    """Waits until roastop has taken every datagram sent (read, or dropped
    by the kernel); its roastop.udp then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        u = udp_now(lst)
        if u and u["datagrams"] + u["kernel_drops"] >= sent:
            return u
        time.sleep(0.2)
    raise AssertionError(f"roastop did not read {sent} datagrams in time: {udp_now(lst)}")


def start(tmp_path):
    return Listener(tmp_path, "--checkpoint", "1", "--duration", "900",
                    "--scheduler", "http://127.0.0.1:9")


def test_senders_past_the_cap_are_rejected_never_applied_twice(tmp_path):
    """120,000 senders, then all of them again: the first 100,000 are
    applied once, the others are rejected as senders_full both times (the
    second round was applied before: 140,000 chunks). A round is sent again
    while the kernel dropped part of it, until the tracked senders are full."""
    n = UDP_MAX_SENDERS + 20000
    lst = start(tmp_path)
    mac = hmac.new(lst.key, digestmod=hashlib.sha256)

    def datagram(pid):
        body = v2_body(chunk(0, host="h", pid=pid))
        m = mac.copy()
        m.update(body)
        return b"RTP2\x01" + m.digest() + body

    grams = [datagram(pid) for pid in range(1, n + 1)]
    sent = 0
    for _ in range(5):  # a round more only when the kernel dropped some
        for g in grams:
            lst.sock.sendto(g, lst.addr)
        sent += n
        u = wait_read(lst, sent)
        if u["senders"] >= UDP_MAX_SENDERS or u["applied"] >= UDP_MAX_SENDERS:
            break
    for g in grams:  # every datagram once more: each one a replay
        lst.sock.sendto(g, lst.addr)
    sent += n
    wait_read(lst, sent)
    _, m = lst.stop()
    u = m["roastop"]["udp"]
    assert m["num_chunks"] == u["applied"] == UDP_MAX_SENDERS, u
    assert m["total_events"] == UDP_MAX_SENDERS * 10
    assert u["senders"] == UDP_MAX_SENDERS
    rej = u["rejected"]
    assert rej["senders_full"] >= 20000 * 2 - u["kernel_drops"], u
    assert u["datagrams"] + u["kernel_drops"] == sent
    assert u["applied"] + rej["senders_full"] + rej.get("duplicate", 0) == u["datagrams"], u
    if u["kernel_drops"] == 0:
        assert rej["senders_full"] == 40000 and rej["duplicate"] == UDP_MAX_SENDERS


def test_restarted_process_with_the_same_host_and_pid_is_a_new_sender(tmp_path):
    """2,000 chunks from one emitter, then a new emitter in the same process
    (as a restarted process with the same host and pid: its numbers start at
    0 again, with a new instance id): all of its 100 chunks are applied."""
    lst = start(tmp_path)
    addr = "%s:%d" % lst.addr
    measured = (1767225600.0, 1767225601.0, 1767225601.0, 0.5, None, None)
    fields = {"run_id": "r", "num_events": 10, "dataset": "ds"}
    first = Emitter(addr, lst.key)
    for i in range(2000):
        assert first.send_chunk(measured, fields)
        if i % 200 == 199:
            time.sleep(0.01)
    wait_read(lst, 2000)
    again = Emitter(addr, lst.key)  # the restart: same host, same pid, seq from 0
    for i in range(100):
        assert again.send_chunk(measured, fields)
    assert again._pid == first._pid
    wait_read(lst, 2100)
    _, m = lst.stop()
    u = m["roastop"]["udp"]
    assert u["kernel_drops"] == 0, u
    assert m["num_chunks"] == u["applied"] == 2100, u
    assert u["rejected"]["total"] == 0 and u["missing"] == 0
    assert u["senders"] == 2
    assert again._instance != first._instance


def test_an_absurd_sequence_jump_is_counted_not_followed(tmp_path):
    """One authentic chunk with seq 2^53 - 1 amid a sender's own numbers:
    rejected as seq_jump; the chunks after it are applied and missing stays
    0 (it was 9,007,199,254,740,990, and the next 10 chunks were stale)."""
    lst = start(tmp_path)
    for seq in range(100):
        lst.send(chunk(seq))
    lst.send(chunk(SEQ_MAX))
    lst.send(chunk(SEQ_MAX - 5))                     # another
    for seq in range(100, 110):
        lst.send(chunk(seq))
    wait_read(lst, 112)
    _, m = lst.stop()
    u = m["roastop"]["udp"]
    assert u["kernel_drops"] == 0, u
    assert m["num_chunks"] == u["applied"] == 110, u
    assert u["missing"] == 0, u
    assert u["rejected"]["seq_jump"] == 2 and u["rejected"]["total"] == 2, u


def test_the_dashboard_says_senders_are_full(tmp_path):
    """The udp line of the main view says, in 80 columns, how many datagrams
    of new senders were turned away."""
    from test_screen import Screen
    s = Screen(tmp_path, ["--listen", "127.0.0.1:0", "--no-auth"], cols=80, rows=24)
    try:
        text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:(\d+) rx 0 lost 0"))
        port = int(re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1))
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        grams = [b"RTP2\x00" + v2_body(chunk(0, host="h", pid=pid))
                 for pid in range(UDP_MAX_SENDERS + 5)]
        alert = re.compile(r"^.udp 127\.0\.0\.1:\d+ rx \S+ lost \S+ senders full: \d+ rejected",
                           re.M)
        for _ in range(5):  # again only when the kernel dropped part of a round
            for i, g in enumerate(grams):
                sock.sendto(g, ("127.0.0.1", port))
                if i % 1000 == 999:
                    time.sleep(0.002)
            try:
                s.wait_for(alert, timeout=30)
                break
            except AssertionError:
                continue
        else:
            raise AssertionError("no senders-full alert:\n" + s.text())
    finally:
        s.close()
