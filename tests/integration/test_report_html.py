"""report.html in a real browser: the shipped demo recording (a real coffea
run) replayed headless writes report.html beside metrics.json; Debian's
headless Chromium renders it to a PNG with no console message, and the data
its SVGs and tables carry equals metrics.json. A copy of the demo with a
hostile dataset and file name renders the same way (escaped: the page's
Content-Security-Policy would log any script or load to the console)."""
import html.parser
import json
import math
import os
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from conftest import load_metrics, roastop, run_dir

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo-recording.jsonl"
HOSTILE = "<script>alert(1)</script>&\"'"
WIDTH, HEIGHT = 1280, 2000
# docs/metrics.md: the page's bound whatever the run
REPORT_MAX_BYTES = 2 * 1024 * 1024
# chromium on a loaded 2-core machine takes 30 s and more to start
CHROMIUM_DEADLINE = 240


def chromium_render(page: Path, png: Path, profile: Path):
    """Renders page to png; returns chromium's stderr log (console messages
    are logged there as INFO:CONSOLE lines with --enable-logging=stderr)."""
    exe = shutil.which("chromium")
    assert exe, "Debian's chromium is missing: scripts/deps.sh test installs it"
    args = [exe, "--headless=new", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--enable-logging=stderr", "--v=0",
            f"--user-data-dir={profile}", f"--screenshot={png}",
            f"--window-size={WIDTH},{HEIGHT}", page.resolve().as_uri()]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # chromium refuses root otherwise
    p = subprocess.run(args, capture_output=True, text=True, timeout=CHROMIUM_DEADLINE)
    # written by the browser process, maybe after the one waited for exits:
    # the file whole, to its IEND chunk, not its first bytes
    deadline = time.monotonic() + CHROMIUM_DEADLINE
    while not (png.exists() and png.read_bytes().endswith(b"IEND\xaeB`\x82")) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stderr


