#!/usr/bin/env python3
"""Records the demo that `make demo` replays: the dimuon example
(examples/run_dimuon.py) on a real local Dask cluster (`dask scheduler` and two
`dask worker` processes, one thread each), watched live by
`roastop --headless --record`. One file (--slow-file) is slow: its chunks
spin --slow-seconds more of CPU, the run's one finding (slow file); the
collector is told the run's events, so the screen has an ETA.

    build/venv/bin/python examples/record_demo.py [--out examples/demo-recording.jsonl]

Run it with the Python that has coffea and dask (build/venv after
`make integration`). roastop comes from --roastop (default build/roastop), the
emitter package from python/ in this repository; the cluster processes get no
roastop at all, as on a real cluster. A recording over --gzip-above bytes is
written gzip-compressed (FILE.gz): replay it with `zcat FILE.gz | roastop --replay -`."""
import argparse
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "demo-recording.jsonl")
    ap.add_argument("--roastop", type=Path, default=REPO / "build" / "roastop")
    ap.add_argument("--events-per-file", type=int, default=300000)
    ap.add_argument("--files-per-dataset", type=int, default=4)
    ap.add_argument("--chunksize", type=int, default=50000)
    ap.add_argument("--slow-file", default="TTbar_1.root")
    ap.add_argument("--slow-seconds", type=float, default=3.0)
    ap.add_argument("--gzip-above", type=int, default=1 << 20)
    return ap.parse_args()


def start(args, log, env, cwd):
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env,
                            cwd=cwd, stdin=subprocess.DEVNULL)


def start_cluster(work):
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("ROASTOP")}
    dask = str(Path(sys.executable).parent / "dask")
    port, dash = free_port(), free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = [start([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                    "--dashboard-address", f"127.0.0.1:{dash}"], work / "scheduler.log", env, work)]
    for i in range(2):
        procs.append(start([dask, "worker", addr, "--nthreads", "1", "--name", f"w{i}",
                            "--host", "127.0.0.1", "--no-dashboard", "--local-directory",
                            str(work / f"w{i}")], work / f"worker{i}.log", env, work))
    from distributed import Client
    deadline = time.monotonic() + 90
    while True:
        try:
            with Client(addr, timeout=10) as c:
                c.wait_for_workers(2, timeout=60)
                break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    return procs, addr, f"http://127.0.0.1:{dash}"


def start_roastop(args, work, dashboard, record):
    err = work / "roastop.stderr"
    proc = subprocess.Popen([str(args.roastop), "--headless", "--listen", "127.0.0.1:0",
                             "--scheduler", dashboard, "--record", str(record),
                             "--output", str(work / "measurement"), "--exit-on-run-end",
                             "--duration", "3600"],
                            stdout=open(work / "roastop.stdout", "w"), stderr=open(err, "w"),
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        text = err.read_text()
        addr = re.search(r"ROASTOP_ADDR=(\S+)", text)
        key = re.search(r"ROASTOP_KEY=\$\(cat (\S+)\)", text)
        if addr and key:
            return proc, {"ROASTOP_ADDR": addr.group(1),
                          "ROASTOP_KEY": Path(key.group(1)).read_text().strip()}
        time.sleep(0.05)
    proc.kill()
    sys.exit("roastop did not start: " + err.read_text())


def store(args, record):
    """The recording at --out, or --out.gz when it is large."""
    out = args.out
    if record.stat().st_size > args.gzip_above:
        out = out.with_name(out.name + ".gz")
        with open(record, "rb") as src, gzip.GzipFile(out, "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(record, out)
    for stale in (args.out, args.out.with_name(args.out.name + ".gz")):
        if stale != out and stale.exists():
            stale.unlink()
    return out


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="roastop-demo-") as tmp:
        work = Path(tmp)
        # paths relative to the directory the client and the workers share, so
        # that the recording names data/DYJetsToLL_0.root, not a temporary path
        subprocess.run([sys.executable, str(HERE / "make_files.py"), "data",
                        "--events-per-file", str(args.events_per_file),
                        "--files-per-dataset", str(args.files_per_dataset),
                        "--relative-paths"], check=True, stdout=subprocess.DEVNULL, cwd=work)
        procs, addr, dashboard = start_cluster(work)
        record = work / "recording.jsonl"
        try:
            roastop, env = start_roastop(args, work, dashboard, record)
            client_env = dict(os.environ, PYTHONPATH=os.environ.get("ROASTOP_CLIENT")
                              or str(REPO / "python"), **env)
            subprocess.run([sys.executable, str(HERE / "run_dimuon.py"), "--scheduler", addr,
                            "--files", "data", "--chunksize", str(args.chunksize),
                            "--slow-file", args.slow_file, "--slow-seconds",
                            str(args.slow_seconds), "--expected-events"],
                           env=client_env, check=True, cwd=work)
            roastop.wait(timeout=60)
            print((work / "roastop.stdout").read_text())
        finally:
            for p in reversed(procs):
                p.send_signal(signal.SIGTERM)
            for p in reversed(procs):
                p.wait(timeout=30)
        out = store(args, record)
        print(f"recording: {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
