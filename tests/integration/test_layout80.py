"""80x24 first (issue 19, item 5): every view at 80x24 and 200x60 shows its
labels whole, the emitter line can be copied whole, each view keeps its own
filter, the datasets view keeps FAILED at 80 columns, and Enter on a worker
shows its history. The real binary in a tmux pane, as in test_screen.py."""
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest

from conftest import generate
from test_screen import BRAILLE, screen  # noqa: F401 - the fixture, used by name

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")

SIZES = [(80, 24), (200, 60)]

# Labels each view shows at 80 columns (and so at 200); then those only a
# wide screen has room for (dropped at 80 in the documented order).
# The tabs whole at 80 columns on view 1 (the names from the left while they
# fit, the rest their key alone: docs/dashboard.md, "The view bar"); at 200
# every one.
TABS = ["1 Main", "2 Workers", "3 Datasets", "4 Slowest", "5 Sections", "6 Files", "7 Log",
        "8 Runs"]
TABS_WIDE = ["9 Running", "f Findings"]
FOOTER = ["q quit", "p pause", "/ filter", "e write", "? help"]
LABELS = {
    "1": (TABS + FOOTER + ["Dask", "replay", "run", "elapsed", "events", "of", "workers", "peak", "CPU", "mean", "tasks", "runtime", "p50",
                           "running", "fine", "processor", "overhead", "disk read", "write", "log scale"],
          TABS_WIDE + ["chunks", "done", "failed", "chunk runtime", "events per chunk", "fine metrics", "compression", "serialization",
           "memory", "time-average", "tasks executing", "event rate", "core efficiency",
           "chunks/s"]),
    "2": (["workers:", "present", "seen", "sorted by memory (s)", "WORKER", "STATUS", "MEMORY",
           "MEM%", "CPU%", "EXEC"], ["THR", "LIMIT", "PROC", "SPILLED", "/ filters"]),
    "3": (["datasets:", "DATASET", "CHUNKS", "FAILED", "EVENTS", "RATE", "SHARE"], ["MEAN", "P99"]),
    "4": (["slowest chunks", "DURATION", "FILE", "ENTRIES", "EVENTS", "WORKER"], ["DATASET"]),
    "5": (["sections", "KIND", "SECTION", "TOTAL", "MEAN", "MAX"], ["CHUNKS"]),
    "6": (["files:", "FILE", "DATASET", "CHUNKS", "COMPR", "BRANCH%", "BYTES%"],
          ["EVENTS", "compression ratio, branches and bytes read"]),
    "7": (["event log", "TIME", "KIND", "EVENT"], ["newest first"]),
    "8": (["runs:", "#", "NAME", "DURATION", "STATUS", "CHUNKS", "EVENTS", "RATE"], ["START"]),
    "9": (["chunks running", "AGE", "WORKER", "FILE", "ENTRIES"], ["DATASET"]),
    "?": (["roastop help", "Esc closes", "quit: write the measurement",
           "write the emitter line to a file", "filter workers or files by name"], []),
}
HISTORY = ["worker", "Esc: back", "memory", "peak", "limit", "CPU", "executing", "threads"]
# what may stand either side of a whole label: spaces, borders, punctuation
EDGE_L, EDGE_R = r"(?:^|(?<=[\s│─╭╮╰(·:]))", r"(?=$|[\s│─╮╯),:·])"