def console_lines(log: str):
    return [ln for ln in log.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


def png_pixels(png: Path):
    """Checks the PNG's structure (signature, chunk CRCs, IHDR) and inflates
    its image data; returns (width, height, raw scanlines)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert ihdr, "no IHDR"
    w, h, depth, color = ihdr[:4]
    channels = {2: 3, 6: 4, 0: 1, 4: 2}[color]
    raw = zlib.decompress(idat)
    assert len(raw) == h * (1 + w * channels * depth // 8)
    return w, h, raw


class Page(html.parser.HTMLParser):
    """Every element with its attributes, and the id of the <svg> it is in."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements, self.svg = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg = a.get("id")
        self.elements.append((tag, a, self.svg))

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None

    def find(self, tag=None, svg=None, **attrs):
        return [a for t, a, s in self.elements
                if (tag is None or t == tag) and (svg is None or s == svg)
                and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


def num(v):
    return None if v == "null" else float(v)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def replay(recording: Path, out: Path):
    p = roastop("--replay", recording, "--speed", 0, "--headless", "--output", out,
                timeout=180)
    assert p.returncode == 0, p.stderr
    d = run_dir(out)
    assert (d / "report.html").is_file(), sorted(x.name for x in d.iterdir())
    return d


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    d = replay(DEMO, tmp / "out")
    png = tmp / "report.png"
    log = chromium_render(d / "report.html", png, tmp / "profile")
    return d, load_metrics(tmp / "out"), parse(d / "report.html"), png, log


def test_detector_sees_console_errors(tmp_path):
    """The console check can fail: a page that throws is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><p>x</p><script>throw new Error('kaboom')</script>")
    log = chromium_render(bad, tmp_path / "bad.png", tmp_path / "profile")
    assert any("kaboom" in ln for ln in console_lines(log)), log[-3000:]


def test_renders_without_console_messages(demo):
    _, _, _, png, log = demo
    assert console_lines(log) == []
    w, h, raw = png_pixels(png)
    assert (w, h) == (WIDTH, HEIGHT)
    assert png.stat().st_size > 20_000  # charts and text, not a blank page
    assert len(set(raw)) > 32  # a blank page inflates to a handful of byte values


def test_self_contained_and_bounded(demo):
    d, _, page, _, _ = demo
    assert not page.find("script")
    assert not [a for _, a, _ in page.elements if "src" in a or "href" in a]
    assert (d / "report.html").stat().st_size < REPORT_MAX_BYTES


def test_headline_cards_equal_metrics_json(demo):
    _, m, page, _, _ = demo
    cards = page.find("div", **{"class": "card"})
    assert len(cards) >= 15
    for c in cards:
        assert same(num(c["data-value"]), m[c["data-key"]]), c
    assert page.find("span", id="run-status")[0]["data-status"] == m["run_status"]


def test_histogram_equals_metrics_json(demo):
    _, m, page, _, _ = demo
    (svg,) = page.find("svg", id="hist")
    assert int(svg["data-n"]) == m["num_successful_chunks"] > 0
    for q in ("p50", "p90", "p99"):
        assert same(num(svg[f"data-{q}"]), m[f"chunk_duration_{q}"])
        assert page.find("line", svg="hist", data_mark=q)
    bars = page.find("rect", svg="hist")
    assert len(bars) == int(svg["data-bins"])
    assert sum(int(b["data-count"]) for b in bars) == m["num_successful_chunks"]


def test_fine_breakdown_equals_metrics_json(demo):
    _, m, page, _, _ = demo
    (svg,) = page.find("svg", id="fine-bar")
    assert same(num(svg["data-processor-cpu-percent"]), m["processor_cpu_percent"])
    assert same(num(svg["data-processor-io-wait-percent"]), m["processor_io_wait_percent"])
    parts = page.find("rect", svg="fine-bar")
    assert {p["data-key"] for p in parts} == {
        "processor_cpu_time_seconds", "processor_io_wait_time_seconds",
        "overhead_cpu_time_seconds", "overhead_io_wait_time_seconds"}
    total = sum(m[p["data-key"]] for p in parts)
    for p in parts:
        assert same(num(p["data-seconds"]), m[p["data-key"]])
        assert math.isclose(float(p["data-share"]), 100 * m[p["data-key"]] / total, rel_tol=1e-9)


def test_datasets_equal_metrics_json(demo):
    _, m, page, _, _ = demo
    rows = {r["data-dataset"]: r for r in page.find("tr") if "data-dataset" in r}
    assert set(rows) == set(m["per_dataset"])
    for name, want in m["per_dataset"].items():
        r = rows[name]
        assert int(r["data-chunks"]) == want["num_chunks"]
        assert same(num(r["data-events"]), want["total_events"])
        assert same(num(r["data-total-duration"]), want["total_duration"])
        assert same(num(r["data-mean-duration"]), want["mean_duration"])


def test_timelines_equal_metrics_json(demo):
    _, m, page, _, _ = demo
    (workers,) = page.find("svg", id="tl-workers")
    assert same(num(workers["data-avg-workers"]), m["avg_workers"])
    (g,) = page.find("g", svg="tl-workers", data_series="workers")
    assert same(num(g["data-max"]), m["peak_workers"])
    # the samples inside the run's window, of all the scheduler's
    assert 0 < int(g["data-samples"]) <= m["roastop"]["scheduler_samples"]
    (threads,) = page.find("svg", id="tl-threads")
    assert same(num(threads["data-total-cores"]), m["total_cores"])
    for chart in ("workers", "threads", "memory", "cpu", "executing"):
        lines = page.find("polyline", svg=f"tl-{chart}")
        drawn = sum(len(ln["points"].split()) for ln in lines)
        points = sum(int(s["data-points"]) for s in page.find("g", svg=f"tl-{chart}"))
        assert 0 < drawn == points <= 2 * 2048, chart  # RUN_TIMELINE_POINTS per line
    assert len(page.find("g", svg="tl-memory")) == 2  # used and limit


def test_hostile_names_render_escaped(tmp_path):
    """The demo with its first dataset and its files renamed to the hostile
    string: the page shows the names as text, runs nothing, loads nothing."""
    lines = []
    for line in DEMO.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("type") == "run_start":
            ev["datasets"] = [HOSTILE if x == "DYJetsToLL" else x for x in ev["datasets"]]
        if ev.get("dataset") == "DYJetsToLL":
            ev["dataset"] = HOSTILE
            ev["file"] = HOSTILE + ev["file"]
            ev.pop("file_metadata", None)
        lines.append(json.dumps(ev))
    rec = tmp_path / "hostile.jsonl"
    rec.write_text("\n".join(lines) + "\n")
    d = replay(rec, tmp_path / "out")
    text = (d / "report.html").read_text()
    assert "<script" not in text
    page = parse(d / "report.html")
    assert not page.find("script")
    assert page.find("tr", data_dataset=HOSTILE)
    log = chromium_render(d / "report.html", tmp_path / "h.png", tmp_path / "profile")
    assert console_lines(log) == []
    png_pixels(tmp_path / "h.png")


def test_failures_gaps_and_caps_in_the_browser(tmp_path):
    """A generated run with failed chunks, more files than a table shows,
    and the scheduler lost for a while: the failed chunks, the "N more"
    line and the broken timelines are on the page as metrics.json has them,
    and it renders as cleanly."""
    from conftest import generate
    rec = tmp_path / "gen.jsonl"
    generate(rec, tmp_path / "truth.json", chunks=600, workers=4, hours=0.1,
             sample_interval=2, datasets=3, files=80, fail_every=40, seed=7)
    lines = rec.read_text().splitlines()
    times = [json.loads(ln).get("t") for ln in lines]
    mid = len(lines) // 2
    t_lost = next(t for t in times[mid:] if t is not None)
    t_back = next(t for t in times[mid + len(lines) // 10:] if t is not None)
    status = {"type": "status", "source": "scheduler", "reason": "test"}
    lost = json.dumps({**status, "t": t_lost, "state": "lost"})
    back = json.dumps({**status, "t": t_back, "state": "connected"})
    lines.insert(mid + len(lines) // 10, back)
    lines.insert(mid, lost)
    rec.write_text("\n".join(lines) + "\n")
    d = replay(rec, tmp_path / "out")
    m = load_metrics(tmp_path / "out")
    page = parse(d / "report.html")
    assert m["num_failed_chunks"] > 0
    (p,) = [a for _, a, _ in page.elements if "data-failed" in a and "data-dataset" not in a]
    assert int(p["data-failed"]) == m["num_failed_chunks"]
    failed = page.find("tr", svg=None)
    by_type = [int(r["data-chunks"]) for r in failed if "data-chunks" in r
               and "data-dataset" not in r and "data-events" not in r]
    assert sum(by_type) == sum(m["roastop"]["chunk_errors"].values()) == m["num_failed_chunks"]
    # the failed chunks themselves, the latest first, as the recording has them
    fc = m["roastop"]["failed_chunks"]
    assert fc["count"] == m["num_failed_chunks"] == len(fc["latest"])  # fewer than 32
    failed_recs = [ev for ev in map(json.loads, lines) if ev.get("type") == "chunk"
                   and ev.get("error")]
    assert [(c["file"], c["entry_start"], c["error"]) for c in fc["latest"]] == [
        (ev["file"], ev["entry_start"], ev["error"]) for ev in reversed(failed_recs)]
    text = (d / "report.html").read_text(encoding="utf-8")
    table = text[text.index('<table class="failed-chunks">'):]
    body = table[table.index("<tbody>"):table.index("</tbody>")]
    assert body.count("<tr>") == fc["count"]
    assert all(f"<td>{html.escape(c['file'])}</td>" in body for c in fc["latest"])
    files = [r["data-file"] for r in page.find("tr") if "data-file" in r]
    assert len(files) == 50  # REPORT_HTML_MAX_ROWS
    in_recording = {ev["file"] for ev in map(json.loads, lines)
                    if ev.get("type") == "chunk" and "file" in ev}
    assert set(files) < in_recording
    more = [int(a["data-more"]) for _, a, _ in page.elements if "data-more" in a]
    assert more == [len(in_recording) - 50]
    assert m["roastop"]["scheduler_gaps"] >= 1
    (g,) = page.find("g", svg="tl-workers", data_series="workers")
    assert int(g["data-gaps"]) >= 1
    assert page.find("rect", svg="tl-workers", **{"class": "gap"})
    assert len(page.find("polyline", svg="tl-workers")) == int(g["data-gaps"]) + 1
    log = chromium_render(d / "report.html", tmp_path / "g.png", tmp_path / "profile")
    assert console_lines(log) == []
    png_pixels(tmp_path / "g.png")
