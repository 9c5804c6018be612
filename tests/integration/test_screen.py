"""The dashboard as a person sees it: the real roastop binary in a real
terminal (a tmux pane) replaying a generated recording; keys are sent with
tmux send-keys and the screen is read back with capture-pane."""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import (REPO_ROOT, ROASTOP, TOOLS, generate, load_metrics, run_dir, run_dirs,
                      v2_body)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")

BRAILLE = re.compile("[\u2801-\u28ff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")
# an SGR sequence that sets a foreground or background colour
COLOUR_SGR = re.compile(r"\x1b\[[0-9;]*?(?:[34]8;[25];|(?<![0-9])[34][0-7](?:;|m))")


class Screen:
    """One tmux server (own socket) with one pane running roastop."""

    count = 0

    def __init__(self, tmp: Path, args, cols=80, rows=24, env=None, out=None):
        Screen.count += 1
        self.sock = f"roastop-test-{os.getpid()}-{Screen.count}"
        self.tmp = tmp
        self.out = out or tmp / "out"
        self.cols = cols
        conf = tmp / "tmux.conf"
        conf.write_text('set -g default-terminal "tmux-256color"\nset -g status off\n')
        full_env = {"LANG": "C.UTF-8", "LC_ALL": "", "NO_COLOR": "", "XDG_CONFIG_HOME": str(tmp)}
        full_env.update(env or {})
        cmd = " ".join(shlex.quote(str(a)) for a in [ROASTOP, *args, "--output", self.out])
        # set in the pane's shell, after tmux set TERM; "" means unset
        env_sh = " ".join(f"unset {k};" if v == "" else f"export {k}={shlex.quote(v)};"
                          for k, v in full_env.items())
        script = f"{env_sh} {cmd}; echo \"roastop-exit=$?\"; sleep 120"
        argv = ["tmux", "-L", self.sock, "-f", str(conf), "new-session", "-d",
                "-x", str(cols), "-y", str(rows)]
        subprocess.run(argv + ["sh", "-c", script], check=True)

    def tmux(self, *args, capture=False):
        return subprocess.run(["tmux", "-L", self.sock, *args], check=True, text=True,
                              capture_output=capture).stdout

    def text(self, escapes=False):
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), capture=True)

    def joined(self):
        """The screen with wrapped lines joined (long messages after exit)."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", capture=True).replace("\n", "")

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def wait_for(self, pattern, timeout=30.0, escapes=False):
        """Waits until one capture of the screen holds the whole state the
        test then reads, never part of it: a frame can be read half drawn
        (the top of the new one over the bottom of the old), so what a test
        parses must be what it waited for. pattern: a str (a substring), a
        compiled regex, a list or tuple of those (all on the one capture), or
        a callable that takes the capture and returns a truthy value once
        the state is there whole (a row parsed to its end, a match spanning
        what is read). Returns the capture, or what the callable returned."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text(escapes)
            found = _found(pattern, screen)
            if found:
                return found if callable(pattern) else screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{_name(pattern)} not on screen:\n{screen}")
            time.sleep(0.2)

    def wait_still(self, pattern, timeout=60.0, quiet=1.0, escapes=False):
        """For a screen that has stopped changing (a replay at its end, a
        paused display): waits for pattern (as wait_for), then until the
        screen has stayed the same for `quiet` seconds, and returns that
        capture: the last frame, drawn whole, every part of it readable."""
        deadline = time.monotonic() + timeout
        last, since = None, 0.0
        while True:
            screen = self.text(escapes)
            now = time.monotonic()
            if screen != last:
                last, since = screen, now
            elif now - since >= quiet and _found(pattern, screen):
                return screen
            if now > deadline:
                raise AssertionError(f"{_name(pattern)} not on a screen that stayed the same "
                                     f"for {quiet} s:\n{screen}")
            time.sleep(0.1)

    def stays_without(self, needle, seconds):
        """Asserts needle is on no capture for `seconds` (what must not
        appear: looked at all along, not once after a sleep)."""
        end = time.monotonic() + seconds
        while True:
            screen = self.text()
            assert needle not in screen, screen
            if time.monotonic() > end:
                return screen
            time.sleep(0.1)

    def wait_footer(self, *needles, timeout=30.0):
        """Waits for the needles, all of them, in the footer message, which
        may span the last lines (give every part of it that is read: one
        capture may hold its start and not yet its end).

        The message is cut into rows of cols - 2 characters after the last
        space that fits (where the width falls in a long word), and
        capture-pane drops trailing spaces; a space that falls just past the
        width is not drawn at all. The rows are joined, and both sides are
        compared without their whitespace: where the rows break (the tmp
        path's length decides) is no part of what is looked for."""
        deadline = time.monotonic() + timeout
        wants = ["".join(needle.split()) for needle in needles]
        while True:
            lines = self.text().splitlines()[-4:]
            w = self.cols - 2
            footer = " ".join("".join(line[1:1 + w].ljust(w) for line in lines).split())
            if all(want in "".join(footer.split()) for want in wants):
                return footer
            if time.monotonic() > deadline:
                raise AssertionError(f"{needles!r} not in the footer:\n" + "\n".join(lines))
            time.sleep(0.2)

    def resize(self, cols, rows):
        self.cols = cols
        self.tmux("resize-window", "-x", str(cols), "-y", str(rows))

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def until(cond, what, timeout=60.0):
    """Waits until cond() is truthy (a file written, a count reached)."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _found(pattern, screen):
    """What wait_for looks for in one capture: see Screen.wait_for."""
    if isinstance(pattern, (list, tuple)):
        return all(_found(p, screen) for p in pattern)
    if callable(pattern):
        return pattern(screen)
    return pattern.search(screen) if hasattr(pattern, "search") else pattern in screen


def _name(pattern):
    if callable(pattern):
        return (pattern.__doc__ or getattr(pattern, "__name__", repr(pattern))).strip()
    return repr(pattern)


# A duration as format_duration writes it; a partial one (half drawn) never
# matches: it ends in its unit
DURATION = r"(?:\d+h )?(?:\d+m )?\d+(?:\.\d+)?(?: ms|s)"
# The task view's tab, offered once the stream connected: its key, named or
# not (at 80 columns the names from the left take the room: docs/dashboard.md,
# "The view bar"), then the findings' tab
TASKS_TAB = re.compile(r" 0(?: Tasks)? f(?: |$)", re.M)


def seconds(text):
    """'1h 2m 3s', '4m 12s', '59.3s', '850 ms' -> seconds."""
    if text.endswith(" ms"):
        return float(text[:-3]) / 1000
    return sum(float(p[:-1]) * {"h": 3600, "m": 60, "s": 1}[p[-1]] for p in text.split())


def events_done(text):
    """The main view's count of events done ("events N of M"), read whole
    (the " of" after it), or None."""
    m = re.search(r"\bevents ([\d,]+) of ", text)
    return int(m.group(1).replace(",", "")) if m else None


def elapsed_shown(text):
    """The header's elapsed time in seconds, read whole (the separator
    after it), or None."""
    m = re.search(r"\belapsed (" + DURATION + r") ·", text)
    return seconds(m.group(1)) if m else None


@pytest.fixture(scope="module")
def recording():
    """15 minutes of a 12-worker run, 2,000 chunks, 3 datasets, some failures;
    in a directory of its own with a short path: the main view's header
    shows it whole at 80 columns, wherever pytest's base directory is (a
    worker's of pytest-xdist, /tmp/pytest-of-USER/pytest-N/popen-gwK, is too
    long for it, and the header shows the path's last component instead)."""
    d = Path(tempfile.mkdtemp(prefix="roastop-screen-", dir="/tmp"))
    try:
        rec = d / "run.jsonl"
        generate(rec, d / "truth.json", chunks=2000, workers=12, hours=0.25, sample_interval=2,
                 datasets=3, files=30, fail_every=250, seed=3)
        yield rec
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def many_workers(tmp_path_factory):
    """A short run of 40 workers: more rows than a small screen holds."""
    d = tmp_path_factory.mktemp("many")
    rec = d / "run.jsonl"
    generate(rec, d / "truth.json", chunks=400, workers=40, hours=0.05, sample_interval=2,
             datasets=2, files=10, seed=5)
    return rec


