#!/usr/bin/env python3
"""A coffea analysis written for roastcoffea 0.1.2, as its documentation
shows one: the processor decorated with track_metrics, the run inside a
MetricsCollector, then get_metrics(), save_measurement() and
print_summary(). Switching it to roastop is the first import below, and
nothing else (tests/integration/test_collector_api.py does exactly that).

    python examples/roastcoffea_script.py --scheduler tcp://HOST:8786 \\
        --files DIR --output measurements

DIR holds examples/make_files.py's ROOT files and fileset.json."""
from roastcoffea import MetricsCollector, track_metrics

import argparse
import json
from pathlib import Path

import awkward as ak
from coffea import processor
from coffea.nanoevents import NanoAODSchema
from distributed import Client


class MuonCounter(processor.ProcessorABC):
    @track_metrics
    def process(self, events):
        muons = events.Muon[events.Muon.pt > 10]
        return {events.metadata["dataset"]: {"entries": len(events),
                                             "muons": int(ak.sum(ak.num(muons)))}}

    def postprocess(self, accumulator):
        return accumulator


def plain(value):
    """value with tuple keys as text (roastcoffea's span metrics have them),
    for --result's JSON."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("--files", type=Path, required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--chunksize", type=int, default=10000)
    ap.add_argument("--result", type=Path, help="write get_metrics() and the path as JSON")
    args = ap.parse_args()

    fileset = json.loads((args.files / "fileset.json").read_text())
    client = Client(args.scheduler)
    proc = MuonCounter()
    runner = processor.Runner(executor=processor.DaskExecutor(client=client, status=False),
                              schema=NanoAODSchema, chunksize=args.chunksize, savemetrics=True)
    with MetricsCollector(client, processor_instance=proc) as collector:
        output, report = runner(fileset, processor_instance=proc, treename="Events")
        collector.extract_metrics_from_output(output)
        collector.set_coffea_report(report)

    metrics = collector.get_metrics()
    path = collector.save_measurement(args.output, measurement_name="measurement")
    collector.print_summary()
    client.close()
    if args.result:
        args.result.write_text(json.dumps({"metrics": plain(metrics), "path": str(path),
                                           "entries": int(report["entries"])}, default=str))


if __name__ == "__main__":
    main()
