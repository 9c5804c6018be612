"""The ETA on the main view (docs/metrics.md, "Progress and ETA"): a replayed
run with expected events shows `ETA <duration>` and the value falls as the
run goes on; without expected events but with the scheduler's task progress,
the ETA comes from the tasks and says so. At 80x24 and 200x60, the progress
line whole (no word cut). The real binary in a tmux pane (test_screen.py)."""
import bisect
import json
import re
import time

import pytest

from conftest import generate, load_metrics
from test_screen import pytestmark, replay, screen  # noqa: F401 (tmux or skip; the fixture)

SIZES = [(80, 24), (200, 60)]
DURATION = r"(?:\d+h )?(?:\d+m )?\d+(?:\.\d+)?(?: ms|s)"
# the progress row, from its start to a word's end: nothing cut
EVENTS_ROW = re.compile(r"^ events ([\d,]+) of ([\d,]+) .*?\d+\.\d%  ETA (" + DURATION
                        + r"|n/a)(?: · chunks \d+ done, \d+ failed)?$", re.M)
TASKS_ROW = re.compile(r"^ tasks (\d+) of (\d+) .*?\d+%  ETA (" + DURATION + r"|n/a)"
                       r" \(from tasks\)(?: · chunks \d+ done, \d+ failed)?"
                       r"(?: · events [\d,]+)?(?: · executing (?:\d+|n/a))?$", re.M)


def seconds(text):
    """'1h 2m 3s', '4m 12s', '59.3s', '850 ms' -> seconds."""
    if text.endswith(" ms"):
        return float(text[:-3]) / 1000
    total = 0.0
    for part in text.split():
        total += float(part[:-1]) * {"h": 3600, "m": 60, "s": 1}[part[-1]]
    return total


@pytest.fixture(scope="module")
def with_expected(tmp_path_factory):
    """12 minutes of an 8-worker run; gen_recording's run_start carries
    expected_events."""
    d = tmp_path_factory.mktemp("eta")
    rec = d / "run.jsonl"
    generate(rec, d / "truth.json", chunks=720, workers=8, hours=0.2, sample_interval=2,
             datasets=2, files=12, seed=11)
    assert '"expected_events":' in rec.read_text().splitlines()[1]
    return rec


@pytest.fixture(scope="module")
def with_tasks(tmp_path_factory, with_expected):
    """The same run as a collector without expected_events would send it,
    with the scheduler's task progress in each sample (one task per chunk,
    done when the chunk arrived)."""
    lines = [json.loads(line) for line in with_expected.read_text().splitlines()]
    chunk_times = sorted(e["t"] for e in lines if e["type"] == "chunk")
    rec = tmp_path_factory.mktemp("eta-tasks") / "run.jsonl"
    with open(rec, "w") as out:
        for e in lines:
            if e["type"] == "run_start":
                del e["expected_events"]
            elif e["type"] == "sample":
                e["tasks_done"] = bisect.bisect_right(chunk_times, e["t"])
                e["tasks_total"] = len(chunk_times)
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
    return rec


def etas_until_the_end(s, row, end_word, timeout=120):
    """The ETA values the progress row showed (in seconds) until the run
    ended (end_word on that row); every row read is whole."""
    values = []
    deadline = time.monotonic() + timeout
    while True:
        text = s.text()
        m = row.search(text)
        if m and m.group(3) != "n/a":
            v = seconds(m.group(3))
            if not values or values[-1] != v:
                values.append(v)
        if re.search(r"^ (?:events|tasks) .*  " + end_word, text, re.M):
            return values
        assert time.monotonic() < deadline, f"no end after {timeout} s:\n{text}\n{values}"
        time.sleep(0.2)


@pytest.mark.parametrize("cols,rows", SIZES)
def test_eta_from_expected_events_falls(screen, with_expected, cols, rows):
    s = screen(replay(with_expected, 24), cols=cols, rows=rows)
    s.wait_for(re.compile(r"ETA " + DURATION), timeout=60)
    values = etas_until_the_end(s, EVENTS_ROW, "completed")
    print(f"{cols}x{rows} ETA (s) as the replay went: {values}")
    assert len(values) >= 2, values
    assert min(values[1:]) < values[0], values
    text = s.wait_still("(end reached", timeout=120)  # the last frame, drawn whole
    m = re.search(r"^ events ([\d,]+) of ([\d,]+) .* 100\.0%  completed", text, re.M)
    assert m and m.group(1) == m.group(2), text
    s.keys("q")
    s.wait_for("roastop-exit=0", timeout=60)
    metrics = load_metrics(s.out)
    assert metrics["progress_source"] == "events"
    assert metrics["progress_fraction"] == pytest.approx(1.0)
    assert "eta_seconds" not in metrics  # the run ended: nothing left to estimate


@pytest.mark.parametrize("cols,rows", SIZES)
def test_eta_from_tasks_without_expected_events(screen, with_tasks, cols, rows):
    s = screen(replay(with_tasks, 24), cols=cols, rows=rows)
    text = s.wait_for(re.compile(r"ETA " + DURATION + r" \(from tasks\)"), timeout=60)
    assert "events" not in text.splitlines()[4].split(" · ")[0]  # the tasks lead the row
    values = etas_until_the_end(s, TASKS_ROW, "completed")
    print(f"{cols}x{rows} ETA from tasks (s) as the replay went: {values}")
    assert len(values) >= 2, values
    assert min(values[1:]) < values[0], values
    if cols >= 200:
        text = s.wait_still("(end reached", timeout=120)  # the last frame, drawn whole
        assert re.search(r"· chunks \d+ done, \d+ failed · events [\d,]+ · executing (?:\d+|n/a)$",
                         text, re.M), text
    s.keys("q")
    s.wait_for("roastop-exit=0", timeout=60)
    metrics = load_metrics(s.out)
    assert metrics["progress_source"] == "tasks"
    assert 0.9 < metrics["progress_fraction"] <= 1  # the last poll may precede the last chunk
    assert "expected_events" not in metrics
