"""A dimuon analysis as a coffea processor, measured by roastop.

Opposite-charge muon pairs -> invariant mass histogram; jets -> pT histogram;
per dataset. The only roastop-specific line is the import below: it is
roastcoffea's API, so going back to roastcoffea is this one line (the
side-by-side test does exactly that through DIMUON_METRICS)."""
import os
import time

import awkward as ak
import hist
from coffea import processor

if os.environ.get("DIMUON_METRICS") == "roastcoffea":
    from roastcoffea import track_memory, track_metrics, track_time
else:
    from roastop import track_memory, track_metrics, track_time


class DimuonProcessor(processor.ProcessorABC):
    """Histograms per dataset: dimuon mass (opposite-charge pairs of the two
    leading good muons) and the pT of good jets; plus the event counts."""

    def __init__(self, muon_pt=5.0, jet_pt=30.0, slow_file=None, slow_seconds=0.0):
        self.muon_pt = muon_pt
        self.jet_pt = jet_pt
        # a file whose chunks take longer, for the demo: each spins
        # slow_seconds more of CPU (a spin, not a sleep: a process() that
        # sleeps waits off the CPU, which roastop tells as I/O bound)
        self.slow_file = slow_file
        self.slow_seconds = slow_seconds

    @track_metrics
    def process(self, events):
        dataset = events.metadata["dataset"]
        if self.slow_file and os.path.basename(events.metadata["filename"]) == self.slow_file:
            spent = time.thread_time() + self.slow_seconds
            while time.thread_time() < spent:
                pass
        with track_time(self, "muon_selection"):
            mu = events.Muon
            good = mu[(mu.pt > self.muon_pt) & (abs(mu.eta) < 2.4)]
            pairs = good[ak.num(good) >= 2][:, :2]
            opposite = pairs[pairs.charge[:, 0] != pairs.charge[:, 1]]
            mass = (opposite[:, 0] + opposite[:, 1]).mass
        with track_time(self, "jet_selection"):
            jet = events.Jet
            jets = jet[(jet.pt > self.jet_pt) & (abs(jet.eta) < 2.5)]
            jet_pt = ak.flatten(jets.pt)
        with track_memory(self, "histograms"):
            h_mass = hist.Hist.new.Reg(120, 0, 150, name="mass", label=r"$m_{\mu\mu}$ [GeV]").Double()
            h_mass.fill(mass=ak.to_numpy(mass))
            h_jet = hist.Hist.new.Reg(100, 0, 300, name="pt", label=r"jet $p_T$ [GeV]").Double()
            h_jet.fill(pt=ak.to_numpy(jet_pt))
        return {dataset: {"entries": len(events), "pairs": len(mass),
                          "mass": h_mass, "jet_pt": h_jet}}

    def postprocess(self, accumulator):
        return accumulator
