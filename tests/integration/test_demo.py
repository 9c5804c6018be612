"""make demo's first screen (issue 35, item 5): the committed recording
(examples/demo-recording.jsonl, made by examples/record_demo.py, a real
coffea run with one slow file and the run's expected events) replayed by
roastop --demo, as make demo runs it, in an 80x24 terminal. While the
run goes, one screen shows the running row with the oldest chunk's age, an
ETA from the expected events, and the top line names the demo's finding,
the slow file, whose evidence view f lists."""
import re

from conftest import REPO_ROOT
from test_screen import pytestmark, screen  # noqa: F401 (tmux or skip; the fixture)

SLOW = "TTbar_1.root"  # record_demo.py's --slow-file
RUNNING = re.compile(r"^ running [1-9]\d* \S+ oldest \d", re.M)
ETA = re.compile(r"events [\d,]+ of 2,400,000 .*ETA \d", re.M)
TOP = re.compile(r"^ warning: slow file: " + re.escape(SLOW), re.M)


def test_make_demo_is_roastop_demo():
    script = (REPO_ROOT / "scripts" / "demo.sh").read_text()
    assert '"$BUILD/roastop" --demo ' in script


def test_demo_first_screen_shows_running_eta_and_the_finding(screen, tmp_path):  # noqa: F811
    s = screen(["--demo"], cols=80, rows=24)
    text = s.wait_for([RUNNING, ETA, TOP], timeout=120)
    lines = text.splitlines()
    assert TOP.match(lines[1]), text  # the line under the tabs
    assert "ETA n/a" not in text, text
    s.keys("f")
    s.wait_for(["findings: ", f"slow file: {SLOW}", f"data/{SLOW}", re.compile(r"\dx\s+slower")])