def whole(label, text):
    return re.search(EDGE_L + re.escape(label) + EDGE_R, text, re.M) is not None


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A finished 12-worker run: 3 datasets, some failures, sections."""
    d = tmp_path_factory.mktemp("layout80")
    rec = d / "run.jsonl"
    generate(rec, d / "truth.json", chunks=1200, workers=12, hours=0.1, sample_interval=2,
             datasets=3, files=24, fail_every=150, seed=11)
    return rec


def poll(s, check, timeout=60.0):
    """Waits until check(screen) returns None (else it says what is wrong)."""
    deadline = time.monotonic() + timeout
    while True:
        text = s.text()
        err = check(text)
        if err is None:
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"{err}\n{text}")
        time.sleep(0.2)


def footer_cut(text):
    """None when the footer is one of the hint lines, ending where it
    should; else what is wrong."""
    last = text.splitlines()[-1].rstrip()
    whole_ = last.startswith(" q quit") and re.search(r"(\? help|emitter line)$", last)
    return None if whole_ else f"footer not whole: {last!r}"


def footer_whole(text):
    assert footer_cut(text) is None, footer_cut(text)


def labels_whole(labels):
    """A poll check: every label whole and the footer whole, on one capture
    (the footer is drawn last: a frame read half drawn has the old one's)."""
    def check(text):
        cut = [label for label in labels if not whole(label, text)]
        return f"not shown whole: {cut}" if cut else footer_cut(text)
    return check


def first_worker(text):
    rows = [line.split() for line in text.splitlines()[3:-1] if line.strip()]
    return next(r[0] for r in rows if r and r[0].startswith("worker-"))


@pytest.mark.parametrize("cols,rows", SIZES)
def test_every_view_shows_its_labels_whole(screen, recording, cols, rows):
    s = screen(["--replay", recording, "--speed", "0"], cols=cols, rows=rows)
    s.wait_for("end reached")
    s.wait_for(BRAILLE)
    for key, (always, wide) in LABELS.items():
        s.keys(key)
        s.wait_for(always[0])
        labels = always + FOOTER + (wide if cols >= 200 else [])
        text = poll(s, labels_whole(labels))  # labels and footer on one capture
        assert len(text.splitlines()) == rows and all(len(x) <= cols for x in text.splitlines())
        footer_whole(text)
        if key == "?":
            s.keys("Escape")
    # the worker history: Enter on the first row, named in its header
    s.keys("2")
    # view 2 itself (view 9 has a WORKER column too), its rows drawn whole:
    # the replay has ended, the frame that stayed the same is the whole one
    text = s.wait_still(["workers:", "STATUS"])
    name = first_worker(text)
    s.keys("Home", "Enter")
    s.wait_for(re.compile(rf"worker {re.escape(name)}  (running|gone)  over"))
    labels = labels_whole(HISTORY + FOOTER)
    # the labels, the footer and its graphs (drawn below the header) on one capture
    text = poll(s, lambda t: labels(t) or (None if BRAILLE.search(t) else "no graph drawn"))
    assert BRAILLE.search(text)  # its graphs drawn
    s.keys("Escape")
    s.wait_for("STATUS")


def test_header_shortens_the_output_path_not_cut(screen, recording, tmp_path):
    out = tmp_path / "build" / "demo-measurements-with-a-long-name"
    out.parent.mkdir()
    s = screen(["--replay", recording, "--speed", "0"], cols=80, rows=24, out=out)
    header = s.wait_still("end reached").splitlines()[2:4]  # the last frame, whole
    for line in header:
        m = re.search(r"· out (\S+)", line)
        if m:  # whole, or its last component
            assert m.group(1) in (str(out), "…/" + out.name), line
    s.resize(200, 60)
    text = s.wait_for(f"out {out}")
    assert f"out {out}" in text.splitlines()[3]  # under the findings line and the sources'


def test_datasets_keep_failed_at_80_columns(screen, recording):
    s = screen(["--replay", recording, "--speed", "0"], cols=80, rows=24)
    s.wait_for("end reached")
    s.keys("3")
    s.wait_for("FAILED")

    def failed_counts(text):
        head = next((line for line in text.splitlines() if "DATASET" in line), None)
        if head is None or "FAILED" not in head:
            return "no header line with FAILED"
        col = head.index("FAILED") + len("FAILED")  # right-aligned under it
        rows = [line for line in text.splitlines()[3:6] if line.rstrip().endswith("%")]
        counts = [line[:col].split()[-1] for line in rows]
        if len(counts) < 3 or not all(re.fullmatch(r"\d+", c) for c in counts):
            return f"no count under FAILED in each row: {counts}"
        # fail_every: some chunks failed
        return None if sum(int(c) for c in counts) > 0 else "no failure counted"

    poll(s, failed_counts)


def test_each_view_keeps_its_own_filter(screen, recording):
    s = screen(["--replay", recording, "--speed", "0"], cols=80, rows=24)
    s.wait_for("end reached")
    def workers_shown(text):
        names = {line.split()[0] for line in text.splitlines()[3:-1] if line.strip()}
        return None if names == {"worker-1", "worker-10", "worker-11"} else f"workers {names}"

    def files_shown(text):
        files = [line for line in text.splitlines()[3:-1] if line.strip()]
        ok = len(files) == 3 and all("nano_0003" in line for line in files)
        return None if ok else f"files {files}"

    s.keys("2", "/", "worker-1", "Enter")
    s.wait_for("filter 'worker-1'")
    poll(s, workers_shown)
    s.keys("6", "/", "nano_0003", "Enter")
    s.wait_for("filter 'nano_0003'")
    poll(s, files_shown)
    s.keys("2")  # typing in Files left the Workers filter as it was
    s.wait_for("filter 'worker-1'")
    poll(s, workers_shown)
    s.keys("/", "Escape")  # and clearing it leaves the Files one
    s.wait_for("/ filters")
    s.keys("6")
    s.wait_for("filter 'nano_0003'")


def export_screen(screen, cols, rows):
    # a key path that makes the line wider than 80 columns, each variable narrower
    keydir = Path(tempfile.mkdtemp(prefix="rk-layout80-export-", dir="/tmp"))
    key = keydir / "key"
    s = screen(["--listen", "127.0.0.1:0", "--key-file", key], cols=cols, rows=rows)
    text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:(\d+) rx"), timeout=30)
    port = re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1)
    return s, key, port


