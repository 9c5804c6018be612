"""A UDP flood far above what roastop's listener takes: roastop stays
responsive to signals, every datagram is accounted for (applied, or counted
missing through the per-sender sequence; the kernel's drop counter shows
where they went) and the measurement is written."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from conftest import Listener, load_metrics  # noqa: E402

TOOLS = os.environ.get("TOOLS", "build/tools")


def test_flood_loss_counted_exactly_and_measurement_written(tmp_path):
    lst = Listener(tmp_path, "--rcvbuf", "4096", "--scheduler", "http://127.0.0.1:9")
    out = subprocess.run([f"{TOOLS}/udp_flood", f"{lst.addr[0]}:{lst.addr[1]}", "300000",
                          lst.key_path], capture_output=True, text=True, check=True, timeout=120)
    flood = json.loads(out.stdout)
    # every datagram was sent (the sender has exited): what is still queued
    # at the socket is read by roastop's drain at its stop
    t0 = time.monotonic()
    lst.proc.send_signal(signal.SIGTERM)
    lst.proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 5, "a flooded roastop must still stop promptly"
    assert lst.proc.returncode == 0
    m = load_metrics(lst.out)
    u = m["roastop"]["udp"]
    assert u["applied"] + u["missing"] == flood["sent"], (u, flood)
    assert u["missing"] > 0 and u["kernel_drops"] > 0, (u, flood)  # it was a flood
    assert m["num_chunks"] == u["applied"]
    assert u["rejected"]["total"] == 0
