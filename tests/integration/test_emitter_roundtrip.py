"""The Python emitter (python/roastop) into the real roastop: a processor-like
class decorated with track_metrics sends 100,000 chunks; the measurement
roastop writes must count every one, with zero loss."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import load_metrics
from test_udp import Listener

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from roastop import MetricsCollector, track_metrics, track_time

    class Events(list):
        def __init__(self, n, i):
            super().__init__(range(n))
            self.metadata = {"dataset": "ds%d" % (i % 3), "filename": "f%d.root" % (i % 50),
                             "entrystart": 0, "entrystop": n}
            self.attrs = {}

    class DimuonProcessor:
        @track_metrics
        def process(self, events):
            with track_time(self, "select"):
                pass
            return {"n": len(events)}

    n = int(sys.argv[2])
    p = DimuonProcessor()
    with MetricsCollector(None, processor_instance=p) as mc:
        total = 0
        for i in range(n):
            total += p.process(Events(10 + i % 7, i))["n"]
            if (i + 1) % 1000 == 0:  # the test lets the next block go once roastop has these
                print("sent", mc.datagrams_sent, flush=True)
                sys.stdin.readline()
        mc.set_coffea_report({"entries": total, "chunks": n, "bytesread": 0,
                              "processtime": 1.0, "columns": ["x-data"]})
    print(total, mc.datagrams_sent, mc.datagrams_lost)
""")


def test_hundred_thousand_chunks_exactly(tmp_path):
    lst = Listener(tmp_path, "--exit-on-run-end")
    # exact counts of the decorator's datagrams: the heartbeat (test_executors.py) is off
    env = dict(os.environ, ROASTOP_ADDR="%s:%d" % lst.addr, ROASTOP_KEY=lst.key.hex(),
               ROASTOP_HEARTBEAT="0")
    script = tmp_path / "emit.py"
    script.write_text(SCRIPT)
    n = 100000
    p = subprocess.Popen([sys.executable, str(script), str(PYTHON_DIR), str(n)], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        # exactness, not throughput (make bench's): a block of 1,000 chunks at a time,
        # each once roastop has read the one before, so that a slow machine (ASan, a
        # busy core) never fills the socket's buffer
        for line in p.stdout:
            if not line.startswith("sent "):
                break
            lst.wait_received(int(line.split()[1]), timeout=120)
            p.stdin.write("go\n")
            p.stdin.flush()
        rest = p.stdout.read()
        assert p.wait(timeout=300) == 0
    finally:
        p.kill()
    total, sent, lost = map(int, (line + rest).split())
    assert lost == 0 and sent == 2 * n + 3  # a chunk_start and a chunk per call
    lst.proc.communicate(timeout=60)
    assert lst.proc.returncode == 0
    m = load_metrics(lst.out)
    assert m["num_chunks"] == n
    assert m["total_events_from_chunks"] == total
    assert m["total_events"] == total
    assert sum(d["num_chunks"] for d in m["per_dataset"].values()) == n
    udp = m["roastop"]["udp"]
    assert udp["missing"] == 0 and udp["kernel_drops"] == 0
    assert udp["rejected"]["total"] == 0
    fl = m["roastop"]["in_flight"]  # every start matched by its chunk
    assert fl["chunk_starts"] == fl["matched"] == n and fl["running"] == 0, fl
    assert m["roastop"]["processor"] == "DimuonProcessor"
    assert m["section_summary"]["timing"]["select"]["count"] == n
