#!/usr/bin/env python3
"""Runs the dimuon processor (examples/dimuon.py) with coffea's
processor.Runner and its Dask executor on a Dask cluster, measured by roastop.

    # on the login node: roastop --headless (or the dashboard), then export
    # the ROASTOP_ADDR / ROASTOP_KEY it prints, and:
    python examples/run_dimuon.py --scheduler tcp://HOST:8786 --files DIR

Without --scheduler a local cluster of 2 worker processes is started;
--gateway-cluster NAME joins a dask-gateway cluster instead (the gateway's
address and authentication from dask's configuration, `gateway.address`,
`gateway.auth`, as on coffea-casa).
--executor futures (a process pool of --workers) or iterative (this process)
runs it without Dask: the collector gets no client, and roastop draws the
worker timelines from the emitter's heartbeats (docs/executors.md). The
ROOT files are written first (examples/make_files.py) when DIR has none.
--collector roastcoffea runs the same processor under roastcoffea 0.1.2
instead and saves its measurement (--roastcoffea-output); --result writes
what the client knows (coffea's report, the output's counts) as JSON."""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:PORT)")
    ap.add_argument("--gateway-cluster", metavar="NAME",
                    help="a dask-gateway cluster's name (dask_gateway.Gateway().connect)")
    ap.add_argument("--files", type=Path, default=Path("dimuon-files"),
                    help="directory of the ROOT files (made when empty)")
    ap.add_argument("--chunksize", type=int, default=10000)
    ap.add_argument("--collector", choices=("roastop", "roastcoffea", "none"), default="roastop")
    ap.add_argument("--roastcoffea-output", type=Path, default=Path("roastcoffea-measurement"))
    ap.add_argument("--result", type=Path, help="write the client's view of the run as JSON")
    ap.add_argument("--workers", type=int, default=2,
                    help="local cluster or process pool size (no --scheduler)")
    ap.add_argument("--executor", choices=("dask", "futures", "iterative"), default="dask")
    ap.add_argument("--slow-file", help="a file name whose chunks spin --slow-seconds more "
                    "of CPU (a slow file, for the demo)")
    ap.add_argument("--slow-seconds", type=float, default=0.5)
    ap.add_argument("--expected-events", action="store_true",
                    help="tell roastop the run's events (from the files' truth.json): an ETA")
    return ap.parse_args()


def fileset_of(files):
    if not (files / "fileset.json").exists():
        subprocess.run([sys.executable, str(HERE / "make_files.py"), str(files)], check=True,
                       stdout=subprocess.DEVNULL)
    return json.loads((files / "fileset.json").read_text())


def client_for(args):
    from distributed import Client, LocalCluster
    if args.scheduler:
        return Client(args.scheduler)
    if args.gateway_cluster:
        from dask_gateway import Gateway
        return Gateway().connect(args.gateway_cluster).get_client()
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address="127.0.0.1:0")
    return Client(cluster)


def executor_for(args, client):
    from coffea import processor
    if args.executor == "futures":
        return processor.FuturesExecutor(workers=args.workers, status=False)
    if args.executor == "iterative":
        return processor.IterativeExecutor(status=False)
    return processor.DaskExecutor(client=client, status=False)


def import_processor(collector):
    # The metrics library is chosen before the processor module is imported.
    os.environ["DIMUON_METRICS"] = collector
    sys.path.insert(0, str(HERE))
    import cloudpickle
    import dimuon
    # The workers have no copy of this directory: the processor's module
    # travels inside the pickle (roastop's own code does so by itself).
    cloudpickle.register_pickle_by_value(dimuon)
    return dimuon


def collector_for(args, client, proc):
    if args.collector == "roastcoffea":
        from roastcoffea import MetricsCollector
        return MetricsCollector(client, processor_instance=proc)
    if args.collector == "roastop":
        from roastop import MetricsCollector
        truth = args.files / "truth.json"
        expected = (json.loads(truth.read_text())["total_events"]
                    if args.expected_events and truth.exists() else None)
        return MetricsCollector(client, processor_instance=proc, run_name="dimuon example",
                                expected_events=expected)
    return None


def run(args):
    from coffea import processor
    from coffea.nanoevents import NanoAODSchema

    fileset = fileset_of(args.files)
    client = client_for(args) if args.executor == "dask" else None
    dimuon = import_processor(args.collector)
    proc = dimuon.DimuonProcessor(slow_file=args.slow_file, slow_seconds=args.slow_seconds)
    runner = processor.Runner(executor=executor_for(args, client), schema=NanoAODSchema,
                              chunksize=args.chunksize, savemetrics=True)
    collector = collector_for(args, client, proc)
    t0 = time.time()
    if collector is None:
        output, report = runner(fileset, processor_instance=proc, treename="Events")
    else:
        if hasattr(collector, "set_fileset"):
            collector.set_fileset(fileset)
        with collector:
            output, report = runner(fileset, processor_instance=proc, treename="Events")
            collector.extract_metrics_from_output(output)
            collector.set_coffea_report(report)
    wall = time.time() - t0
    if args.collector == "roastcoffea":
        collector.save_measurement(args.roastcoffea_output.parent,
                                   measurement_name=args.roastcoffea_output.name)
    if client is not None:
        client.close()
    return summarize(args, output, report, collector, wall)


def peak(h):
    """The centre of the fullest bin above 60 GeV (where the Z would be)."""
    axis = h.axes[0]
    values = [(v, c) for v, c in zip(h.values(), axis.centers) if c > 60]
    return float(max(values)[1])


def summarize(args, output, report, collector, wall):
    per_dataset = {d: {"entries": int(v["entries"]), "pairs": int(v["pairs"]),
                       "mass_entries": float(v["mass"].sum()),
                       "mass_peak_gev": peak(v["mass"]),
                       "jet_pt_entries": float(v["jet_pt"].sum())}
                   for d, v in output.items() if isinstance(v, dict)}
    result = {"collector": args.collector, "executor": args.executor, "wall_seconds": wall,
              "client_pid": os.getpid(),
              "report": {k: report[k] for k in ("entries", "chunks", "bytesread", "processtime")},
              "columns": sorted(report.get("columns", ())), "per_dataset": per_dataset}
    if args.collector == "roastop":
        result["datagrams_sent"] = collector.datagrams_sent
        result["datagrams_lost"] = collector.datagrams_lost
        result["shipped_by_value"] = collector.shipped_by_value
        result["run_id"] = collector.run_id
    for d, v in per_dataset.items():
        print(f"{d:12s} {v['entries']:8d} events, {v['pairs']:6d} opposite-charge pairs")
    print(f"{report['chunks']} chunks, {report['entries']} events in {wall:.1f} s")
    if args.result:
        args.result.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    run(parse_args())
