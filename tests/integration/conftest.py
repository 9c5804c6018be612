"""Shared fixtures: the real roastop binary and the recording generator."""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROASTOP = os.environ.get("ROASTOP", "build/roastop")
TOOLS = os.environ.get("TOOLS", "build/tools")


def no_nan(text):
    """json.loads that fails on NaN/Infinity, which roastop must never write."""
    def reject(name):
        raise ValueError(f"non-finite number {name} in JSON")
    return json.loads(text, parse_constant=reject)


def generate(path: Path, truth: Path, **opts):
    args = [f"{TOOLS}/gen_recording", "--truth", str(truth)]
    for key, value in opts.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    with open(path, "wb") as out:
        subprocess.run(args, stdout=out, check=True)
    return no_nan(truth.read_text())


def roastop(*args, timeout=120, **kw):
    return subprocess.run([ROASTOP, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def load_metrics(outdir: Path):
    return no_nan((outdir / "metrics.json").read_text())


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A generated recording: 5,000 chunks, 16 workers joining and leaving,
    3 datasets, every 97th chunk failing; plus the generator's own truth."""
    d = tmp_path_factory.mktemp("small")
    rec, truth = d / "run.jsonl", d / "truth.json"
    t = generate(rec, truth, chunks=5000, workers=16, hours=0.5, sample_interval=1,
                 datasets=3, files=45, fail_every=97, seed=7)
    return rec, t
