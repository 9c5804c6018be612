"""Replaying a generated recording headless writes a complete, correct
measurement: every roastcoffea 0.1.2 key, values equal to the generator's
independently computed truth."""
import json
import math
import os
import signal
import subprocess
import time

import pytest

from conftest import ROASTOP, generate, load_metrics, no_nan, roastop, run_dir, run_dirs

# Every key roastcoffea 0.1.2 writes that a replay with chunks, samples,
# span fine metrics and a coffea report must produce.
ROASTCOFFEA_KEYS = """
data_rate_gbps total_events event_rate_elapsed_khz event_rate_cpu_total_khz
elapsed_time_seconds total_cpu_time num_chunks avg_cpu_time_per_chunk total_bytes_read
avg_workers peak_workers total_cores cores_per_worker peak_memory_bytes
avg_memory_per_worker_bytes core_efficiency speedup_factor event_rate_core_khz
processor_cpu_time_seconds processor_io_wait_time_seconds processor_cpu_percent
processor_io_wait_percent overhead_cpu_time_seconds overhead_io_wait_time_seconds
total_bytes_memory_read disk_read_bytes disk_write_bytes compression_time_seconds
decompression_time_seconds total_compression_overhead_seconds serialization_time_seconds
deserialization_time_seconds total_serialization_overhead_seconds num_successful_chunks
num_failed_chunks chunk_duration_mean chunk_duration_min chunk_duration_max
chunk_duration_std chunk_mem_delta_mean_mb chunk_mem_delta_min_mb chunk_mem_delta_max_mb
chunk_mem_delta_std_mb total_events_from_chunks chunk_events_mean chunk_events_min
chunk_events_max per_dataset file_metadata compression_ratios file_read_metrics
avg_branches_read_percent avg_bytes_read_percent bytes_read_percent_per_file
total_branches_read
""".split()

ROASTOP_EXTRAS = """
data_rate_mb_per_s efficiency_ratio memory_utilization_mean_percent
memory_utilization_min_percent memory_utilization_max_percent cpu_utilization_mean_percent
io_overhead_pct chunk_duration_p50 chunk_duration_p90 chunk_duration_p99 section_summary
""".split()


@pytest.fixture(scope="module")
def replayed(small_run, tmp_path_factory):
    rec, truth = small_run
    out = tmp_path_factory.mktemp("m") / "measurement"
    p = roastop("--replay", rec, "--speed", 0, "--headless", "--output", out)
    assert p.returncode == 0, p.stderr
    return p, load_metrics(out), truth, out


def close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def test_every_key_present_and_numeric(replayed):
    _, m, _, _ = replayed
    missing = [k for k in ROASTCOFFEA_KEYS + ROASTOP_EXTRAS if k not in m]
    assert not missing, missing
    for k in ROASTCOFFEA_KEYS:
        if k in ("per_dataset", "file_metadata", "compression_ratios", "file_read_metrics",
                 "bytes_read_percent_per_file"):
            continue
        assert isinstance(m[k], (int, float)), (k, m[k])


def test_counts_exact(replayed):
    _, m, t, _ = replayed
    for k in ("num_chunks", "num_failed_chunks", "num_successful_chunks", "peak_workers"):
        assert m[k] == t[k], k
    assert m["total_events"] == t["total_events"]
    assert m["total_events_from_chunks"] == t["total_events"]
    assert m["total_bytes_read"] == t["total_bytes_read"]
    for name, d in t["per_dataset"].items():
        assert m["per_dataset"][name]["num_chunks"] == d["num_chunks"]
        assert m["per_dataset"][name]["total_events"] == d["total_events"]


def test_formulas_against_truth(replayed):
    _, m, t, _ = replayed
    for k in ("avg_workers", "total_cores", "elapsed_time_seconds", "chunk_duration_mean",
              "processor_cpu_time_seconds", "processor_io_wait_time_seconds",
              "total_cpu_time"):
        assert close(m[k], t[k]), (k, m[k], t[k])
    el = t["elapsed_time_seconds"]
    assert close(m["event_rate_elapsed_khz"], t["total_events"] / el / 1000)
    assert close(m["data_rate_gbps"], t["total_bytes_read"] * 8 / 1e9 / el)
    assert close(m["core_efficiency"], t["total_cpu_time"] / (el * t["total_cores"]))
    assert m["avg_workers"] < m["peak_workers"]  # workers joined and left
    assert m["chunk_duration_min"] <= m["chunk_duration_p50"] <= m["chunk_duration_p90"]
    assert m["chunk_duration_p90"] <= m["chunk_duration_p99"] <= m["chunk_duration_max"]
    assert m["total_branches_read"] == 6


