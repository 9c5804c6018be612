"""A key that survives sessions (issue 19, item 4): without --key-file
roastop keeps one key per user in $XDG_CONFIG_HOME/roastop/key (0600), made
on the first start and read by the next, so the export line it prints is the
same each time; --new-key replaces it, and datagrams signed with the old key
are then rejected as bad_tag. The real binary, with HOME and XDG_CONFIG_HOME
in tmp_path; datagrams signed here, not by roastop's emitter."""
import os
import re
import socket
import time

from conftest import Listener, load_metrics


def chunk(seq, **kw):
    return dict({"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
                 "duration": 0.25, "num_events": 1000, "dataset": "ds"}, **kw)


def user_env(tmp_path, **over):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.update(over)
    return {k: v for k, v in env.items() if v is not None}


def free_port():
    """A loopback port free now: both starts listen on it, so their export
    lines can be compared whole."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tmp_path, name, env, *extra, port=0):
    d = tmp_path / name
    d.mkdir()
    return Listener(d, "--checkpoint", "1", "--scheduler", "http://127.0.0.1:9", *extra,
                    listen=f"127.0.0.1:{port}", env=env)


def stderr_of(lst):
    return lst.err_path.read_text()


def export_line(lst):
    return re.search(r"roastop: emitters: (export .*)", stderr_of(lst)).group(1)


def wait_stderr(lst, text, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in stderr_of(lst):
            return
        time.sleep(0.1)
    raise AssertionError(f"no {text!r} on stderr: {stderr_of(lst)}")


def wait_udp(lst, ready, timeout=90):
    """roastop.udp of the first checkpoint for which ready(udp) holds."""
    deadline = time.monotonic() + timeout
    udp = None
    while time.monotonic() < deadline:
        try:
            udp = load_metrics(lst.out)["roastop"]["udp"]
        except (OSError, ValueError, KeyError):
            udp = None
        if udp and ready(udp):
            return udp
        time.sleep(0.2)
    raise AssertionError(f"roastop.udp never got there: {udp}")


def test_two_starts_print_the_same_line_and_share_the_key(tmp_path):
    env, port = user_env(tmp_path), free_port()
    key_file = tmp_path / "config" / "roastop" / "key"
    first = start(tmp_path, "first", env, port=port)
    line = export_line(first)
    assert first.key_path == str(key_file)
    first.stop()
    assert key_file.exists(), "the per-user key was deleted at exit"
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "config" / "roastop").stat().st_mode & 0o777) == "0o700"
    second = start(tmp_path, "second", env, port=port)
    assert export_line(second) == line
    assert second.key == first.key
    assert "new key" not in stderr_of(second)
    second.stop()
    assert not (tmp_path / "home" / ".config").exists()  # XDG_CONFIG_HOME was used


def test_new_key_replaces_it_and_the_old_key_is_rejected(tmp_path):
    env = user_env(tmp_path)
    first = start(tmp_path, "first", env)
    old = first.key
    first.stop()
    lst = start(tmp_path, "renewed", env, "--new-key")
    key_file = tmp_path / "config" / "roastop" / "key"
    assert (f"roastop: new key written to {key_file}; re-export ROASTOP_KEY in your shells"
            in stderr_of(lst))
    assert lst.key_path == str(key_file)
    assert lst.key != old and bytes.fromhex(key_file.read_text().strip()) == lst.key
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in key_file.parent.iterdir()) == ["key"]  # no temporary left
    for seq in range(30):
        lst.send(chunk(seq, run_id="stale"), key=old)  # an emitter still holding the old key
    # nothing accepted yet, so no run and no metrics.json: the alert says it
    wait_stderr(lst, "datagrams rejected: wrong key (bad_tag); re-export ROASTOP_KEY")
    for seq in range(10):
        lst.send(chunk(seq))  # re-exported: accepted, and read after the 30 (one socket)
    wait_udp(lst, lambda u: u["datagrams"] >= 40)
    _, m = lst.stop()
    assert m["roastop"]["udp"]["rejected"]["bad_tag"] == 30
    assert m["num_chunks"] == 10


def test_without_home_a_session_key_says_why_and_goes_at_exit(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = user_env(tmp_path, HOME=None, XDG_CONFIG_HOME=None, XDG_RUNTIME_DIR=str(run))
    lst = start(tmp_path, "nohome", env)
    err = stderr_of(lst)
    notes = [ln for ln in err.splitlines() if "no key kept across sessions" in ln]
    assert len(notes) == 1 and "HOME is not set" in notes[0], err
    assert lst.key_path.startswith(str(run / "roastop" / "session-"))
    lst.stop()
    assert not os.path.exists(lst.key_path)