@pytest.fixture
def screen(tmp_path):
    made = []

    def start(args, **kw):
        s = Screen(tmp_path, args, **kw)
        made.append(s)
        return s

    yield start
    for s in made:
        s.close()


def replay(rec, speed=60, *extra):
    return ["--replay", rec, "--speed", speed, *extra]


EVENTS_OF = re.compile(r"events [\d,]+ of [\d,]+ \[")
RATES = re.compile(r"\b\d[\d.]* [kMG]?Hz · \d[\d.]* [kMG]?bps \(\d[\d.]* [kMG]?B/s\) · "
                   r"\d[\d.]* [kMG]?Hz/core")
MEM = re.compile(r"mem \d[\d.]* [KMGT]iB/\d[\d.]* [KMGT]iB")


def test_main_view_at_80x24(screen, recording):
    # at speed 10 the run goes on for 90 s: the state waited for below (a
    # running run's ETA and progress bar) cannot end before a loaded
    # machine's capture catches it, as at speed 60 (15 s) it once did
    s = screen(replay(recording, 10))
    s.wait_for(BRAILLE)
    # once the span's fine metrics arrived: the panel and every other part
    # read below on the one capture (the bars are drawn after the panel's
    # title, the rows below it after the header)
    text = s.wait_for(["fine (span)", "processor [", "overhead  [", "events/chunk", "ETA",
                       "runtime p50", EVENTS_OF, RATES, MEM, "Dask 2026.7.0",
                       f"replay {recording}", "generated dimuon run (DimuonProcessor)",
                       re.compile(r"^ q quit", re.M)])
    lines = text.splitlines()
    assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
    assert "1 Main" in lines[0] and "7 Log" in lines[0]
    assert f"replay {recording}" in text
    assert "Dask 2026.7.0" in text
    assert "generated dimuon run (DimuonProcessor)" in text
    assert EVENTS_OF.search(text)  # progress against the expected total
    assert "ETA" in text
    # rates in decimal units with a prefix that fits, three significant digits;
    # sizes in IEC units (issue 18, item 8)
    assert RATES.search(text), text
    assert MEM.search(text), text
    for old in (" KB", " MB", " GB"):  # decimal names are for rates only
        assert old not in text.replace(" MB/s", ""), old
    assert not re.search(r"\d\.\d{3}", text), text  # no "55.0662 kHz/core"
    for title in ("workers ", "mem ", "CPU ", "tasks ", "runtime p50", "fine (span)"):
        assert title in text, title
    assert "processor [" in text and "overhead  [" in text
    assert "events/chunk" in text
    assert "q quit" in lines[-1]


