"""A scheduler (or whoever answers at its address) that attacks: bodies
built to amplify into a parser's tree, and redirects that would carry the
user's --header values to another host. roastop's memory stays bounded, its
loop keeps answering signals, the body is refused whole and counted, and
headers stay with the origin the user named (docs/scheduler.md)."""
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import ROASTOP, Listener, memory_env  # noqa: E402
from dask_cluster import wait_for  # noqa: E402
from fake_scheduler import FakeScheduler, worst_bomb  # noqa: E402
from test_scheduler_faults import err, vm_hwm_kb  # noqa: E402

MIB = 1 << 20
# docs/scheduler.md, "Memory and time": a refused body costs its bytes at
# most; the worst body the budget lets through costs 16 MiB of body + 48 MiB
# of tree + the rest (76 MiB plain; ASan's shadow and redzones add ~20).
RSS_BOUND_MIB, WORST_BOUND_MIB = 100, 128
BIG, UNDER_CAP = 60_000_000, 12 * MIB  # the probe's body; one the size cap lets through
WORST = "worst"  # a body just under the cap that fills the tree to its cap


def bomber(size, mode="bomb"):
    s = FakeScheduler(bomb_size=size if size != WORST else 100)
    if size == WORST:
        s.bomb_body = worst_bomb(16 * MIB - 1)
    s.mode = mode
    return s


def watch(tmp_path, sched, *extra):
    return Listener(tmp_path, "--no-auth", "--scheduler", sched.url, "--interval", "0.5",
                    *extra, env=memory_env())


@pytest.mark.parametrize("size,reason", [(BIG, "too_large"), (UNDER_CAP, "over_budget"),
                                         (WORST, "over_budget")])
def test_amplifying_body_is_refused_with_memory_bounded(tmp_path, size, reason):
    sched = bomber(size)
    try:
        lst = watch(tmp_path, sched)
        # the route is asked again 5 s after a refusal: two bombs mean the
        # first one has been dealt with
        wait_for(lambda: sched.bombs >= 2 and "scheduler " in err(lst), timeout=60)
        hwm_mib = vm_hwm_kb(lst.proc.pid) / 1024
        print(f"peak RSS {hwm_mib:.1f} MiB")
        _, m = lst.stop()
    finally:
        sched.close()
    s = m["roastop"]["scheduler"]
    src = m["roastop"]["sources"]["scheduler"]
    assert hwm_mib < (WORST_BOUND_MIB if size == WORST else RSS_BOUND_MIB), hwm_mib
    if reason == "too_large":
        assert s["too_large"] >= 1
        assert "response over the size limit" in src["reason"]
    else:
        assert s["rejected_by"]["over_budget"] >= 1 and s["rejected"] >= 1
        assert "over_budget" in src["reason"]
    # identity.json still gives the workers, but the status says why the
    # route did not: never "connected, 0 workers"
    assert src["state"] == "degraded", src
    assert m["peak_workers"] == 2


@pytest.mark.parametrize("size", [BIG, UNDER_CAP])
def test_sigterm_answered_while_bodies_keep_arriving(tmp_path, size):
    sched = bomber(size, "bomb_all")  # every JSON route, so every round brings one
    try:
        for n in (2, 3, 5):  # SIGTERM lands at different points of a round
            lst = watch(tmp_path, sched)
            start = sched.bombs
            wait_for(lambda: sched.bombs >= start + n, timeout=60)
            t0 = time.monotonic()
            lst.proc.send_signal(signal.SIGTERM)
            lst.proc.wait(timeout=30)
            took = time.monotonic() - t0
            assert lst.proc.returncode == 0, err(lst)
            assert took < 1.0, (n, took)
    finally:
        sched.close()


def test_duration_holds_while_bodies_keep_arriving(tmp_path):
    sched = bomber(BIG, "bomb_all")
    try:
        t0 = time.monotonic()
        proc = subprocess.run(
            [ROASTOP, "--headless", "--no-auth", "--listen", "127.0.0.1:0", "--output",
             str(tmp_path / "m"), "--scheduler", sched.url, "--interval", "0.5",
             "--duration", "5"], capture_output=True, text=True, timeout=60, env=memory_env())
        took = time.monotonic() - t0
    finally:
        sched.close()
    assert proc.returncode == 0, proc.stderr
    assert took < 6.5, took
    assert sched.bombs >= 3  # and they came, every round


HEADER = ("X-Auth-Token", "SECRET")