def test_measurement_layout(replayed, small_run):
    p, m, t, out = replayed
    start = json.loads(small_run[0].read_text().splitlines()[1])
    assert start["type"] == "run_start"
    # --output is the root: the run's own directory, named by its start (local
    # time) and its name, and `latest`, a relative link to it
    (d,) = run_dirs(out)
    assert sorted(f.name for f in out.iterdir()) == sorted([d.name, "latest"])
    assert os.readlink(out / "latest") == d.name
    assert d.name.startswith(time.strftime("%Y-%m-%d_%H-%M-%S_", time.localtime(start["t"])))
    assert "generated" in d.name and " " not in d.name
    assert run_dir(out).resolve() == d.resolve()
    meta = no_nan((d / "metadata.json").read_text())
    assert meta["format"] == "roastcoffea_measurement_v1"
    assert close(meta["elapsed_time_seconds"], t["elapsed_time_seconds"])
    t0, t1 = (float(x) for x in (d / "start_end_time.txt").read_text().strip().split(","))
    assert close(t1 - t0, t["elapsed_time_seconds"], rel=1e-6)
    summary = (d / "summary.txt").read_text()
    for title in ("Throughput", "Event Processing", "Resource Utilization", "Timing",
                  "Fine Metrics", "Chunk Metrics"):
        assert title in summary
    assert summary.strip() in p.stdout  # the same summary is printed
    assert f"1 measurement written under {out} (latest: {d.name})" in p.stdout


def test_record_then_replay_gives_same_metrics(small_run, tmp_path):
    rec, _ = small_run
    again = tmp_path / "again.jsonl"
    a, b = tmp_path / "a", tmp_path / "b"
    assert roastop("--replay", rec, "--speed", 0, "--headless", "--output", a,
                   "--record", again).returncode == 0
    assert roastop("--replay", again, "--speed", 0, "--headless", "--output", b).returncode == 0
    ma, mb = load_metrics(a), load_metrics(b)
    ma.pop("roastop", None)
    mb.pop("roastop", None)
    assert ma == mb


def test_bad_arguments_exit_2():
    for args in (["--interval", "-1"], ["--no-such-option"], ["--speed", "2"], ["stray"]):
        p = roastop(*args)
        assert p.returncode == 2, args
        assert p.stderr.startswith("roastop: "), p.stderr
        assert len(p.stderr.strip().splitlines()) <= 2