def test_every_view_and_tab(screen, recording):
    s = screen(replay(recording))
    s.wait_for(BRAILLE)
    views = {"2": "WORKER", "3": "DATASET", "4": "slowest chunks", "5": "track_time",
             "6": "files:", "7": "event log", "8": "runs: 1"}
    for key, marker in views.items():
        s.keys(key)
        text = s.wait_for(marker)
        assert "q quit" in text.splitlines()[-1]
    s.keys("7")
    text = s.wait_for("run started")  # the log shows what the run did
    s.keys("8")
    s.keys("Tab")  # from the run list to the chunks running, the findings, round to the main view
    s.wait_for("chunks running: n/a")  # the recording has no chunk starts
    s.keys("Tab")  # no task stream: no task view between them
    s.wait_for("findings: ")
    s.keys("Tab")
    s.wait_for("runtime p50")
    s.keys("Tab")
    s.wait_for("WORKER")
    s.keys("BTab")
    s.wait_for("runtime p50")
    s.keys("3")
    # every dataset's row on one capture: the rows are drawn one after another
    text = s.wait_for(["DYJetsToLL_M-50", "TTToSemiLeptonic", "SingleMuon_Run2018A"])
    for ds in ("TTToSemiLeptonic", "SingleMuon_Run2018A"):
        assert ds in text


def test_every_view_at_200x60(screen, recording):
    s = screen(replay(recording), cols=200, rows=60)
    s.wait_for("events per chunk")
    for key, marker in {"2": "SPILLED", "3": "SHARE", "4": "ENTRIES", "5": "track_memory",
                        "6": "BRANCH%", "7": "worker joined"}.items():
        s.keys(key)
        text = s.wait_for(marker)
        lines = text.splitlines()
        assert len(lines) == 60 and "q quit" in lines[-1], key