@pytest.mark.parametrize("cols,rows", SIZES)
def test_export_line_whole_and_written(screen, cols, rows):
    s, key, port = export_screen(screen, cols, rows)
    try:
        addr = f"export ROASTOP_ADDR=127.0.0.1:{port}"
        keypart = f"ROASTOP_KEY=$(cat {key})"
        # at 200 columns the line itself, alone on its row from the first
        # column; at 80 broken only between the variables, each a command on
        # a row of its own
        want = [f"{addr} {keypart}"] if cols >= 200 else [addr, f"export {keypart}"]

        def export_rows(text):
            rows_ = text.splitlines()
            at = [i for i, row in enumerate(rows_) if row == want[0]]
            ok = at and rows_[at[0]:at[0] + len(want)] == want
            return None if ok else f"no rows {want}"

        s.keys("?")
        s.wait_for("for the emitters")
        poll(s, export_rows)
        s.keys("w")
        env = Path(f"{key}.env")
        s.wait_footer(f"emitter line written to {env}")
        assert env.read_text() == f"{addr} {keypart}\n"
        assert stat.S_IMODE(env.stat().st_mode) == 0o600
        s.keys("Escape")
        # the footer's hint whole, on the capture that shows it
        hint = re.compile(r"\? (help, emitter line|for the emitter line)")
        text = poll(s, lambda t: footer_cut(t) if hint.search(t) else "no hint yet")
        footer_whole(text)
    finally:
        shutil.rmtree(key.parent, ignore_errors=True)


def test_footer_and_header_whole_when_live(screen):
    """Live at 80 columns: the footer's hint and the header's segments whole
    (a lost scheduler's state before its address)."""
    s = screen(["--listen", "127.0.0.1:0", "--no-auth", "--scheduler", "http://127.0.0.1:9"],
               cols=80, rows=24)
    lost = re.compile(r"scheduler lost since \d\d:\d\d:\d\d \([^)]*\)")
    hint = re.compile(r"\? (help, emitter line|for the emitter line)\s*$", re.M)
    s.wait_for([lost, hint], timeout=30)
    # live, a frame a second: a capture that stayed the same between two
    # frames is one drawn whole (line 1 is read, not half of it)
    text = s.wait_still([lost, hint], quiet=0.4)
    line1 = text.splitlines()[2].rstrip()  # the sources' line, under the findings line
    assert re.search(r"(\)|refused|Dask n/a)$", line1), line1
