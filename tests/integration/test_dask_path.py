"""Chunks by the workers' own Dask connection (issue 34; docs/protocol.md,
"The Dask path"): the real coffea example on a real `dask scheduler` and two
`dask worker` processes whose datagrams to roastop's port are dropped, as a
firewall between batch nodes and a login node drops them (the LD_PRELOAD
shim tests/tools/udpdrop.c, told the port through a file per worker). The
client's own datagrams pass: its hello is answered. Each worker process
finds no ack to its hello and sends the same datagrams through
Worker.log_event; the collector's route keeps them on the scheduler and
roastop reads them at each poll. The chunks must add up to the files, as
they do by UDP (test_coffea_e2e.py, where the senders use UDP)."""
import pytest

from conftest import CHUNKSIZE, exact_chunks, load_metrics, measuring
from dask_cluster import UDPDROP, DroppingCluster, client_env, run_example


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, dimuon_files):
    assert UDPDROP.exists(), "make build/tools/udpdrop.so"
    c = DroppingCluster(tmp_path_factory.mktemp("dropping-cluster"))
    try:
        files, _ = dimuon_files
        run_example(c, files, tmp_path_factory.mktemp("warmup") / "result.json",
                    "--collector", "none", "--chunksize", CHUNKSIZE)
        yield c
    finally:
        c.stop()


def measured_run(tmp_path, cluster, files, dropped_workers):
    """One run of the example measured by a fresh roastop, whose port the
    workers named drop. Its metrics.json and the client's result."""
    out = tmp_path / "measurement"
    with measuring(tmp_path, out, "--scheduler", cluster.dashboard_url, "--duration", 600) as live:
        port = live.env["ROASTOP_ADDR"].rsplit(":", 1)[1]
        cluster.drop(port, dropped_workers)
        result = run_example(cluster, files, tmp_path / "result.json", "--collector", "roastop",
                             "--chunksize", CHUNKSIZE, env=client_env(**live.env))
    return load_metrics(out), result


def test_dropped_workers_send_by_dask(cluster, dimuon_files, tmp_path):
    files, truth = dimuon_files
    m, r = measured_run(tmp_path, cluster, files, dropped_workers={0, 1})
    exact_chunks(m, r, truth)
    udp = m["roastop"]["udp"]
    # the client by UDP (its hello acked), each worker process by Dask
    assert udp["senders_by_path"] == {"udp": 1, "dask": 2}, udp
    assert udp["datagrams_by_path"]["dask"] >= m["num_chunks"]
    dg = m["roastop"]["scheduler"]["datagrams"]
    # a group's members are written when not zero (docs/metrics.md); every
    # payload read went to the listener, which alone counts it (by path)
    assert dg["answers"] > 0 and "received" not in dg, dg
    assert not {"lost", "rejected", "answers_rejected", "elsewhere"} & set(dg), dg
    assert m["roastop"]["run_ended"] is True


def test_one_worker_reaches_and_one_cannot(cluster, dimuon_files, tmp_path):
    files, truth = dimuon_files
    m, r = measured_run(tmp_path, cluster, files, dropped_workers={1})
    exact_chunks(m, r, truth)
    assert m["roastop"]["udp"]["senders_by_path"] == {"udp": 2, "dask": 1}