def test_workers_sort_filter_and_scroll(screen, many_workers):
    s = screen(replay(many_workers, 20), rows=20, cols=100)
    s.wait_for(BRAILLE)
    # the rows read below are the table's every row, each frame drawn whole:
    # at the replay's end the screen stops changing, so each read waits for
    # a screen that stayed the same (a re-sorted or filtered frame read half
    # drawn has the old frame's rows under the new ones)
    s.wait_for("end reached", timeout=60)
    s.keys("2")
    s.wait_for("40 seen")  # every worker has joined
    s.wait_for("sorted by memory (s)")
    s.keys("s")
    s.wait_for("sorted by memory %")
    s.keys("s", "s", "s")
    text = s.wait_still("sorted by name")
    rows = [line.split()[0] for line in text.splitlines()[3:-1] if line.strip()]
    present = [r for r in rows if r.startswith("worker-")]
    assert present == sorted(present) or len(present) < 2
    s.keys("/", "worker-1", "Enter")
    text = s.wait_still("filter 'worker-1'")
    names = {line.split()[0] for line in text.splitlines()[3:-1] if line.strip()}
    assert names and names <= {"worker-1"} | {f"worker-1{i}" for i in range(10)}, names
    assert "worker-1" in names and len(names) > 2
    s.keys("/", "Escape")
    text = s.wait_still("/ filters")
    assert "1-16 of 40" in text
    s.keys("End")
    s.wait_for("25-40 of 40")  # the list scrolled to its end
    s.keys("PPage")
    s.wait_for("10-25 of 40")
    s.keys("Home")
    s.wait_for("1-16 of 40")


def test_resize_and_too_small(screen, recording):
    s = screen(replay(recording), cols=80, rows=24)
    s.wait_for(BRAILLE)
    s.resize(200, 60)

    def wide(text):
        """the second histogram of wide screens, the long titles, lines past 150"""
        lines = text.splitlines()
        whole = ("events per chunk" in text and "time-average" in text
                 and max(len(line) for line in lines) > 150)
        return text if whole else None
    text = s.wait_for(wide)  # the frame at the new size, not one half redrawn
    lines = text.splitlines()
    assert len(lines) == 60 and max(len(line) for line in lines) > 150
    assert "time-average" in text  # and the long titles
    s.resize(40, 10)
    text = s.wait_for("Terminal too small: 40x10")
    assert "at least 60x18" in text
    s.resize(100, 30)
    s.wait_for("runtime p50")


def test_small_terminal_from_the_start(screen, recording):
    s = screen(replay(recording), cols=50, rows=15)
    s.wait_for("Terminal too small: 50x15")
    s.keys("q")
    s.wait_for("roastop-exit=0")


def test_help_overlay(screen, recording):
    s = screen(replay(recording))
    s.wait_for(BRAILLE)
    s.keys("?")
    # the overlay's lines are drawn after its title: all three on one capture
    text = s.wait_for(["roastop help", "pause the display", "write the measurement now"])
    assert "pause the display" in text and "write the measurement now" in text
    s.keys("Escape")
    text = s.wait_for(lambda t: t if "roastop help" not in t else None)
    assert "roastop help" not in text
    s.keys("F1")
    s.wait_for("roastop help")


def test_colours_and_no_color(screen, recording, tmp_path):
    s = screen(replay(recording))
    coloured = s.wait_for(BRAILLE, escapes=True)
    assert COLOUR_SGR.search(coloured), "the default theme uses colours"
    s.close()
    for how in ({"env": {"NO_COLOR": "1"}, "args": []}, {"env": {}, "args": ["--no-color"]}):
        sub = tmp_path / f"nc{len(how['args'])}"
        sub.mkdir()
        t = Screen(sub, replay(recording) + how["args"], env=how["env"])
        try:
            plain = t.wait_for(BRAILLE, escapes=True)
            assert not COLOUR_SGR.search(plain), plain[:400]
            assert "\x1b[7m" in plain or "\x1b[1m" in plain  # structure kept by attributes
        finally:
            t.close()


def test_ascii_explicit_and_from_locale(screen, recording, tmp_path):
    s = screen(replay(recording, 60, "--ascii"))
    text = s.wait_for(["runtime p50", re.compile(r"[.:|]{3}")])
    assert all(ord(c) < 128 for c in text), "--ascii draws ASCII only"
    s.close()
    t = Screen(tmp_path, replay(recording), env={"LANG": "C", "LC_ALL": "C"})
    try:
        text = t.wait_for(["runtime p50", "+-"])  # the panel's title in its border
        assert all(ord(c) < 128 for c in text)
        assert "+---" in text or "+-" in text  # ASCII borders
    finally:
        t.close()


def test_q_writes_the_measurement(screen, recording):
    s = screen(replay(recording, 30))
    s.wait_for(BRAILLE)
    s.wait_for(lambda t: (events_done(t) or 0) > 0)  # chunks in before q, not a sleep's worth
    s.keys("q")
    s.wait_for("roastop-exit=0")
    (d,) = run_dirs(s.out)
    assert f"1 measurement written under {s.out} (latest: {d.name})" in s.joined()
    m = load_metrics(s.out)
    assert m["num_chunks"] > 0
    assert (d / "summary.txt").exists()


