"""The main view's axes as a person reads them (issue 19, items 5 and 6): the
chunk-runtime histogram's x-axis is logarithmic and says so, its ends are
the real shortest and longest chunk (in ms under a second, never "0.0s"),
its panel title is whole; the memory panel's y-axis follows the memory
used, not the cluster's limit. The real roastop binary in a tmux pane (the
Screen of test_screen.py) replaying a generated recording."""
import json
import re

import pytest

from conftest import generate
from test_screen import BRAILLE, pytestmark, replay, screen  # noqa: F401 (tmux or skip; the fixture)

SIZES = [(80, 24), (200, 60)]
DURATION = re.compile(r"^(<=|≤)?(\d+(\.\d+)? ms|\d+\.\ds|\d+m \d+s)$")
LIMIT_FACTOR = 20  # the limit this many times the generator's: memory far under it


def fmt_duration(s):
    """format_duration (src/util/format.c) for the durations used here."""
    assert 1e-5 <= s < 59.95
    if s < 0.9995:
        ms = s * 1000
        return f"{ms:.{0 if ms >= 99.95 else (1 if ms >= 9.995 else 2)}f} ms"
    return f"{s:.1f}s"


@pytest.fixture(scope="module")
def short_chunks(tmp_path_factory):
    """The screen tests' recording with chunks 10 times shorter (about 0.1 to
    0.9 s, so the axis ends read in ms) and each worker's memory limit
    LIMIT_FACTOR times larger (80 GB for 1 to 2.7 GB used). Returns the
    recording, the shortest and longest successful chunk and the peak of the
    cluster's memory used."""
    d = tmp_path_factory.mktemp("histaxis")
    src, rec = d / "gen.jsonl", d / "run.jsonl"
    generate(src, d / "truth.json", chunks=2000, workers=12, hours=0.25, sample_interval=2,
             datasets=3, files=30, fail_every=250, seed=3)
    durations, peak_used = [], 0
    with open(src) as lines, open(rec, "w") as out:
        for line in lines:
            msg = json.loads(line)
            if msg.get("type") == "chunk" and "duration" in msg:
                msg["duration"] /= 10
                if not msg.get("error"):
                    durations.append(msg["duration"])
            if msg.get("type") == "sample" and msg.get("workers"):
                for w in msg["workers"]:
                    w["memory_limit"] *= LIMIT_FACTOR
                peak_used = max(peak_used, sum(w["memory_bytes"] for w in msg["workers"]))
            out.write(json.dumps(msg, separators=(",", ":")) + "\n")
    assert durations and peak_used > 0
    return rec, min(durations), max(durations), peak_used


def box_rows(text, title):
    """The rows of the box whose top border holds title, each cut to the
    box's inside: from the corner at its left to the next corner or side."""
    lines = text.splitlines()
    for y, line in enumerate(lines):
        x = line.find("╭─ " + title)
        if x < 0:
            continue
        right = line.index("╮", x)
        rows = []
        for below in lines[y + 1:]:
            rows.append(below[x + 1:right])
            if below[x] == "╰":
                return line[x:right + 1], rows
    raise AssertionError(f"no box titled {title!r}:\n{text}")


def runtime_axis(text, cols):
    """The histogram's title and axis labels (split at runs of two spaces or
    more), read off a whole frame."""
    assert re.search(r"╰─ log scale ─", text), text
    top, rows = box_rows(text, "chunk runtime" if cols >= 200 else "runtime")
    assert rows[-1].startswith("─ log scale ─"), rows[-1]
    labels = [t for t in re.split(r" {2,}", rows[-2].strip()) if t]
    return top, labels


@pytest.mark.parametrize("cols,rows", SIZES)
def test_runtime_axis_is_log_with_real_ends(screen, short_chunks, cols, rows):
    rec, shortest, longest, _ = short_chunks
    s = screen(replay(rec, 600), cols=cols, rows=rows)
    # every chunk in, the range final: the last frame, drawn whole (the header
    # says the end before the histogram below it is redrawn)
    text = s.wait_still("(end reached", timeout=120)
    top, labels = runtime_axis(text, cols)
    assert labels[0] == fmt_duration(shortest), labels
    assert labels[-1] == fmt_duration(longest), labels
    assert labels[0].endswith(" ms") and labels[-1].endswith(" ms"), labels  # all under 1 s
    assert len(labels) >= 3, labels  # a middle tick, even at 80 columns
    for label in labels:
        assert DURATION.match(label), labels
        assert label not in ("0.0s", "0.00 ms", "0s"), labels
    # the ticks run left to right: a log axis of increasing values
    values = [float(label.split()[0]) for label in labels]
    assert values == sorted(values) and len(set(values)) == len(values), labels
    # the title is whole: it ends in a value, then the border
    title = re.match(r"╭─ (.*?) ─+╮$", top).group(1)
    assert re.search(r"(max|p\d\d) \d+(\.\d+)? ms$", title), top
    if cols >= 200:
        assert title.startswith("chunk runtime  p50 ") and " p90 " in title, top
    # the markers stay
    assert "▲p50" in text


@pytest.mark.parametrize("cols,rows", SIZES)
def test_memory_axis_follows_the_memory_used(screen, short_chunks, cols, rows):
    rec, _, _, peak_used = short_chunks
    s = screen(replay(rec, 600), cols=cols, rows=rows)
    text = s.wait_still("(end reached", timeout=120)  # the last frame, drawn whole
    top, box = box_rows(text, "mem")
    scale = re.match(r"\s*(\d+(\.\d+)?) (B|KiB|MiB|GiB|TiB)", box[0])
    assert scale, box[0]
    unit = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[scale.group(3)]
    vmax = float(scale.group(1)) * unit
    assert peak_used <= vmax <= 2 * peak_used, (vmax, peak_used, top)
    # the limit, far above the axis, is still said: in the title and on the panel
    assert re.search(r"(of|/)\s*\d+(\.\d+)? (GiB|TiB)", top), top
    assert any("limit" in row for row in box), box
    assert BRAILLE.search("".join(box))
