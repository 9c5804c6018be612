"""The dask-awkward path with no roastop code in the analysis (issue 20, item
3): coffea's apply_to_fileset + dask.compute over the uproot-written files,
NanoEvents in dask mode, on a real loopback cluster. process() runs once per
dataset on the client there, so no decorator sees a chunk: only the
scheduler's task stream does. roastop's per-prefix counts equal the graph's,
each prefix has runtimes, and a task made slow on purpose is named as a
straggler with its worker, headless and in tmux.

dask-awkward requires dask < 2025.4, so the cluster and the client run from
their own environment (tests/requirements-dak.txt, made by run.sh):
distributed 2025.3.0's /eventstream, the version such a user has."""
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from dask_cluster import Cluster, cluster_env, wait_for
from test_taskstream import connects, start, stop

pytestmark = pytest.mark.skipif(not os.environ.get("VENV_DAK"),
                                reason="VENV_DAK unset: run through tests/integration/run.sh")
STEP = 10000  # entries per partition, as the Runner's chunks elsewhere
NAP = 3.0     # the slow task's seconds at least (more when the others were slow)

# No roastop here: an analysis as a dask-awkward user writes it. It prints the
# graph's tasks per prefix (as the scheduler receives it, optimised), the
# events per dataset it counted, and the worker the slow task ran on.
CLIENT = textwrap.dedent("""
    import json, sys, time
    from collections import Counter
    from pathlib import Path
    import awkward as ak
    import dask
    import uproot
    from coffea.dataset_tools import apply_to_fileset
    from coffea.nanoevents import NanoAODSchema
    from dask.utils import key_split
    from distributed import Client, get_task_stream, wait

    files, scheduler, step, nap = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

    def dimuons(events):
        mu = events.Muon
        good = mu[(mu.pt > 5) & (abs(mu.eta) < 2.4)]
        pairs = good[ak.num(good) >= 2][:, :2]
        opposite = pairs[pairs.charge[:, 0] != pairs.charge[:, 1]]
        mass = (opposite[:, 0] + opposite[:, 1]).mass
        return {"entries": ak.num(events, axis=0), "pairs": ak.num(mass, axis=0)}

    def slow(seconds):
        time.sleep(seconds)
        return seconds

    def steps(path):
        n = uproot.open(path)["Events"].num_entries
        return [[s, min(s + step, n)] for s in range(0, n, step)]

    fileset = {ds: {"files": {p: {"object_path": "Events", "steps": steps(p)} for p in paths}}
               for ds, paths in json.loads((files / "fileset.json").read_text()).items()}
    out = apply_to_fileset(dimuons, fileset, schemaclass=NanoAODSchema)
    names = [(ds, k) for ds in out for k in out[ds]]
    leaves = [out[ds][k] for ds, k in names]
    graph = dask.base.collections_to_dsk(leaves, optimize_graph=True)
    with Client(scheduler) as client:
        with get_task_stream(client) as stream:
            futures = client.compute(leaves)
            wait(futures)
        values = client.gather(futures)
        # slow enough to be a straggler against every task before it (the
        # rule: 3 x p90 or p99 of those), however loaded the machine is
        longest = max(s["stop"] - s["start"] for t in stream.data for s in t["startstops"]
                      if s["action"] == "compute")
        nap = max(nap, 4 * longest)
        napping = client.compute(dask.delayed(slow, pure=False)(nap))
        wait(napping)
        nap_worker = list(client.who_has(napping).values())[0][0]
        client.run_on_scheduler(lambda: None)  # the stream's last messages are written
    result = {ds: {} for ds, _ in names}
    for (ds, k), v in zip(names, values):
        result[ds][k] = int(v)
    # compute adds a finalize task where a collection's result needs one
    # (two results may share one: one key, one task)
    sent = Counter(key_split(k) for k in dict(graph))
    sent.update(key_split(k) for k in {f.key for f in futures} - set(graph))
    sent[key_split(napping.key)] += 1
    print(json.dumps({"graph": sent,
                      "result": result, "nap_worker": nap_worker,
                      "nap": nap}))
""")


