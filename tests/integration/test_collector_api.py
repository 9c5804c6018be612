"""A script written for roastcoffea 0.1.2 (examples/roastcoffea_script.py),
switched to roastop by its one import, runs unchanged on a real coffea run on
a real Dask cluster: get_metrics() is roastop's metrics.json of the run,
save_measurement() writes what roastcoffea's load_measurement() reads, and
print_summary() prints roastop's summary.txt. roastop serves them over its
HTTP channel (docs/serve.md); the same script runs under roastcoffea itself."""
import json
import subprocess
import sys

import pytest
from conftest import load_metrics, run_dir, start_roastop_live
from dask_cluster import EXAMPLES, client_env

SCRIPT = EXAMPLES / "roastcoffea_script.py"
IMPORT = "from roastcoffea import MetricsCollector, track_metrics\n"


def switched(tmp_path):
    text = SCRIPT.read_text()
    assert text.count(IMPORT) == 1
    out = tmp_path / "roastop_script.py"
    out.write_text(text.replace(IMPORT, "from roastop import MetricsCollector, track_metrics\n"))
    return out


def run_script(script, cluster, files, workdir, env):
    result = workdir / "result.json"
    p = subprocess.run([sys.executable, str(script), "--scheduler", cluster.address,
                        "--files", str(files), "--output", str(workdir / "saved"),
                        "--result", str(result)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(result.read_text()), p.stdout


@pytest.fixture(scope="module")
def roastop_script_run(tmp_path_factory, dask_cluster, dimuon_files):
    d = tmp_path_factory.mktemp("collector-api")
    out = d / "measurement"
    proc, env = start_roastop_live(d, "--scheduler", dask_cluster.dashboard_url,
                                   "--duration", 600, "--output", out, "--checkpoint", 0)
    try:
        files, truth = dimuon_files
        result, stdout = run_script(switched(d), dask_cluster, files, d, client_env(**env))
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert proc.returncode == 0, (d / "roastop.stderr").read_text()
    return {"result": result, "stdout": stdout, "out": out, "truth": truth, "dir": d}


def test_get_metrics_is_the_runs_metrics_json(roastop_script_run):
    r = roastop_script_run
    written = load_metrics(r["out"])
    got = r["result"]["metrics"]
    assert got == written
    assert got["total_events"] == r["result"]["entries"] == r["truth"]["total_events"]
    assert got["run_status"] == "completed"


def test_saved_measurement_loads_in_roastcoffea(roastop_script_run):
    from roastcoffea import load_measurement
    r = roastop_script_run
    path = r["result"]["path"]
    metrics, t0, t1 = load_measurement(path)
    assert metrics["total_events"] == r["truth"]["total_events"]
    assert metrics["num_chunks"] == r["result"]["metrics"]["num_chunks"]
    assert 0 < t1 - t0 < 300
    written = (run_dir(r["out"]) / "metrics.json").read_bytes()
    assert (r["dir"] / "saved" / "measurement" / "metrics.json").read_bytes() == written


def test_print_summary_prints_roastops_summary(roastop_script_run):
    r = roastop_script_run
    summary = (run_dir(r["out"]) / "summary.txt").read_text()
    assert summary.strip() and summary in r["stdout"]


def test_the_same_script_runs_under_roastcoffea(tmp_path, dask_cluster, dimuon_files,
                                               roastop_script_run):
    """The script is roastcoffea's: unchanged, it runs under roastcoffea, and
    every key roastcoffea's get_metrics() gives, roastop's gives too."""
    files, truth = dimuon_files
    result, stdout = run_script(SCRIPT, dask_cluster, files, tmp_path, client_env())
    assert result["metrics"]["total_events"] == truth["total_events"]
    assert (tmp_path / "saved" / "measurement" / "metrics.json").exists()
    assert set(result["metrics"]) <= set(roastop_script_run["result"]["metrics"])


CLIENT = """
import json, sys
from roastop import MetricsCollector
mc = MetricsCollector(None, run_name="fetched before the exit")
with mc:
    pass
m = mc.get_metrics()
mc.print_summary()
sys.stderr.write(json.dumps({"run_id": m["run_id"], "mine": mc.run_id,
                             "status": m["run_status"]}))
"""


def test_exit_on_run_end_waits_for_the_collectors_fetch(tmp_path):
    """roastop --exit-on-run-end closes the run, stays until the collector
    has fetched it (docs/serve.md), then exits on its own."""
    out = tmp_path / "measurement"
    proc, env = start_roastop_live(tmp_path, "--exit-on-run-end", "--duration", 300,
                                   "--output", out)
    try:
        p = subprocess.run([sys.executable, "-c", CLIENT], env=client_env(**env),
                           capture_output=True, text=True, timeout=120)
        roastop_out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert p.returncode == 0, p.stdout + p.stderr
    got = json.loads(p.stderr.strip().splitlines()[-1])
    assert got["run_id"] == got["mine"] and got["status"] == "completed"
    assert proc.returncode == 0 and "run ended" in roastop_out
    assert (run_dir(out) / "summary.txt").read_text() in p.stdout
