"""The UDP listener of the real roastop binary, fed by a raw sender that
frames and signs datagrams independently of roastop's own emitter."""
import json
import os
import subprocess
import time

from conftest import ROASTOP, Listener, load_metrics


def chunk(seq, **kw):
    return dict({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
                 "duration": 0.25, "num_events": 1000, "dataset": "ds"}, **kw)


def test_good_datagrams_applied_once_bad_ones_counted(tmp_path):
    lst = Listener(tmp_path)
    assert oct(os.stat(lst.key_path).st_mode & 0o777) == "0o600"
    good = 0
    lst.send({"type": "run_start", "run_id": "r", "host": "h", "pid": 7, "seq": 0,
              "processor": "P"})
    for seq in range(1, 2001):
        lst.send(chunk(seq))
        good += 1
        if seq % 100 == 0:
            lst.send(chunk(seq))                          # replayed
            lst.send(chunk(seq + 100000), key=b"k" * 32)  # forged
            lst.send(chunk(seq + 200000), tagged=False)   # untagged
            lst.sock.sendto(b"garbage", lst.addr)         # not our protocol
            lst.send(chunk(seq + 300000, duration=-1))    # malformed, signed
            lst.send(chunk(seq + 400000, dataset="d" * 60000))  # oversized string, signed
        if seq % 500 == 0:
            time.sleep(0.01)
    lst.wait_received(1 + good + 6 * 20)  # all in, read by the loop: then the stop
    stdout, m = lst.stop()
    assert m["num_chunks"] == good
    assert m["total_events"] == good * 1000
    udp = m["roastop"]["udp"]
    rej = udp["rejected"]
    assert rej["duplicate"] == 20
    assert rej["bad_tag"] == 20
    assert rej["no_tag"] == 20
    assert rej["bad_magic"] == 20
    assert rej["out_of_range"] == 20
    assert rej["string_too_long"] == 20
    assert udp["kernel_drops"] == 0
    assert m["roastop"]["events_applied"]["run_start"] == 1
    assert os.path.exists(lst.key_path)  # the per-user key outlives the session (test_stable_key)


def test_each_good_datagram_applied_once_each_bad_one_counted(tmp_path):
    """Every bad datagram is counted by reason; a version-1 (JSON) one, from
    an emitter older than roastop, under its own, with one line in the log."""
    lst = Listener(tmp_path)
    good = 0
    for seq in range(0, 1000):
        lst.send(chunk(seq))
        good += 1
        if seq % 50 == 1:
            lst.send(chunk(seq))                               # replayed
            old = json.dumps(chunk(seq + 600000)).encode()
            lst.sock.sendto(b"RTP1 - " + old, lst.addr)       # an older emitter's
            lst.send(chunk(seq + 100000), key=b"k" * 32)       # forged
            lst.send(chunk(seq + 200000), tagged=False)        # untagged
            lst.send(chunk(seq + 300000), cut=3)               # ends inside a value
            lst.send(chunk(seq + 400000, duration=-1.0))       # out of range
            lst.send(chunk(seq + 500000, duration=float("nan")))  # not a number
            lst.sock.sendto(b"RTP2\x07" + b"x" * 40, lst.addr)     # unknown flags
        if seq % 250 == 0:
            time.sleep(0.01)
    lst.wait_received(good + 8 * 20)  # all in, read by the loop: then the stop
    _, m = lst.stop()
    assert m["num_chunks"] == good
    assert m["total_events"] == good * 1000
    udp = m["roastop"]["udp"]
    rej = udp["rejected"]
    assert rej["duplicate"] == 20
    assert rej["version"] == 20
    said = [line["text"] for line in m["roastop"]["log"] if "older than" in line["text"]]
    assert said == ["an emitter older than this roastop sends version-1 datagrams "
                    "(rejected.version): install this roastop's Python package"]
    assert rej["bad_tag"] == 20
    assert rej["no_tag"] == 20
    assert rej["bad_binary"] == 40
    assert rej["out_of_range"] == 20
    assert rej["bad_magic"] == 20
    assert udp["kernel_drops"] == 0


def test_no_auth_and_loss_accounting(tmp_path):
    lst = Listener(tmp_path, "--no-auth")
    assert lst.key is None
    for seq in range(0, 300):
        if seq % 10 != 3:       # every tenth datagram never sent
            lst.send(chunk(seq), tagged=False)
    lst.wait_received(270)  # all in, read by the loop: then the stop
    _, m = lst.stop()
    assert m["num_chunks"] == 270
    assert m["roastop"]["udp"]["missing"] == 30
    assert m["roastop"]["udp"]["senders"] == 1


def test_split_report_and_exit_on_run_end(tmp_path):
    lst = Listener(tmp_path, "--exit-on-run-end")
    base = {"type": "report", "run_id": "r", "host": "h", "pid": 7, "report_id": "x",
            "parts": 2}
    lst.send(dict(base, seq=0, part=1, columns=["b-data"]))
    # the report covers the one chunk sent (a report with fewer events than
    # the chunks it covers would be another run's: docs/metrics.md, Invariants)
    lst.send(dict(base, seq=1, part=0, columns=["a-data"], entries=5, bytesread=10,
                  processtime=0.2, chunks=1))
    lst.send(chunk(2, num_events=5, duration=0.2))
    lst.send({"type": "run_end", "run_id": "r", "host": "h", "pid": 7, "seq": 3})
    stdout, _ = lst.proc.communicate(timeout=30)
    assert lst.proc.returncode == 0
    assert "run ended" in stdout
    m = load_metrics(lst.out)
    assert m["total_events"] == 5            # from the reassembled report
    assert m["metric_sources"]["total_events"] == "coffea_report"


def test_key_file_readable_by_others_is_refused(tmp_path):
    key = tmp_path / "key"
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o644)
    p = subprocess.run([ROASTOP, "--headless", "--listen", "127.0.0.1:0", "--key-file",
                        str(key), "--duration", "1", "--output", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert "readable by others" in p.stderr


def test_ipv6_listener(tmp_path):
    lst = Listener(tmp_path, listen="[::1]:0")
    assert lst.addr[0] == "::1"
    for seq in range(50):
        lst.send(chunk(seq))
    lst.wait_received(50)  # all in, read by the loop: then the stop
    _, m = lst.stop()
    assert m["num_chunks"] == 50


def voluntary_switches(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches")


def test_steady_trickle_wakes_roastop_per_nap_not_per_datagram(tmp_path):
    """1,000 chunks at about 500 a second: roastop drains the socket at most
    once per UDP_NAP (10 ms) instead of waking for each datagram, and
    applies every chunk (~1,000 voluntary context switches without the nap)."""
    lst = Listener(tmp_path)
    lst.wait_received(0)  # started: its loop answers (its HTTP server)
    before = voluntary_switches(lst.proc.pid)
    start = time.monotonic()
    for seq in range(1000):
        lst.send(chunk(seq))
        time.sleep(0.002)
    spent = time.monotonic() - start
    after = voluntary_switches(lst.proc.pid)
    lst.wait_received(1000)
    _, m = lst.stop()
    assert m["num_chunks"] == 1000 and m["roastop"]["udp"]["kernel_drops"] == 0
    assert after - before <= spent / 0.01 + 60, (after - before, spent)


def test_one_version_for_the_binary_and_the_package():
    """The version is written once (python/roastop/__init__.py); the
    Makefile puts it in the binary."""
    import roastop
    out = subprocess.run([ROASTOP, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == f"roastop {roastop.__version__}"
