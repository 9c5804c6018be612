"""roastop travels by value: a processor decorated with track_metrics,
pickled with cloudpickle inside a MetricsCollector (as coffea pickles it),
runs in a Python process that cannot import roastop, and the chunks it sends
there come from one sender with one unbroken sequence, even though the
processor is unpickled again for every chunk (as coffea does on a worker)."""
import os
import subprocess
import sys
import textwrap

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, receive, receive_chunk, fresh_process_state, sink)

from roastop import MetricsCollector, track_memory, track_metrics, track_time

cloudpickle = pytest.importorskip("cloudpickle")

WORKER = textwrap.dedent("""
    import sys
    try:
        import roastop  # noqa: F401
    except ImportError:
        pass
    else:
        sys.exit("roastop is importable here: the test would prove nothing")
    import cloudpickle

    class Events(list):
        def __init__(self, n):
            super().__init__(range(n))
            self.metadata = {"dataset": "DY", "filename": "f.root"}
            self.attrs = {}

    blob = open(sys.argv[1], "rb").read()
    total = 0
    for chunk in range(2):
        proc = cloudpickle.loads(blob)            # coffea unpickles per chunk
        for n in (10, 20):
            total += proc.process(Events(n + chunk))["n"]
    print(total)
""")


def make_processor():
    """A class defined in a function: cloudpickle ships it by value too, as
    a processor defined in the user's __main__."""
    class DimuonProcessor:
        @track_metrics
        def process(self, events):
            with track_time(self, "select"):
                n = len(events)
            with track_memory(self, "fill"):
                pass
            return {"n": n}
    return DimuonProcessor()


def clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ROASTOP_ADDR")}
    return env


def test_processor_runs_where_roastop_is_not_installed(sink, tmp_path):
    proc = make_processor()
    with MetricsCollector(None, processor_instance=proc, addr=addr_of(sink),
                          key=KEY.hex()) as mc:
        assert mc.shipped_by_value
        assert receive(sink)["type"] == "run_start"   # the client's socket is open
        blob = cloudpickle.dumps(proc)
        (tmp_path / "proc.pkl").write_bytes(blob)
        p = subprocess.run([sys.executable, "-c", WORKER, str(tmp_path / "proc.pkl")],
                           cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        assert int(p.stdout) == 10 + 20 + 11 + 21
        chunks = [receive_chunk(sink) for _ in range(4)]   # each after its chunk_start
    assert b"roastop" in blob        # the code itself travelled
    assert {c["pid"] for c in chunks} == {chunks[0]["pid"]} != {os.getpid()}
    assert [c["seq"] for c in chunks] == [1, 3, 5, 7]
    assert [c["num_events"] for c in chunks] == [10, 20, 11, 21]
    assert all(c["run_id"] == mc.run_id for c in chunks)
    assert all("select" in c["timing"] for c in chunks)


def test_ship_by_value_registers_every_loaded_submodule():
    import roastop._state
    assert roastop._state.ship_by_value()
    registered = cloudpickle.list_registry_pickle_by_value()
    for name in ("roastop", "roastop.decorator", "roastop.emitter", "roastop.instrumentation",
                 "roastop.collector", "roastop._state"):
        assert name in registered
