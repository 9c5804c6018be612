"""The README's commands as the first command on a fresh Debian machine.

A fresh machine has none of roastop's Debian packages: pkg-config knows none of
its libraries and dpkg-query reports them not installed until scripts/deps.sh has
run apt-get. Shims first on PATH make this machine look so (the packages are in
fact installed: apt-get's shim only records that the install ran, and from then on
pkg-config and dpkg-query answer as the real ones). A copy of the repository's
tracked files, no build directory, stands for a fresh clone; each command runs once
there, inside tmux for `make demo`, as a person would type it."""
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("VENV", REPO / "build" / "venv")).resolve()

pytestmark = pytest.mark.skipif(os.environ.get("ROASTOP_SANITIZED") == "1",
                                reason="builds its own binary: nothing for the sanitizers here")

SHIM = r"""#!/bin/sh
# {name}: "not installed" until apt-get's shim has run an install
echo "{name} $*" >>"$SHIM_LOG"
if [ -e "$SHIM_STATE/installed" ]; then exec {real} "$@"; fi
{fresh}
"""
FRESH = {
    # pkg-config on a machine without the -dev packages: no such library
    "pkg-config": 'exit 1',
    # dpkg-query -W of a package never installed
    "dpkg-query": 'echo "dpkg-query: no packages found matching $*" >&2; exit 1',
}
APT_GET = r"""#!/bin/sh
echo "apt-get $*" >>"$SHIM_LOG"
case "$*" in *install*) touch "$SHIM_STATE/installed" ;; esac
exit 0
"""


def fresh_clone(dest: Path) -> Path:
    """The tracked files of the working tree, as a clone of it would have them."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = REPO / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    assert not (dest / "build").exists()
    return dest


@pytest.fixture
def fresh(tmp_path):
    """(clone, env, log): a clone and the environment of a machine without the packages."""
    shims, state = tmp_path / "shims", tmp_path / "state"
    shims.mkdir()
    state.mkdir()
    for name, fresh_body in FRESH.items():
        real = shutil.which(name)
        assert real, f"{name} is needed on this machine"
        (shims / name).write_text(SHIM.format(name=name, real=real, fresh=fresh_body))
    (shims / "apt-get").write_text(APT_GET)
    for f in shims.iterdir():
        f.chmod(0o755)
    log = tmp_path / "shims.log"
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}", "SHIM_LOG": str(log),
           "SHIM_STATE": str(state)}
    for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "BUILD"):
        env.pop(k, None)
    return fresh_clone(tmp_path / "clone"), env, log


def installed_before_used(log: Path):
    """apt-get install ran, and pkg-config was asked for the packages after it."""
    lines = log.read_text().splitlines()
    install = next(i for i, l in enumerate(lines) if l.startswith("apt-get") and "install" in l)
    assert any(l.startswith("pkg-config") for l in lines[install + 1:]), lines


def wait_screen(sock, want, timeout, unless=None):
    """Waits until every string of want is on the screen; fails at once if unless is."""
    deadline = time.monotonic() + timeout
    while True:
        text = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-J", "-S", "-"],
                              text=True, capture_output=True).stdout
        if all(w in text for w in want):
            return text
        if (unless and unless in text) or time.monotonic() > deadline:
            raise AssertionError(f"{want} not on screen:\n{text}")
        time.sleep(0.5)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
def test_make_demo_first_run_shows_the_dashboard(fresh):
    clone, env, log = fresh
    sock = f"roastop-fresh-{os.getpid()}"
    script = (" ".join(f"export {k}={shlex.quote(v)};" for k, v in env.items()
                       if k in ("PATH", "SHIM_LOG", "SHIM_STATE"))
              + f" cd {shlex.quote(str(clone))} && make demo; echo \"demo-exit=$?\"; sleep 600")
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "80", "-y", "24",
                    "sh", "-c", script], check=True, env={**env, "TERM": "xterm-256color"})
    try:
        # the dashboard: its tab bar, the replayed run's line and a graph's frame
        wait_screen(sock, ["1 Main", "run dimuon example", "workers"], timeout=900,
                    unless="demo-exit=")
        installed_before_used(log)
        subprocess.run(["tmux", "-L", sock, "send-keys", "q"], check=True)
        text = wait_screen(sock, ["demo-exit="], timeout=120)
        assert "demo-exit=0" in text, text
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


def test_plain_make_first_run_builds(fresh):
    clone, env, log = fresh
    p = subprocess.run(["make"], cwd=clone, env=env, capture_output=True, text=True,
                       timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    installed_before_used(log)
    v = subprocess.run([clone / "build" / "roastop", "--version"], capture_output=True,
                       text=True, timeout=60)
    assert v.returncode == 0 and "roastop" in v.stdout, v


@pytest.mark.skipif(not (VENV / "bin" / "python").exists(), reason="no test venv")
def test_make_bench_first_run_builds_and_runs(fresh):
    """make bench, in smoke mode, with the test venv already made (its own test)."""
    clone, env, log = fresh
    p = subprocess.run(["make", "bench", f"VENV={VENV}"], cwd=clone,
                       env={**env, "BENCH_SMOKE": "1"}, capture_output=True, text=True,
                       timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    installed_before_used(log)
    assert "bench-smoke:" in p.stdout, p.stdout[-3000:]
