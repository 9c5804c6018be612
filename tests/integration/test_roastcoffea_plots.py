"""Every plot function of roastcoffea 0.1.2 on roastop's measurement of a
real coffea run (the session's roastop_dimuon_run: the dimuon processor
over uproot-written files on a 2-worker Dask cluster, roastop's decorator
and collector), loaded with roastcoffea's own load_measurement(). Each must
return a figure without raising (plot_occupancy_timeline included: the
route sends WorkerState.occupancy), except the per-task plots of fine-metric
rows Dask did not write (docs/metrics.md, "Raw data").

Two inputs are rebuilt from metrics.json the way a roastcoffea user would
have them in memory, because roastcoffea's loader does not give them back
for its own measurements either: worker_cpu (load_measurement's
_deserialize_tracking_data keeps only the keys it lists, and worker_cpu is
not one) and raw_span_metrics' tuple keys (save_measurement writes them as
str(tuple), load_measurement leaves them strings)."""
import ast
import json
from datetime import datetime

import pytest

from conftest import run_dir

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

PLOTS = """plot_branch_access_per_chunk plot_bytes_accessed_per_chunk
plot_compression_ratio_distribution plot_cpu_utilization_mean_timeline
plot_cpu_utilization_per_worker_timeline plot_data_access_percentage
plot_efficiency_summary plot_executing_tasks_timeline
plot_memory_utilization_mean_timeline plot_memory_utilization_per_worker_timeline
plot_occupancy_timeline plot_per_task_bytes_read plot_per_task_cpu_io plot_per_task_overhead
plot_resource_utilization plot_runtime_distribution plot_runtime_vs_events
plot_throughput_timeline plot_total_active_tasks_timeline plot_worker_activity_timeline
plot_worker_count_timeline""".split()

# Plots of fine-metric rows Dask writes only when the work does it: reading
# spilled data back (disk-read), and (de)serializing or (de)compressing in
# a task's execution. On this small run nothing spills and nothing moves
# between workers inside a task, so Dask's span has none of those rows and
# roastcoffea's own measurement raises the same. Expected only while the
# span lacks them: with them, the plot must work.
WHEN_DASK_HAS_NONE = {
    "plot_per_task_bytes_read": ({"disk-read"}, "No per-task disk-read metrics found"),
    "plot_per_task_overhead": ({"compress", "decompress", "serialize", "deserialize"},
                               "No per-task overhead metrics found"),
}


@pytest.fixture(scope="module")
def measurement(roastop_dimuon_run):
    from roastcoffea import load_measurement
    d = run_dir(roastop_dimuon_run["out"])
    metrics, _, _ = load_measurement(d)
    raw = json.loads((d / "metrics.json").read_text())
    tracking = dict(metrics["tracking_data"])
    assert "worker_cpu" not in tracking  # roastcoffea's loader drops it
    tracking["worker_cpu"] = {
        w: [(datetime.fromisoformat(t), v) for t, v in series]
        for w, series in raw["tracking_data"]["worker_cpu"].items()}
    span = {ast.literal_eval(k): v for k, v in metrics.get("raw_span_metrics", {}).items()}
    return metrics, tracking, span


def args_for(name, metrics, tracking, span):
    chunks = metrics.get("raw_chunk_metrics")
    if name == "plot_throughput_timeline":
        return (metrics.get("chunk_info"), tracking)
    if name.startswith("plot_per_task"):
        return (span,)
    if name in ("plot_runtime_distribution", "plot_runtime_vs_events",
                "plot_branch_access_per_chunk", "plot_bytes_accessed_per_chunk"):
        return (chunks,)
    if name in ("plot_compression_ratio_distribution", "plot_data_access_percentage",
                "plot_efficiency_summary", "plot_resource_utilization"):
        return (metrics,)
    return (tracking,)


def test_the_list_is_roastcoffeas():
    import roastcoffea
    import roastcoffea.visualization.plots as plots
    assert roastcoffea.__version__ == "0.1.2"
    exported = sorted(n for n in plots.__all__ if n.startswith("plot_"))
    assert sorted(PLOTS) == exported
    assert len(PLOTS) == 21


@pytest.mark.parametrize("name", PLOTS)
def test_plot(name, measurement):
    import matplotlib.pyplot as plt
    import roastcoffea.visualization.plots as plots
    fn = getattr(plots, name)
    args = args_for(name, *measurement)
    span = measurement[2]
    if name in WHEN_DASK_HAS_NONE:
        activities, msg = WHEN_DASK_HAS_NONE[name]
        if not any(k[0] == "execute" and k[2] in activities and k[1] != "N/A" and v > 0
                   for k, v in span.items()):
            with pytest.raises(ValueError, match=msg):
                fn(*args)
            return
    fig, ax = fn(*args)
    assert isinstance(fig, plt.Figure)
    assert ax.has_data() or ax.patches or ax.texts, name
    plt.close(fig)


def test_span_rows_are_all_there(measurement):
    """raw_span_metrics holds the span's rows with roastcoffea's tuple keys:
    the processor's CPU and non-CPU seconds the per-task plots draw."""
    metrics, _, span = measurement
    proc = [k for k in span if k[0] == "execute" and k[2] == "thread-cpu" and span[k] > 0]
    assert proc and all(len(k) == 4 for k in span)
    cpu = sum(v for k, v in span.items()
              if k[0] == "execute" and k[2] == "thread-cpu" and k[1] == "DimuonProcessor")
    assert cpu == pytest.approx(metrics["processor_cpu_time_seconds"], rel=1e-9)


def test_tracking_data_is_roastcoffeas_structure(measurement, roastop_dimuon_run):
    metrics, tracking, _ = measurement
    counts = tracking["worker_counts"]
    assert counts and all(isinstance(t, datetime) for t in counts)
    assert max(counts.values()) == 2  # the cluster's 2 workers
    mem, limit = tracking["worker_memory"], tracking["worker_memory_limit"]
    assert len(mem) == 2 and set(mem) == set(limit)
    for w, series in mem.items():
        assert [t for t, _ in series] == [t for t, _ in limit[w]]  # the plots pair them so
        assert all(v > 0 for _, v in series)
    assert all(v == 1 for s in tracking["worker_cores"].values() for _, v in s)  # 1 thread each
    occ = tracking["worker_occupancy"]  # WorkerState.occupancy, seconds, at each sample
    assert set(occ) == set(mem)
    assert all(isinstance(t, datetime) and v >= 0 for s in occ.values() for t, v in s)
    assert any(v > 0 for s in occ.values() for _, v in s)  # tasks were queued on them
    ro = metrics["roastop"]
    assert ro["tracking_data"]["workers_written"] == 2


def test_raw_chunks_are_every_chunk(measurement, roastop_dimuon_run):
    metrics, _, _ = measurement
    chunks = metrics["raw_chunk_metrics"]
    assert len(chunks) == metrics["num_successful_chunks"]
    assert metrics["roastop"]["raw_chunks"] == {
        "kept": len(chunks), "total": len(chunks), "sampled": False, "method": "all",
        "cap": 4096, "chunk_info_bytes_weight": 1}
    assert sum(c["num_events"] for c in chunks) == metrics["total_events_from_chunks"]
    for c in chunks:
        assert c["t_start"] <= c["t_end"] and c["duration"] > 0
        assert c["file"].endswith(".root") and c["dataset"]
    info = metrics["chunk_info"]
    assert len(info) == len(chunks)
    assert sum(v[2] for v in info.values()) == pytest.approx(
        sum(c.get("bytes_read", 0) for c in chunks))