def test_headers_do_not_follow_a_redirect_to_another_origin(tmp_path):
    other = FakeScheduler()  # another port: another origin, recording what it gets
    sched = FakeScheduler(redirect_to=other.url)
    sched.mode = "redirect"
    try:
        lst = watch(tmp_path, sched, "--header", f"{HEADER[0]}: {HEADER[1]}")
        wait_for(lambda: "not followed" in err(lst) or other.seen, timeout=30)
        wait_for(lambda: sched.requests >= 6 or other.seen, timeout=30)  # a few rounds
        _, m = lst.stop()
    finally:
        sched.close()
        other.close()
    assert [h for _, h in sched.seen if h.get(HEADER[0]) == HEADER[1]]  # sent to its origin
    leaked = [p for p, h in other.seen if HEADER[0] in h]
    assert not leaked, leaked
    assert not other.seen  # not even without the header: a redirect is not followed there
    src = m["roastop"]["sources"]["scheduler"]
    assert src["state"] == "degraded"
    assert f"not followed: another origin; use --scheduler {other.url}" in src["reason"], src
    assert m["roastop"]["scheduler"]["redirects_refused"] >= 1


def test_same_origin_redirect_is_followed_and_shown(tmp_path):
    sched = FakeScheduler()
    sched.mode = "redirect_same"
    try:
        lst = watch(tmp_path, sched, "--header", f"{HEADER[0]}: {HEADER[1]}")
        wait_for(lambda: "scheduler connected" in err(lst) and "redirected to" in err(lst),
                 timeout=30)
        _, m = lst.stop()
    finally:
        sched.close()
    src = m["roastop"]["sources"]["scheduler"]
    assert src["state"] == "connected"
    assert f"redirected to {sched.url}/moved/json/identity.json" in src["reason"], src
    assert m["roastop"]["scheduler"]["redirects"] >= 1
    assert m["peak_workers"] == 2
    moved = [h for p, h in sched.seen if p.startswith("/moved/")]
    assert moved and all(h.get(HEADER[0]) == HEADER[1] for h in moved)


def test_https_is_not_downgraded_by_a_redirect(tmp_path):
    cert = tmp_path / "sched.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(cert), "-out", str(cert)], check=True, capture_output=True)
    sched = FakeScheduler(tls_cert=cert)
    sched.redirect_to = sched.url.replace("https://", "http://")  # same host and port
    sched.mode = "redirect"
    try:
        lst = watch(tmp_path, sched, "--cacert", str(cert), "--header", f"{HEADER[0]}: {HEADER[1]}")
        wait_for(lambda: "https -> http" in err(lst), timeout=30)
        _, m = lst.stop()
    finally:
        sched.close()
    src = m["roastop"]["sources"]["scheduler"]
    assert src["state"] == "degraded"
    assert f"redirect to {sched.redirect_to}/json/identity.json not followed: https -> http" \
        in src["reason"], src


def test_redirect_loop_is_cut_and_said(tmp_path):
    sched = FakeScheduler()
    sched.mode = "redirect_loop"
    try:
        lst = watch(tmp_path, sched)
        wait_for(lambda: "too many redirects" in err(lst), timeout=30)
        _, m = lst.stop()
    finally:
        sched.close()
    src = m["roastop"]["sources"]["scheduler"]
    assert src["state"] == "degraded", src
    s = m["roastop"]["scheduler"]
    assert s["redirects"] >= 3 and s["redirects_refused"] >= 1


def test_facts_left_out_under_another_token_are_asked_for_again(tmp_path):
    """A route that answers roastop's ?have= with a body leaving the facts
    out under a token roastop does not hold (a confused or hostile server):
    roastop drops what it keeps and asks again in the same round without the
    token, counts it, and never shows numbers without their facts."""
    sched = FakeScheduler()
    sched.mode = "stale_facts"
    try:
        lst = watch(tmp_path, sched)
        wait_for(lambda: sum("?have=" in path for path, _ in sched.seen) >= 3, timeout=60)
        _, m = lst.stop()
    finally:
        sched.close()
    asked = [path.split("?")[1] if "?" in path else "" for path, _ in sched.seen
             if path.split("?")[0] == "/roastop/v1/state.json"]
    assert asked[0] == ""  # nothing held yet
    for i, query in enumerate(asked[:-1]):  # each refused short body asked again whole
        if query:
            assert asked[i + 1] == "", asked
    s = m["roastop"]["scheduler"]
    assert s["facts_refetched"] >= 2 and s["rejected"] == 0, s
    assert m["roastop"]["sources"]["scheduler"]["state"] == "connected"
    assert m["peak_workers"] == 2
