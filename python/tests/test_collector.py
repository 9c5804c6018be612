"""MetricsCollector: run markers, report, flags on the processor, the
address and key handed to workers, and doing nothing without an address."""
import os
import pickle
import socket
import warnings

import pytest
from roastop_testutil import (  # noqa: F401 - fresh_process_state and sink are fixtures
    KEY, addr_of, nothing_arrives, receive, receive_chunk, split_datagram, fresh_process_state,
    sink)
from roastop_fakes import Events

from roastop import MetricsCollector, track_metrics


class DimuonProcessor:
    @track_metrics
    def process(self, events):
        return {"n": len(events)}


def test_run_start_chunks_report_run_end(sink):
    p = DimuonProcessor()
    mc = MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY.hex(),
                          run_name="dimuon test")
    mc.set_fileset({"DY": {"files": {}}, "TT": {"files": {}}})
    with mc as entered:
        assert entered is mc
        start = receive(sink)
        assert start == {**start, "type": "run_start", "run_id": mc.run_id,
                         "name": "dimuon test", "processor": "DimuonProcessor",
                         "datasets": ["DY", "TT"], "client_host": socket.gethostname(),
                         "client_pid": os.getpid()}
        assert len(mc.run_id) == 32
        assert p._roastcoffea_collect_metrics is True
        assert DimuonProcessor._roastcoffea_collect_metrics is True
        assert p._roastop_addr == addr_of(sink) and p._roastop_key == KEY.hex()
        assert p.process(Events(7)) == {"n": 7}
        chunk = receive_chunk(sink)                     # after its chunk_start
        assert chunk["type"] == "chunk" and chunk["run_id"] == mc.run_id
        mc.set_coffea_report({"bytesread": 1, "entries": 7, "processtime": 0.5, "chunks": 1,
                              "columns": ["x-data"]})
        report = receive(sink)
        assert report["type"] == "report" and report["entries"] == 7
        assert report["run_id"] == mc.run_id
    end = receive(sink)
    assert end["type"] == "run_end" and end["run_id"] == mc.run_id
    assert [start["seq"], chunk["start_seq"], chunk["seq"], report["seq"], end["seq"]] == [
        0, 1, 2, 3, 4]
    assert p._roastcoffea_collect_metrics is False
    assert "_roastcoffea_collect_metrics" not in vars(DimuonProcessor)
    assert mc.datagrams_sent == 5 and mc.datagrams_lost == 0     # the chunk's start too
    p.process(Events(7))                      # after the run: nothing
    assert nothing_arrives(sink)


def test_each_run_gets_a_new_id(sink):
    p = DimuonProcessor()
    ids = []
    for _ in range(2):
        mc = MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY)
        with mc:
            pass
        ids.append(mc.run_id)
        assert receive(sink)["run_id"] == receive(sink)["run_id"] == mc.run_id
    assert ids[0] != ids[1]


def test_environment_defaults(sink, monkeypatch):
    monkeypatch.setenv("ROASTOP_ADDR", addr_of(sink))
    monkeypatch.setenv("ROASTOP_KEY", KEY.hex())
    p = DimuonProcessor()
    with MetricsCollector(processor_instance=p) as mc:
        assert receive(sink)["type"] == "run_start"
        assert p._roastop_key == KEY.hex()
    assert receive(sink)["type"] == "run_end"
    assert mc.datagrams_sent == 2


def test_no_key_sends_untagged(sink, monkeypatch):
    monkeypatch.delenv("ROASTOP_KEY", raising=False)
    p = DimuonProcessor()
    with MetricsCollector(None, processor_instance=p, addr=addr_of(sink)):
        assert receive(sink, key=None)["type"] == "run_start"
        p.process(Events(2))
        assert receive_chunk(sink, key=None)["num_events"] == 2
    assert receive(sink, key=None)["type"] == "run_end"


def test_without_address_warns_once_and_does_nothing(sink, monkeypatch):
    monkeypatch.delenv("ROASTOP_ADDR", raising=False)
    monkeypatch.delenv("ROASTOP_KEY", raising=False)
    p = DimuonProcessor()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mc = MetricsCollector(None, processor_instance=p)
        MetricsCollector(None, processor_instance=p)
    assert len(caught) == 1 and "ROASTOP_ADDR" in str(caught[0].message)
    with mc:
        assert not getattr(p, "_roastcoffea_collect_metrics", False)
        p.process(Events(2))
        mc.set_coffea_report({"entries": 2})
    assert mc.coffea_report == {"entries": 2}
    assert mc.datagrams_sent == 0 and mc.datagrams_lost == 0
    assert nothing_arrives(sink)


def test_bad_key_or_address_fails_on_the_client():
    with pytest.raises(ValueError):
        MetricsCollector(None, addr="127.0.0.1:9", key="not hex")
    with pytest.raises(ValueError):
        MetricsCollector(None, addr="nonsense", key=KEY)