def test_e_writes_now_and_keeps_running(screen, recording):
    s = screen(replay(recording, 30))
    s.wait_for(BRAILLE)
    s.wait_for(lambda t: (events_done(t) or 0) > 0)  # chunks in before the first write
    assert not run_dirs(s.out)
    s.keys("e")
    s.wait_footer(f"measurement written under {s.out}")
    written = load_metrics(s.out)
    first = written["num_chunks"]
    assert first > 0
    assert "roastop-exit" not in s.text()
    # collection goes on: the screen counts events past those written; then
    # e writes again, and the file read is that write's (metrics.json is
    # renamed over the first: a new file, not the first one again)
    s.wait_for(lambda t: (events_done(t) or 0) > written["total_events"])
    path = run_dir(s.out) / "metrics.json"
    before = path.stat().st_ino
    s.keys("e")
    until(lambda: path.stat().st_ino != before, "the second write's metrics.json")
    assert load_metrics(s.out)["num_chunks"] > first  # collection went on


def test_pause_freezes_the_display_not_the_collection(screen, recording):
    s = screen(replay(recording, 60))
    s.wait_for(BRAILLE)
    s.keys("p")
    frozen = s.wait_still("PAUSED", quiet=0.6)  # the paused frame, drawn whole
    end = time.monotonic() + 2.5  # the replay goes on meanwhile: the display must not
    while time.monotonic() < end:
        assert s.text() == frozen
        time.sleep(0.1)
    elapsed_then = elapsed_shown(frozen)
    assert elapsed_then is not None, frozen
    s.keys("p")
    # the frame drawn on resuming: its footer says so, its header's elapsed read whole
    text = s.wait_for(lambda t: t if "resumed" in t and elapsed_shown(t) is not None else None)
    assert elapsed_shown(text) != elapsed_then


def test_refresh_interval_keys(screen, recording):
    s = screen(replay(recording))
    s.wait_for(BRAILLE)
    s.keys("+")
    s.wait_for("refresh every 2s")
    s.keys("-", "-")
    s.wait_for("refresh every 0.5s")


def test_themes_cycle_and_bad_theme(screen, recording, tmp_path):
    bad = tmp_path / "bad.theme"
    bad.write_text("# mine\ntitle = #ffffff bold\nborder = not-a-colour\n")
    s = screen(replay(recording, 60, "--theme", bad))
    # the message's start and its end, on one capture
    text = s.wait_footer("bad.theme:3: key 'border'", "using the default theme")
    text = "".join(text.split())  # a space at a row's break is not drawn (wait_footer)
    assert "usingthedefaulttheme" in text and "not-a-colour" in text
    s.wait_for(BRAILLE)
    seen, last = [], None
    # a name half drawn ("high-c") is no theme's: only a whole one is read
    shipped = {t.stem for t in (REPO_ROOT / "themes").glob("*.theme")}
    for _ in range(6):
        s.keys("t")

        def named(text):
            """the footer naming another theme, whole"""
            m = re.search(r"^ theme (\S+)$", text.splitlines()[-1])
            return m.group(1) if m and m.group(1) in shipped and m.group(1) != last else None
        last = s.wait_for(named)  # until the footer names another theme
        seen.append(last)
    assert {"light", "mono", "high-contrast", "16color"} <= set(seen), seen


def test_user_theme_directory(screen, recording, tmp_path):
    d = tmp_path / "roastop" / "themes"
    d.mkdir(parents=True)
    (d / "ocean.theme").write_text("name = ocean\ntitle = #00ffff bold\n")
    s = screen(replay(recording, 60, "--theme", "ocean"))
    s.wait_for(BRAILLE)
    assert "not found" not in s.text() and "using the default" not in s.text()
    # "ocean" sorts last after the shipped themes, so the next one wraps to default
    s.keys("t")
    s.wait_footer("theme default")
    s.keys("t")
    s.wait_footer("theme 16color")


def test_end_of_replay_keeps_the_screen(screen, recording):
    s = screen(replay(recording, 0))
    s.wait_for("end reached")
    s.stays_without("roastop-exit", 1.0)  # looked at all along, not once after a sleep
    s.keys("q")
    s.wait_for("roastop-exit=0")
    assert load_metrics(s.out)["num_chunks"] == 2000


def test_dumb_terminal_runs_headless(screen, recording):
    s = screen(replay(recording, 0), env={"TERM": "dumb"})
    s.wait_for("roastop-exit=0")
    text = s.joined()
    assert "TERM=dumb has no cursor addressing" in text
    assert "running headless" in text
    assert load_metrics(s.out)["num_chunks"] == 2000


