"""The wheel on a login node: a real minimal Debian root (debootstrap minbase,
with python3, python3-venv and tmux only) used by a person without root, with
no compiler and none of roastop's libraries installed. `make wheel` builds the
wheel here; there, that person makes a venv, `pip install --no-index` the
wheel, runs `roastop --version`, `roastop --demo` in tmux at 80x24 (the
dashboard, then q: the summary and a measurement directory), and the Python
emitter from the same venv against a live `roastop` (its chunk arrives).

The root is made once and kept under build/login-node (a stamp says it is
whole); the person's home is made anew for each run. Each command runs in a
mount namespace of its own that sees the host's /dev and a /proc, chrooted
into the root as uid 1000: nothing of it is left mounted on the host."""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from test_screen import until

UID = 1000
HOME = "/home/phys"
STATE = REPO_ROOT / "build" / "login-node"
ROOT = STATE / "root"
STAMP = ROOT / ".roastop-root-complete"
# what a login node lacks: a compiler, make, and roastop's own libraries
ABSENT_TOOLS = ("cc", "gcc", "make", "sudo")
ABSENT_LIBS = ("libcurl.so*", "libcjson.so*", "libmicrohttpd.so*", "libwebsockets.so*")

pytestmark = [
    pytest.mark.skipif(os.environ.get("ROASTOP_SANITIZED") == "1",
                       reason="the wheel holds the plain build: nothing for the sanitizers"),
    pytest.mark.skipif(os.geteuid() != 0, reason="debootstrap and chroot need root"),
]


def host_suite():
    """This machine's Debian suite and mirror: the root is the same release."""
    os_release = Path("/etc/os-release").read_text()
    m = re.search(r"^VERSION_CODENAME=(\w+)", os_release, re.M)
    mirror = "http://deb.debian.org/debian"
    for src in Path("/etc/apt").glob("sources.list.d/*.sources"):
        u = re.search(r"^URIs:\s*(\S+/debian)\s*$", src.read_text(), re.M)
        if u:
            mirror = u.group(1)
            break
    return (m.group(1) if m else "bookworm"), mirror


def make_root():
    """debootstrap minbase plus python3, python3-venv and tmux, once."""
    if STAMP.exists():
        return
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.parent.mkdir(parents=True, exist_ok=True)
    suite, mirror = host_suite()
    log = STATE / "debootstrap.log"
    with open(log, "w") as out:
        r = subprocess.run(["debootstrap", "--variant=minbase",
                            "--include=python3,python3-venv,tmux", suite, str(ROOT), mirror],
                           stdout=out, stderr=subprocess.STDOUT, timeout=1200)
    assert r.returncode == 0, log.read_text()[-3000:]
    STAMP.write_text(f"{suite} {mirror}\n")


def make_home():
    """A fresh account for uid 1000 and its empty home."""
    for name, line in (("passwd", f"phys:x:{UID}:{UID}::{HOME}:/bin/bash\n"),
                       ("group", f"phys:x:{UID}:\n")):
        f = ROOT / "etc" / name
        kept = [ln for ln in f.read_text().splitlines(True) if not ln.startswith("phys:")]
        f.write_text("".join(kept) + line)
    home = ROOT / HOME.lstrip("/")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.chown(home, UID, UID)
    return home


def as_user(script):
    """argv running script in the root as uid 1000, in a mount namespace of
    its own (the host's /dev, a /proc), with a login node's environment."""
    env = (f"HOME={HOME} USER=phys LOGNAME=phys SHELL=/bin/bash LANG=C.UTF-8 "
           f"TERM=xterm-256color PATH={HOME}/venv/bin:/usr/local/bin:/usr/bin:/bin")
    inner = (f"cd {HOME} && {script}")
    chroot = (f"chroot --userspec={UID}:{UID} {shlex.quote(str(ROOT))} /usr/bin/env -i {env} "
              f"/bin/sh -c {shlex.quote(inner)}")
    mounts = (f"mount --rbind /dev {ROOT}/dev && mount -t proc proc {ROOT}/proc && "
              f"exec {chroot}")
    return ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", mounts]