def test_garbage_lines_counted_good_ones_applied(small_run, tmp_path):
    rec, t = small_run
    lines = rec.read_text().splitlines()
    bad = ['not json', '{"type":"chunk","t":1767225700}', '{"type":"nope","t":1}',
           '{"type":"chunk","t":1767225700,"duration":-3}', '[1,2,3]', '{' * 100]
    mixed = [lines[0]]
    for i, line in enumerate(lines[1:]):
        mixed.append(line)
        if i % 500 == 0:
            mixed.append(bad[(i // 500) % len(bad)])
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(mixed) + "\n")
    out = tmp_path / "out"
    p = roastop("--replay", path, "--speed", 0, "--headless", "--output", out)
    assert p.returncode == 0, p.stderr
    m = load_metrics(out)
    assert m["num_chunks"] == t["num_chunks"]
    assert m["total_events"] == t["total_events"]
    n_bad = sum(1 for i in range(len(lines) - 1) if i % 500 == 0)
    assert m["roastop"]["replay"]["rejected"]["total"] == n_bad


def checkpointed_chunks(out):
    """num_chunks of the latest checkpoint (renamed into place whole), or 0."""
    try:
        return load_metrics(out)["num_chunks"] or 0
    except (OSError, ValueError):
        return 0


def wait_checkpoint(out, cond, timeout=60):
    """Until a checkpoint under out satisfies cond (a function of num_chunks)."""
    deadline = time.monotonic() + timeout
    while not cond(checkpointed_chunks(out)):
        assert time.monotonic() < deadline, f"no checkpoint as wanted: {checkpointed_chunks(out)}"
        time.sleep(0.05)


def slow_replay(rec, out, *extra):
    return subprocess.Popen([ROASTOP, "--replay", str(rec), "--speed", "60", "--headless",
                             "--output", str(out), *map(str, extra)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_writes_measurement(small_run, tmp_path, sig):
    rec, t = small_run
    out = tmp_path / "sig"
    p = slow_replay(rec, out, "--checkpoint", 1)
    wait_checkpoint(out, lambda n: n > 0)  # part of the run in, not a sleep's worth
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 0, stderr
    m = load_metrics(out)
    assert 0 < m["num_chunks"] < t["num_chunks"]  # stopped part-way, nothing lost
    assert "Throughput" in stdout


def test_duration_stops(small_run, tmp_path):
    rec, t = small_run
    out = tmp_path / "dur"
    start = time.monotonic()
    p = roastop("--replay", rec, "--speed", 60, "--headless", "--duration", 1.0, "--output", out)
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - start < 10
    assert 0 < load_metrics(out)["num_chunks"] < t["num_chunks"]


def test_checkpoint_survives_sigkill(small_run, tmp_path):
    rec, _ = small_run
    out = tmp_path / "ckpt"
    p = slow_replay(rec, out, "--checkpoint", 1)
    wait_checkpoint(out, lambda n: n > 0)
    # then a later checkpoint renamed over it: the kill lands in the writes' rhythm
    first = (out / "latest" / "metrics.json").stat().st_ino
    deadline = time.monotonic() + 60
    while (out / "latest" / "metrics.json").stat().st_ino == first:
        assert time.monotonic() < deadline, "no second checkpoint"
        time.sleep(0.05)
    p.kill()
    p.wait()
    m = load_metrics(out)  # a complete file, never a torn one
    assert m["num_chunks"] > 0


def test_unwritable_output_prints_summary_and_fails(small_run, tmp_path):
    rec, _ = small_run
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = roastop("--replay", rec, "--speed", 0, "--headless", "--output", blocker / "sub")
    assert p.returncode == 1
    assert "Throughput" in p.stdout
    assert "metrics.json" in p.stderr or str(blocker) in p.stderr


def test_exit_on_run_end_ignores_what_follows(small_run, tmp_path):
    rec, t = small_run
    extra = '{"type":"chunk","t":1767300000,"duration":1,"num_events":5,"dataset":"late"}\n'
    path = tmp_path / "late.jsonl"
    path.write_text(rec.read_text() + extra * 3)
    out = tmp_path / "end"
    p = roastop("--replay", path, "--speed", 0, "--headless", "--exit-on-run-end",
                "--output", out)
    assert p.returncode == 0, p.stderr
    assert "run ended" in p.stdout
    m = load_metrics(out)
    assert m["num_chunks"] == t["num_chunks"]
    assert "late" not in m["per_dataset"]


def test_replay_from_stdin(small_run, tmp_path):
    rec, t = small_run
    out = tmp_path / "stdin"
    with open(rec, "rb") as f:
        p = subprocess.run([ROASTOP, "--replay", "-", "--speed", "0", "--headless",
                            "--output", str(out)], stdin=f, capture_output=True, text=True,
                           timeout=60)
    assert p.returncode == 0, p.stderr
    assert load_metrics(out)["total_events"] == t["total_events"]


def test_paced_replay_keeps_time_with_few_wakeups(tmp_path):
    """At --speed 2 a 4.6-second run of 1,500 chunks takes 2.3 s, and
    roastop wakes up about once per 20 ms of slack, not once per chunk
    (voluntary context switches from wait4: ~1,500 before the slack)."""
    rec, truth = tmp_path / "run.jsonl", tmp_path / "truth.json"
    t = generate(rec, truth, chunks=1500, workers=4, hours=0.001, sample_interval=1)
    span = 4.6 / 2
    start = time.monotonic()
    p = subprocess.Popen([ROASTOP, "--replay", str(rec), "--speed", "2", "--headless",
                          "--output", str(tmp_path / "out")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    assert os.waitstatus_to_exitcode(status) == 0
    assert span - 0.05 <= wall <= span + 2.0
    assert usage.ru_nvcsw <= span / 0.02 + 60, usage.ru_nvcsw
    assert load_metrics(tmp_path / "out")["num_chunks"] == t["num_chunks"]