def test_live_header_shows_listener_and_loss(screen):
    """Live: the header names the listener, counts datagrams and losses; the
    footer points to the help, which says what the emitters must export."""
    import socket
    s = screen(["--listen", "127.0.0.1:0", "--no-auth"], cols=140, rows=30)
    text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:(\d+) rx 0 lost 0"))
    port = int(re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1))
    s.wait_footer("? shows the export line")
    s.keys("?")  # the help page has the emitter line whole, on a row of its own
    s.wait_for(re.compile(rf"^export ROASTOP_ADDR=127\.0\.0\.1:{port}$", re.M))
    s.keys("Escape")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for seq in range(40):
        if seq % 10 != 3:  # four never sent
            body = {"type": "chunk", "run_id": "r", "host": "h", "pid": 7, "seq": seq,
                    "duration": 0.5 + seq / 100, "num_events": 1000, "dataset": "ds"}
            sock.sendto(b"RTP2\x00" + v2_body(body), ("127.0.0.1", port))
    # the scheduler's segment is drawn after the counts, on the same line
    text = s.wait_for(["rx 36 lost 4", "scheduler http://localhost:8787"])
    assert "scheduler http://localhost:8787" in text
    s.keys("3")
    s.wait_for(re.compile(r"ds\s+36\s"))
    s.keys("7")  # and the event log says so
    s.wait_for(re.compile(r"datagrams lost: \d+ more, 4 in all \(4 sequence gaps, 0 kernel"))