@pytest.fixture
def dak_cluster(tmp_path):
    c = Cluster(tmp_path, n_workers=2, dask=str(Path(os.environ["VENV_DAK"]) / "bin" / "dask"))
    yield c
    c.stop()


def run_analysis(tmp_path, cluster, files):
    """The analysis in its own environment; its printed facts."""
    script = tmp_path / "dak_client.py"
    script.write_text(CLIENT)
    p = subprocess.run([str(Path(os.environ["VENV_DAK"]) / "bin" / "python"), str(script),
                        str(files), cluster.address, str(STEP), str(NAP)],
                       env=cluster_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_apply_to_fileset_headless(tmp_path, dak_cluster, dimuon_files):
    files, truth = dimuon_files
    proc, err = start(tmp_path, dak_cluster)
    try:
        wait_for(lambda: connects(err) >= 1, timeout=60)
        facts = run_analysis(tmp_path, dak_cluster, files)
        tasks, stream = stop(proc, tmp_path / "out")
    finally:
        if proc.poll() is None:
            proc.kill()
    # the analysis itself ran right: every event of the files counted
    for ds, n in truth["events_per_dataset"].items():
        assert facts["result"][ds]["entries"] == n, facts["result"]
    want = facts["graph"]
    assert len(want) >= 3 and want["slow"] == 1, want  # the files' tasks, the reduction, the nap
    got = {p["prefix"]: p for p in tasks["prefixes"]}
    for prefix, n in want.items():
        assert got.get(prefix, {}).get("count") == n, (prefix, got.get(prefix), n, want)
        assert got[prefix]["compute_p50_seconds"] > 0, got[prefix]
    assert tasks["count"] == sum(want.values()), (tasks["count"], want, sorted((p, g["count"]) for p, g in got.items()))
    assert got["slow"]["compute_p50_seconds"] >= facts["nap"] * 0.99
    named = [s for s in tasks["stragglers"] if s["prefix"] == "slow"]
    assert named and named[0]["worker"] == facts["nap_worker"], tasks["stragglers"]
    assert sum(stream["rejected_by"].values()) == 0, stream


@pytest.mark.parametrize("cols,rows", [(80, 24), (200, 60)])
def test_apply_to_fileset_in_tmux(tmp_path, dak_cluster, dimuon_files, cols, rows):
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    from test_screen import DURATION, TASKS_TAB, Screen
    files, _ = dimuon_files
    s = Screen(tmp_path, ["--scheduler", dak_cluster.dashboard_url, "--task-stream",
                          "--listen", "127.0.0.1:0",
                          "--no-auth", "--checkpoint", 0], cols=cols, rows=rows)
    try:
        s.wait_for(TASKS_TAB, timeout=60)  # roastop up, its keys read: then the key
        s.keys("0")
        s.wait_for("task stream (connected)", timeout=60)
        facts = run_analysis(tmp_path, dak_cluster, files)
        total = sum(facts["graph"].values())
        s.wait_for(f"task stream (connected): {total} tasks", timeout=120)
        # the table's rows are drawn after its title: the title naming the
        # straggler and each prefix's row whole to its P90 (a duration ends in
        # its unit: one half drawn never matches), on one capture. A row's
        # count is the model's, its durations the tick's figures: a prefix
        # that arrived since the last tick shows n/a until the next, so the
        # wait is for each P50 measured, the state asserted below
        dur = r"(?:" + DURATION + r"|n/a)"
        rows_whole = [re.compile(rf"^\s*\S\s+{re.escape(prefix)}\s+{n}\s+\S+\s+{DURATION}\s+{dur}(?:\s|$)",
                                 re.M) for prefix, n in facts["graph"].items()]
        text = s.wait_for(["latest straggler: slow on " + facts["nap_worker"], *rows_whole],
                          timeout=60)
        lines = text.splitlines()
        assert len(lines) == rows
        # the per-prefix table: each prefix of the graph with its count and p50
        for prefix, n in facts["graph"].items():
            row = [ln.split() for ln in lines if ln.split()[1:3] == [prefix, str(n)]]
            assert row and row[0][4] not in ("n/a", "0"), (prefix, n, text)
    finally:
        s.close()