def test_without_processor_instance(sink):
    with MetricsCollector(None, addr=addr_of(sink), key=KEY) as mc:
        start = receive(sink)
        assert "processor" not in start and start["name"] == "coffea run"
        assert start["datasets"] == []
    assert receive(sink)["type"] == "run_end"
    assert mc.client is None


def test_exception_in_the_run_still_ends_it(sink):
    p = DimuonProcessor()
    with pytest.raises(RuntimeError):
        with MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY):
            receive(sink)
            raise RuntimeError("runner failed")
    end = receive(sink)
    assert end["type"] == "run_end" and end["status"] == "failed"
    assert (end["error_type"], end["error_message"]) == ("RuntimeError", "runner failed")
    assert "_roastcoffea_collect_metrics" not in vars(DimuonProcessor)


def test_completed_run_end_says_so(sink):
    with MetricsCollector(None, addr=addr_of(sink), key=KEY):
        receive(sink)
    end = receive(sink)
    assert end["status"] == "completed"
    assert "error_type" not in end and "error_message" not in end


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no str")


def test_failed_run_end_is_bounded_and_never_raises(sink):
    """A message of any length fits one datagram under SOFT_LIMIT; an
    exception whose str() raises goes with its type only; the user's own
    exception is what propagates."""
    from roastop.emitter import SOFT_LIMIT
    with pytest.raises(ValueError):
        with MetricsCollector(None, addr=addr_of(sink), key=KEY):
            receive(sink)
            raise ValueError("\u00e9" * 100000)
    data = sink.recv(70000)
    assert len(data) <= SOFT_LIMIT
    end = split_datagram(data)
    assert end["status"] == "failed" and end["error_type"] == "ValueError"
    assert 8 < len(end["error_message"]) < 1000 and end["error_message"].endswith("\u2026")
    with pytest.raises(Unprintable):
        with MetricsCollector(None, addr=addr_of(sink), key=KEY):
            receive(sink)
            raise Unprintable()
    end = receive(sink)
    assert end["error_type"].endswith("Unprintable") and "error_message" not in end


def test_processor_travels_pickled_with_address(sink):
    p = DimuonProcessor()
    with MetricsCollector(None, processor_instance=p, addr=addr_of(sink), key=KEY) as mc:
        receive(sink)
        blob = pickle.dumps(p)
        worker_copy = pickle.loads(blob)
        worker_copy.process(Events(3))
        rec = receive_chunk(sink)
    assert rec["run_id"] == mc.run_id and rec["num_events"] == 3


def test_roastcoffea_compatible_calls(sink):
    client = object()
    mc = MetricsCollector(client, "dask", True, 1.0, None, addr=addr_of(sink), key=KEY)
    assert mc.client is client and mc.track_workers and mc.worker_tracking_interval == 1.0
    assert mc._install_scheduler_route() is None
    with mc:
        pass
    out = {"n": 1, "__roastcoffea_metrics__": []}
    mc.extract_metrics_from_output(out)
    assert out == {"n": 1}
    assert mc.datagrams_sent == 2


def test_expected_events_goes_in_run_start(sink):
    with MetricsCollector(None, addr=addr_of(sink), key=KEY, expected_events=20000):
        assert receive(sink)["expected_events"] == 20000
    receive(sink)
    with MetricsCollector(None, addr=addr_of(sink), key=KEY):
        assert "expected_events" not in receive(sink)   # unknown: left out, not 0
    receive(sink)


@pytest.mark.parametrize("bad", [-1, 1.5, "20000", True, 10**15 + 1])
def test_expected_events_rejected_on_the_client(bad):
    with pytest.raises(ValueError, match="expected_events"):
        MetricsCollector(None, addr="127.0.0.1:9", key=KEY, expected_events=bad)


class WorkItem:
    """The fields of coffea.processor.executor.WorkItem the collector reads."""

    def __init__(self, dataset, entrystart, entrystop):
        self.dataset, self.entrystart, self.entrystop = dataset, entrystart, entrystop


def test_preprocessed_chunks_give_the_total(sink):
    chunks = [WorkItem("DY", 0, 100), WorkItem("DY", 100, 250), WorkItem("TT", 0, 7)]
    mc = MetricsCollector(None, addr=addr_of(sink), key=KEY)
    mc.set_fileset(chunks)
    with mc:
        start = receive(sink)
        assert start["expected_events"] == 257 and start["datasets"] == ["DY", "TT"]
    receive(sink)
    given = MetricsCollector(None, addr=addr_of(sink), key=KEY, expected_events=5)
    given.set_fileset(chunks)                # the caller's number wins
    assert given.expected_events == 5


def test_a_plain_fileset_or_a_generator_gives_no_total():
    mc = MetricsCollector(None, addr="127.0.0.1:9", key=KEY)
    mc.set_fileset({"DY": ["a.root"]})
    assert mc.expected_events is None and mc.datasets == ["DY"]
    gen = (c for c in [WorkItem("DY", 0, 10)])
    mc.set_fileset(gen)
    assert mc.expected_events is None
    assert next(gen).entrystop == 10         # not consumed: the Runner still gets it