def run_as_user(script, timeout=300):
    r = subprocess.run(as_user(script), capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"{script}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def end_root_processes():
    """Every process still running inside the root (tmux's server, a roastop)."""
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            if os.readlink(p / "root") == str(ROOT):
                os.kill(int(p.name), signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def login_node(tmp_path_factory):
    """(home on the host, the wheel's name): the root, the account, the wheel
    (built by make wheel) in the person's home."""
    dist = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "BUILD")}
    r = subprocess.run(["make", "--no-print-directory", "wheel", f"DIST={dist}"], cwd=REPO_ROOT,
                       env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel, = dist.glob("roastop-*-py3-none-manylinux_2_*_x86_64.whl")
    show = subprocess.run([Path(sys.executable).parent / "auditwheel", "show", wheel],
                          capture_output=True, text=True, check=True).stdout
    tag = re.search(r'consistent with\s+the following platform tag:\s+"manylinux_2_(\d+)_', show)
    assert tag and int(tag.group(1)) <= 34, show
    make_root()
    home = make_home()
    shutil.copy(wheel, home / wheel.name)
    try:
        yield home, wheel.name
    finally:
        end_root_processes()


def version():
    text = (REPO_ROOT / "python" / "roastop" / "__init__.py").read_text()
    return re.search(r'^__version__ = "(.*)"$', text, re.M).group(1)


def test_a_login_node_lacks_what_roastop_builds_with(login_node):
    out = run_as_user("id -u; for t in " + " ".join(ABSENT_TOOLS) +
                      "; do command -v $t || true; done")
    assert out.split() == [str(UID)], out
    for pattern in ABSENT_LIBS:
        assert not list(ROOT.glob(f"usr/lib/*/{pattern}")), pattern


def test_pip_install_then_version(login_node):
    home, wheel = login_node
    run_as_user(f"python3 -m venv venv && venv/bin/pip install -q --no-index ./{wheel}")
    assert run_as_user("roastop --version").strip() == f"roastop {version()}"
    assert (home / "venv" / "bin" / "roastop").stat().st_uid == UID
    # every library the program loads is found: the wheel's own, or the system's
    libs = run_as_user("ldd venv/lib/python3*/site-packages/roastop.scripts/roastop")
    assert "not found" not in libs, libs
    assert re.search(r"libcurl-[0-9a-f]+\.so\S* => \S+/roastop\.libs/", libs), libs
    manual = run_as_user("roastop --help | tail -n 1")
    assert re.fullmatch(rf"Manual: man {HOME}/venv/lib/python3\.\d+/site-packages/"
                        r"roastop/data/roastop\.1\n", manual), manual


def tmux(*args):
    return run_as_user("tmux -S tmux.sock " + " ".join(shlex.quote(a) for a in args))


def test_demo_in_tmux_then_q(login_node):
    home, _ = login_node
    tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "demo",
         "roastop --demo; echo roastop exited $?; sleep 600")
    screen = lambda: tmux("capture-pane", "-p", "-t", "demo")  # noqa: E731
    # the dashboard: the progress toward the recording's events, the running chunks
    until(lambda: re.search(r"events [\d,]+ of 2,400,000 .*ETA \d", screen())
          and re.search(r"^ running [1-9]", screen(), re.M), "the demo's dashboard", 120)
    # t: the next theme, one of the files the wheel put beside the program
    tmux("send-keys", "-t", "demo", "t")
    until(lambda: re.search(r"theme (?!default)[\w-]+", screen()), "a shipped theme", 60)
    tmux("send-keys", "-t", "demo", "q")
    text = until(lambda: "roastop exited" in (s := screen()) and s, "roastop's exit", 120)
    assert "roastop exited 0" in text, text
    assert re.search(r"measurement written under", text), text
    runs = [d for d in (home / "roastop-measurements").iterdir() if d.name != "latest"]
    assert len(runs) == 1 and (runs[0] / "metrics.json").is_file(), runs
    assert runs[0].stat().st_uid == UID
    tmux("kill-server")


EMIT = textwrap.dedent("""
    from roastop import MetricsCollector, track_metrics

    class Events(list):
        metadata = {"dataset": "login", "filename": "node.root",
                    "entrystart": 0, "entrystop": 1000}

    class Processor:
        @track_metrics
        def process(self, events):
            return {"n": len(events)}

    p = Processor()
    with MetricsCollector(None, processor_instance=p, run_name="login node") as mc:
        n = p.process(Events(range(1000)))["n"]
        mc.set_coffea_report({"entries": n, "chunks": 1, "bytesread": 0,
                              "processtime": 1.0, "columns": []})
    print(mc.roastop_answered, mc.datagrams_lost)
""")


def test_emitter_from_the_same_venv(login_node):
    home, _ = login_node
    (home / "emit.py").write_text(EMIT)
    live = subprocess.Popen(as_user("roastop --headless --exit-on-run-end --duration 120 "
                                    "--scheduler http://127.0.0.1:9 --output live 2>live.err"),
                            stdin=subprocess.DEVNULL)
    try:
        line = until(lambda: re.search(r"export ROASTOP_ADDR=.*", (home / "live.err").read_text()
                                       if (home / "live.err").exists() else ""),
                     "roastop's emitter line", 60).group(0)
        # the line a person pastes, as printed: the key read from their config directory
        out = run_as_user(f"{line} && python emit.py")
        assert out.split() == ["True", "0"], out
        assert live.wait(timeout=120) == 0
    finally:
        live.kill()
    key = home / ".config" / "roastop" / "key"
    assert key.stat().st_uid == UID and key.stat().st_mode & 0o777 == 0o600
    port = (home / ".config" / "roastop" / "key.port").read_text().strip()
    assert f"ROASTOP_ADDR=127.0.0.1:{port} " in line
    metrics = json.loads(next((home / "live").glob("*/metrics.json")).read_text())
    assert metrics["num_chunks"] == 1 and metrics["total_events"] == 1000, metrics
