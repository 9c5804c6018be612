#!/usr/bin/env python3
"""Writes NanoAOD-like ROOT files for the dimuon example with uproot.

Two datasets ("DYJetsToLL" with a Z -> mu mu peak in part of its events and
"TTbar" without), several files each, an "Events" tree with the NanoAOD
branches the processor reads: run, luminosityBlock, event, nMuon, Muon_pt/eta/phi/mass/charge, nJet,
Jet_pt/eta/phi/mass. Deterministic: the same seed writes the same events.

    python examples/make_files.py OUTDIR [--events-per-file N] [--files-per-dataset K]

Prints the fileset as JSON (dataset -> list of paths) and writes it to
OUTDIR/fileset.json together with the event counts (OUTDIR/truth.json)."""
import argparse
import json
from pathlib import Path

import awkward as ak
import numpy as np
import uproot

MUON_MASS = 0.1057
Z_MASS, Z_WIDTH = 91.19, 2.5
DATASETS = {"DYJetsToLL": 0.4, "TTbar": 0.0}   # fraction of events with a Z -> mu mu pair


def _jagged(counts, values):
    return ak.unflatten(values, counts)


def _random_muons(rng, n):
    counts = rng.poisson(1.3, n)
    total = int(counts.sum())
    return counts, {
        "pt": rng.exponential(18.0, total) + 3.0,
        "eta": rng.uniform(-2.4, 2.4, total),
        "phi": rng.uniform(-np.pi, np.pi, total),
        "mass": np.full(total, MUON_MASS),
        "charge": rng.choice(np.array([-1, 1], dtype=np.int32), total),
    }


def _z_pairs(rng, n):
    """Two opposite-charge muons from a Z at rest in the transverse plane,
    boosted along z: the pair's invariant mass is the Breit-Wigner draw."""
    m = np.abs(Z_MASS + Z_WIDTH / 2 * np.tan(np.pi * (rng.uniform(size=n) - 0.5)))
    m = np.clip(m, 60.0, 120.0)
    p = np.sqrt(np.maximum((m / 2) ** 2 - MUON_MASS ** 2, 0.0))
    cos_t = rng.uniform(-1, 1, n)
    sin_t = np.sqrt(1 - cos_t ** 2)
    phi = rng.uniform(-np.pi, np.pi, n)
    pt = p * sin_t
    eta = np.arcsinh(cos_t / np.maximum(sin_t, 1e-9))
    eta2 = -eta
    phi2 = np.where(phi > 0, phi - np.pi, phi + np.pi)
    return {
        "pt": np.stack([pt, pt], axis=1).ravel(),
        "eta": np.stack([eta, eta2], axis=1).ravel(),
        "phi": np.stack([phi, phi2], axis=1).ravel(),
        "mass": np.full(2 * n, MUON_MASS),
        "charge": np.tile(np.array([1, -1], dtype=np.int32), n),
    }


def make_events(rng, n, z_fraction, first_event):
    """One file's arrays: the event ID (NanoAODSchema requires it), muons
    (random, or a Z pair in z_fraction of the events) and jets."""
    is_z = rng.uniform(size=n) < z_fraction
    counts, fields = _random_muons(rng, n)
    counts[is_z] = 2
    nz = int(is_z.sum())
    z = _z_pairs(rng, nz)
    # rebuild the flat arrays with each Z event's two muons in its place
    out = {k: np.empty(int(counts.sum()), dtype=v.dtype) for k, v in fields.items()}
    offsets = np.concatenate([[0], np.cumsum(counts)])
    z_slots = np.concatenate([np.arange(offsets[i], offsets[i + 1])
                              for i in np.flatnonzero(is_z)]) if nz else np.array([], int)
    mask = np.ones(len(out["pt"]), dtype=bool)
    mask[z_slots] = False
    for k in out:
        out[k][z_slots] = z[k]
        out[k][mask] = fields[k][:int(mask.sum())]
    njet = rng.poisson(3.0, n)
    nj = int(njet.sum())
    jets = {"pt": rng.exponential(35.0, nj) + 15.0, "eta": rng.uniform(-4.7, 4.7, nj),
            "phi": rng.uniform(-np.pi, np.pi, nj), "mass": rng.exponential(8.0, nj)}
    muon = ak.zip({k: _jagged(counts, v.astype(np.float32) if k != "charge" else v)
                   for k, v in out.items()})
    jet = ak.zip({k: _jagged(njet, v.astype(np.float32)) for k, v in jets.items()})
    ids = {"run": np.ones(n, dtype=np.uint32),
           "luminosityBlock": (np.arange(n) // 1000 + 1).astype(np.uint32),
           "event": np.arange(first_event, first_event + n, dtype=np.uint64)}
    return dict(ids, Muon=muon, Jet=jet)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--events-per-file", type=int, default=50000)
    ap.add_argument("--files-per-dataset", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--relative-paths", action="store_true",
                    help="fileset paths as given (relative to the working directory the "
                         "client and workers share), not made absolute")
    args = ap.parse_args()
    args.outdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    fileset, counts = {}, {}
    for dataset, z_fraction in DATASETS.items():
        files = []
        for i in range(args.files_per_dataset):
            path = args.outdir / f"{dataset}_{i}.root"
            if not args.relative_paths:
                path = path.resolve()
            arrays = make_events(rng, args.events_per_file, z_fraction,
                                 1 + i * args.events_per_file)
            with uproot.recreate(path) as f:
                # NanoAOD names: nMuon counts Muon_pt, Muon_eta, ...
                f.mktree("Events", {k: getattr(v, "type", None) or v.dtype
                                    for k, v in arrays.items()},
                         counter_name=lambda counted: "n" + counted,
                         field_name=lambda outer, inner: f"{outer}_{inner}")
                f["Events"].extend(arrays)
            files.append(str(path))
        fileset[dataset] = files
        counts[dataset] = args.events_per_file * args.files_per_dataset
    (args.outdir / "fileset.json").write_text(json.dumps(fileset, indent=1) + "\n")
    truth = {"events_per_dataset": counts, "total_events": sum(counts.values()),
             "files": sum(len(f) for f in fileset.values())}
    (args.outdir / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    print(json.dumps(fileset))


if __name__ == "__main__":
    main()