def test_stderr_held_while_the_screen_is_up(screen, recording, tmp_path):
    """A message on stderr during the run (here: checkpoints that cannot be
    written) must not scribble over the screen; it is printed after q."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    s = screen(replay(recording, 60, "--checkpoint", 1), out=blocker / "sub")
    s.wait_for(BRAILLE)
    # a checkpoint failed (--checkpoint 1): roastop wrote its line to stderr,
    # then drew the header's alert; the line must not be on the screen
    text = s.wait_for(re.compile(r"(?<!roastop: )checkpoint failed: "))
    assert "roastop: checkpoint failed" not in text  # the header's alert is no scribble
    s.keys("q")
    s.wait_for("roastop-exit=1")  # the final write fails too
    text = s.joined()
    assert "checkpoint failed" in text
    # printed when the screen closed, after what was printed before it opened
    assert text.index("checkpoint failed") > text.index("roastop: collecting")


def summary_value(summary, label):
    m = re.search(rf"^\s+{re.escape(label)}\s{{2,}}(.+?)\s*$", summary, re.M)
    assert m, label
    return m.group(1)


def test_screen_and_summary_show_the_same_numbers(screen, recording):
    """The screen reads struct metrics through format.h, as summary.txt does:
    at the end of a replay both must print the same strings."""
    s = screen(replay(recording, 0), cols=200, rows=60)
    s.wait_for("end reached")
    s.keys("Escape")
    main = s.wait_still("end reached")  # the last frame, drawn whole
    s.keys("3")
    datasets = s.wait_still("SHARE")  # every dataset's row, drawn whole
    s.keys("q")
    s.wait_for("roastop-exit=0")
    summary = (run_dir(s.out) / "summary.txt").read_text()
    for label in ("Data Rate", "Event Rate (Elapsed Time)", "Event Rate (Core-Averaged)",
                  "Core Efficiency", "Elapsed Time", "Processor CPU Time",
                  "Processor I/O & Waiting Time"):
        value = summary_value(summary, label)
        assert value in main, (label, value)
    total = summary_value(summary, "Total Events").split()[0]
    assert f"events {total} of" in main
    for q in ("p50", "p90", "p99", "Max"):
        value = summary_value(summary, q)
        assert f"{q.lower()} {value}" in main, (q, value)
    dur = r"(\S+(?: ms)?)"  # under a second: "215 ms"
    rows = re.findall(rf"^\s{{4}}(\S+)\s+(\d[\d,]*)\s+(\d+)\s+([\d,]+)\s+{dur}\s+{dur}\s*$",
                      summary, re.M)
    assert len(rows) == 3
    for name, chunks, failed, events, mean, p99 in rows:
        line = next(line for line in datasets.splitlines() if line.strip().startswith(name))
        cells = line.split()
        assert cells[1] == f"{int(chunks):,}" and cells[3] == events, line
        assert mean in line and p99 in line, (line, mean, p99)
        # the RATE cell: three significant digits and a prefix that fits
        assert re.search(r" \d[\d.]{0,3} [kMG]?Hz ", line), line
    assert "rates in decimal" in summary


def test_header_follows_the_scheduler_state(screen, recording, tmp_path):
    """The header shows what the run's sources say: degraded with its reason,
    then lost since a time; the event log lists the transitions."""
    lines = recording.read_text().splitlines()
    t0 = json_t(lines[1])
    status = [
        {"type": "status", "t": t0 + 1, "source": "scheduler", "state": "connected"},
        {"type": "status", "t": t0 + 300, "source": "scheduler", "state": "degraded",
         "reason": "/metrics timed out"},
        {"type": "status", "t": t0 + 600, "source": "scheduler", "state": "lost",
         "reason": "connection refused"},
    ]
    rec = tmp_path / "status.jsonl"
    # statuses go in time order among the other events; the run's end is cut off
    merged = [lines[0]] + sorted(lines[1:] + [json.dumps(x) for x in status], key=json_t)
    rec.write_text("\n".join(line for line in merged if json_t(line) < t0 + 650) + "\n")
    s = screen(replay(rec, 0), cols=160, rows=40)
    text = s.wait_still("end reached")
    assert re.search(r"scheduler lost since \d\d:\d\d:\d\d \(4\d\.\ds\): connection refused",
                     text), text
    s.keys("7")
    # the header already says "scheduler lost": wait for view 7's own lines
    text = s.wait_still("scheduler degraded")
    assert "/metrics timed out" in text and "scheduler lost" in text


def json_t(line):
    return json.loads(line).get("t", 0)


def test_workers_above_80_percent_memory_stand_out(screen, tmp_path):
    """Without colours too: a worker above 80 % of its memory limit is drawn
    bold (warning), above 95 % bold and underlined (critical)."""
    def worker(name, mem):
        return {"id": f"tcp://10.0.0.{len(name)}:{mem}", "name": name, "host": "n",
                "nthreads": 2, "memory_bytes": mem, "memory_limit": 1000, "cpu_percent": 50,
                "status": "running"}
    t = 1767225600
    events = [{"type": "recording", "format": "roastop-recording", "version": 1,
               "roastop": "test", "created": t},
              {"type": "run_start", "t": t, "run_id": "r", "name": "mem"}]
    for i in range(3):
        events.append({"type": "sample", "t": t + i, "source": "state", "worker_count": 3,
                       "workers": [worker("a-calm", 500), worker("b-warm", 850),
                                   worker("c-full", 970)]})
    rec = tmp_path / "mem.jsonl"
    rec.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    s = screen(replay(rec, 0), env={"NO_COLOR": "1"}, cols=100, rows=24)
    s.wait_for("end reached")
    s.keys("2", "s", "s", "s", "s")  # sorted by name: the calm worker is selected
    s.wait_for("sorted by name")
    rows = {}
    # the replay has ended: the frame that stayed the same is drawn whole
    escaped = s.wait_still(lambda t: "sorted by name" in SGR.sub("", t), escapes=True)
    for line in escaped.splitlines():
        for name in ("a-calm", "b-warm", "c-full"):
            if name in line:
                rows[name] = line
    assert "85.0%" in rows["b-warm"] and "97.0%" in rows["c-full"]
    sgr = re.compile(r"\x1b\[([0-9;]*)m")
    def attrs_before(line, name):
        """The SGR attributes in force where name starts (colour codes aside)."""
        codes = set()
        for m in sgr.finditer(line[:line.index(name)]):
            parts = m.group(1).split(";")
            if parts[0] in ("", "0"):
                codes, parts = set(), parts[1:]
            codes |= set(parts) - {"39", "49"}
        return codes
    assert "7" in attrs_before(rows["a-calm"], "a-calm")  # the selection: reverse
    warm, full = attrs_before(rows["b-warm"], "b-warm"), attrs_before(rows["c-full"], "c-full")
    assert "1" in warm and "4" not in warm
    assert "1" in full and "4" in full


def test_resize_storm(screen, recording):
    """Two hundred resizes as fast as tmux sends them, through sizes too small
    to draw: roastop keeps drawing, collection goes on, q still writes."""
    s = screen(replay(recording, 30), cols=80, rows=24)
    s.wait_for(BRAILLE)
    sizes = [(80, 24), (200, 60), (40, 10), (120, 35), (61, 18), (59, 17), (160, 50), (1, 1)]
    for i in range(200):
        s.resize(*sizes[i % len(sizes)])
    s.resize(120, 40)
    text = s.wait_for(lambda t: t if "events/chunk" in t and events_done(t) is not None else None)
    assert len(text.splitlines()) == 40
    before = events_done(text)
    # the replay goes on at 30x: a count past it, read whole
    after = s.wait_for(lambda t: (events_done(t) or 0) > before and events_done(t))
    assert after > before
    s.keys("q")
    s.wait_for("roastop-exit=0")
    assert load_metrics(s.out)["total_events"] >= after


def test_live_dashboard_on_a_real_cluster(screen, tmp_path):
    """The dashboard polling a real `dask scheduler` with two workers and the
    collector's route: the header says connected with Dask's version (which
    only the route tells), the workers view lists both, a killed scheduler
    shows as lost."""
    import importlib.metadata
    from dask_cluster import Cluster
    from roastop import route
    (tmp_path / "cluster").mkdir()
    c = Cluster(tmp_path / "cluster")
    client = c.client()
    try:
        route.install_on(client)
        s = screen(["--no-auth", "--listen", "127.0.0.1:0", "--scheduler", c.dashboard_url,
                    "--interval", "0.5"], cols=160, rows=40)
        version = importlib.metadata.version("distributed")
        text = s.wait_for(f"Dask {version}", timeout=30)
        s.wait_for(re.compile(r"scheduler \S+ (connected|degraded)"))
        s.wait_for(re.compile(r"workers 2 +peak 2"))
        from dask_tasks import spin
        futures = client.map(spin, range(4))  # held: the tasks stay known to the scheduler
        client.gather(futures)  # the task progress the route gives
        s.wait_for(re.compile(r"tasks 4 of 4 .*100%"))
        s.keys("2")
        names = {w["name"] for w in client.scheduler_info()["workers"].values()}

        def both_rows(text):
            """the title and each worker's row (drawn after the title)"""
            rows = [re.search(rf"^ ?{re.escape(str(n))}\s+running", text, re.M) for n in names]
            return text if "workers: 2 present" in text and all(rows) else None
        text = s.wait_for(both_rows)
        assert all(re.search(rf"^ ?{re.escape(str(n))}\s+running", text, re.M) for n in names), text
        c.kill_scheduler()
        s.keys("1")
        s.wait_for(re.compile(r"scheduler \S+ lost since"), timeout=30)
        s.keys("q")
        s.wait_for("roastop-exit=0")
        assert load_metrics(s.out)["peak_workers"] == 2
    finally:
        client.close()
        c.close()


def test_flood_keeps_the_screen_responsive(screen):
    """Floods of datagrams far above what the listener takes (a 4 kB receive
    buffer, back-to-back senders): keys still answer within seconds, the
    header counts the loss, and q writes a measurement in which every
    datagram is applied or counted missing."""
    import threading
    s = screen(["--listen", "127.0.0.1:0", "--no-auth", "--rcvbuf", "4096",
                "--scheduler", "http://127.0.0.1:9"], cols=140, rows=30)
    text = s.wait_for(re.compile(r"udp 127\.0\.0\.1:(\d+) rx 0"))
    port = re.search(r"udp 127\.0\.0\.1:(\d+)", text).group(1)
    sent, stop = [], threading.Event()

    def flood():
        while not stop.is_set():
            p = subprocess.run([f"{TOOLS}/udp_flood", f"127.0.0.1:{port}", "200000", "-"],
                               capture_output=True, text=True, check=True, timeout=120)
            sent.append(json.loads(p.stdout)["sent"])

    t = threading.Thread(target=flood)
    t.start()
    try:
        s.wait_for(re.compile(r"lost [1-9]"), timeout=20)
        closed = lambda t: "udp 127.0.0.1" in t and "roastop help" not in t  # noqa: E731
        for key, expect in (("?", "roastop help"), ("Escape", closed),
                            ("2", "workers:"), ("7", "datagrams lost")):
            t0 = time.monotonic()
            s.keys(key)
            s.wait_for(expect, timeout=5)
            assert time.monotonic() - t0 < 5
        assert t.is_alive(), "the flood was still running while the keys were answered"
    finally:
        stop.set()
        t.join()
    # every datagram was sent (the senders have exited): those still queued at
    # the socket are read by roastop's drain at its stop
    s.keys("q")
    s.wait_for("roastop-exit=0", timeout=30)
    u = load_metrics(s.out)["roastop"]["udp"]
    assert u["applied"] + u["missing"] == sum(sent), (u, sent)
    assert u["missing"] > 0 and u["rejected"]["total"] == 0
