"""bench emitter_overhead: what @track_metrics adds to one real chunk.

Writes three NanoAOD-like files with uproot (examples/make_files.py's
events, one basket per chunk), opens 5,000-event chunks of them as coffea's
Runner does (the file opened per chunk, ``NanoEventsFactory.from_root(...,
mode="virtual")`` with an access log), and times the same
process() (muon selections, one track_time section) five ways on each
chunk, in an order that goes through every permutation, in one process:
undecorated, under roastcoffea 0.1.2's @track_metrics and under roastop's
three ways: as it is by default (the chunk's datagram after the call, its
chunk_start left pending for the process's heartbeat, which sends it only
for a chunk still running at its next beat: none for these chunks of ~10 ms
unless a beat falls inside one), with the heartbeat off (``syncstart``: the
chunk_start sent just before the call, on the chunk's path, as before issue
23) and with its chunk_start switched off (``nostart``: the chunk only),
sending to a local UDP socket that another process drains (see Sink). Each
chunk is opened afresh for each way, so every way reads its own branches. A decorator's overhead is the median over the
chunks of its call's time less the time of the process() body inside it
(the body times itself): reading and decompressing the branches varies
from chunk to chunk by more than a decorator costs, and would drown the
difference of two calls; the difference of the medians against the plain
call is printed beside it.

The chunk_start is counted both ways it can cost. On the path of a chunk
shorter than a beat, the default's deferred start costs what it adds over
``nostart`` (a pending insert and removal under a lock):
emitter_chunk_start_deferred_us. A start sent on the chunk's path costs
``syncstart`` less ``nostart``: emitter_chunk_start_us, what every chunk paid
before and still pays with the heartbeat off. What the beat pays to announce
a chunk still running (its send_chunk_start, timed in the heartbeat thread,
off the chunk's path, in that thread's CPU time; its wall time, GIL waits
included, beside it) is emitter_chunk_start_announce_us, with how many chunks
were announced: a beat falls inside one of the default's chunks now and then.

Needs coffea, uproot, awkward and roastcoffea (the test venv, build/venv:
`make bench` runs it there). ``--chunks N`` sets the number of chunks (120;
6 with BENCH_SMOKE=1, make bench-smoke, whose figures mean nothing);
``--profile`` prints where roastop's decorator spends its time instead."""
import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "examples"))

import awkward as ak  # noqa: E402
import numpy as np  # noqa: E402
import uproot  # noqa: E402
from coffea.nanoevents import NanoAODSchema, NanoEventsFactory  # noqa: E402

import roastcoffea  # noqa: E402
import roastop  # noqa: E402
from make_files import make_events  # noqa: E402

CHUNK = 5000
FILES = 3            # chunks are spread over files: per-file work is paid per file
SMOKE = os.environ.get("BENCH_SMOKE") == "1"


def write_files(outdir, n_chunks):
    """FILES NanoAOD-like files holding n_chunks chunks of CHUNK events in all."""
    rng = np.random.default_rng(20261124)
    per_file = -(-n_chunks // FILES) * CHUNK
    paths = []
    for i in range(FILES):
        path = Path(outdir) / f"bench_{i}.root"
        arrays = make_events(rng, per_file, 0.4, 1 + i * per_file)
        with uproot.recreate(path) as f:
            f.mktree("Events", {k: getattr(v, "type", None) or v.dtype
                                for k, v in arrays.items()},
                     counter_name=lambda counted: "n" + counted,
                     field_name=lambda outer, inner: f"{outer}_{inner}")
            for start in range(0, per_file, CHUNK):   # one basket per chunk, as NanoAOD
                f["Events"].extend({k: v[start:start + CHUNK] for k, v in arrays.items()})
        paths.append(str(path))
    return paths, per_file


BODY = [0.0]         # seconds the last process() body took, timed from inside it


def make_process(track_time):
    """The analysis: muons with pt and eta cuts, pairs of the two leading
    ones. It times itself, so that what a decorator adds to a call is the
    call's time less its body's, free of the body's own noise (reading and
    decompressing the branches varies by more than a decorator costs)."""
    def process(self, events):
        t = time.perf_counter()
        with track_time(self, "muon_selection"):
            mu = events.Muon
            good = mu[(mu.pt > 5.0) & (abs(mu.eta) < 2.4)]
            pairs = good[ak.num(good) >= 2][:, :2]
            n = int(ak.sum(pairs.charge[:, 0] != pairs.charge[:, 1]))
        BODY[0] = time.perf_counter() - t
        return {"entries": len(events), "pairs": n}
    return process


class Plain:
    process = make_process(roastop.track_time)   # outside a tracked chunk: records nothing


class Roastcoffea:
    process = roastcoffea.track_metrics(make_process(roastcoffea.track_time))
    _roastcoffea_collect_metrics = True         # what its MetricsCollector sets


class Roastop:
    process = roastop.track_metrics(make_process(roastop.track_time))


class RoastopNoStart:
    """roastop's decorator through an Emitter of its own (another key) with
    its chunk_start switched off, as ROASTOP_CHUNK_START=0 does."""
    process = roastop.track_metrics(make_process(roastop.track_time))


class RoastopSyncStart:
    """roastop's decorator through an Emitter of its own with its heartbeat
    off (ROASTOP_HEARTBEAT=0): the chunk_start goes before the call."""
    process = roastop.track_metrics(make_process(roastop.track_time))


NOSTART_KEY = "cd" * 32
SYNCSTART_KEY = "ef" * 32


def own_emitter(cls, key, addr, run_id, **settings):
    """An instance of cls sending through the Emitter for key, with settings
    (chunk_start, heartbeat) made before its first chunk."""
    proc = cls()
    proc._roastcoffea_collect_metrics = True      # what MetricsCollector sets
    proc._roastop_addr, proc._roastop_key, proc._roastop_run_id = addr, key, run_id
    e = roastop.emitter.emitter_for(addr, key)
    for name, value in settings.items():
        setattr(e, name, value)
    return proc


class Announced:
    """What each send_chunk_start of an emitter costs: its heartbeat's
    announcements (the chunk thread sends none through it), in the beat
    thread's CPU time (us) and wall time (wall_us: with its waits for the
    GIL, which the chunk's thread holds while it runs)."""

    def __init__(self, emitter):
        self.us, self.wall_us = [], []
        send = emitter.send_chunk_start

        def timed(*args):
            t, c = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return send(*args)
            finally:
                self.us.append((time.thread_time_ns() - c) / 1000)
                self.wall_us.append((time.perf_counter_ns() - t) / 1000)
        emitter.send_chunk_start = timed


def open_chunk(file, path, start):
    """The events of one chunk as coffea's Runner makes them (_work_function):
    from an open file, with an access log, in virtual mode."""
    return NanoEventsFactory.from_root(
        file=file, treepath="Events", entry_start=start, entry_stop=start + CHUNK,
        mode="virtual", schemaclass=NanoAODSchema, access_log=[],
        metadata={"dataset": "DYJetsToLL", "filename": path, "treename": "Events",
                  "entrystart": start, "entrystop": start + CHUNK, "uuid": "bench"},
    ).events()


DRAIN = r"""
import select, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.setblocking(False)
print(s.getsockname()[1], flush=True)
n = {1: 0, 2: 0}
while True:
    done = select.select([sys.stdin], [], [], 0.02)[0] and not sys.stdin.readline()
    try:
        while True:
            data = s.recv(70000)
            if data.startswith(b"RTP2\x01") and data[37] in n:
                n[data[37]] += 1
    except BlockingIOError:
        pass
    if done:
        print(n[1], n[2], flush=True)
        break
"""


class Sink:
    """A UDP socket on loopback, drained by another process every 20 ms:
    counts chunk and chunk_start datagrams. Not a thread here, which would take the GIL
    from the sender at every datagram, and not a reader blocked on the
    socket, which the sender's sendto would wake across CPUs at every
    datagram (on this project's VM ~50 us a datagram, charged to the
    sender): a worker sending to roastop on another host pays neither."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", DRAIN], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.addr = "127.0.0.1:%s" % self.proc.stdout.readline().strip()

    def chunks(self):
        """(chunk, chunk_start) datagrams received, once the last one sent
        has arrived."""
        time.sleep(0.2)
        self.proc.stdin.close()
        n = tuple(int(x) for x in self.proc.stdout.readline().split())
        self.proc.wait()
        return n


def chunks_of(paths, per_file, n):
    starts = [(p, s) for p in paths for s in range(0, per_file, CHUNK)]
    return starts[:n]


def run(chunks, procs):
    """{name: [seconds per chunk]} for each processor, and {name: [seconds
    the call took beyond its body]}. The order changes per chunk through
    every permutation, so that each way follows each other as often (a
    rotation keeps one cyclic order: roastop without its chunk_start would
    always run right after roastop with it, its code still warm)."""
    times = {name: [] for name in procs}
    added = {name: [] for name in procs}
    orders = list(itertools.permutations(procs))
    for i, (path, start) in enumerate(chunks):
        order = orders[i % len(orders)]
        for name in order:
            with uproot.open({path: None}) as file:     # per chunk, as the Runner does
                events = open_chunk(file, path, start)
                t = time.perf_counter()
                procs[name].process(events)
                t = time.perf_counter() - t
                times[name].append(t)
                added[name].append(t - BODY[0])
    return times, added


def median_us(values):
    return statistics.median(values) * 1e6


def profile(chunks, proc):
    import cProfile
    import pstats
    prof = cProfile.Profile()
    for path, start in chunks:
        with uproot.open({path: None}) as file:
            events = open_chunk(file, path, start)
            prof.enable()
            proc.process(events)
            prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats("roastop", 40)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=6 if SMOKE else 120)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")   # coffea's and uproot's deprecation notices
    sink = Sink()
    ro = Roastop()
    with tempfile.TemporaryDirectory() as d, \
            roastop.MetricsCollector(None, processor_instance=ro, addr=sink.addr,
                                     key="ab" * 32, hello=False):  # the sink never answers
        paths, per_file = write_files(d, args.chunks)
        chunks = chunks_of(paths, per_file, args.chunks)
        run_id = ro._roastop_run_id
        procs = {"plain": Plain(), "roastcoffea": Roastcoffea(), "roastop": ro,
                 "roastop_nostart": own_emitter(RoastopNoStart, NOSTART_KEY, sink.addr, run_id,
                                                chunk_start=False),
                 "roastop_syncstart": own_emitter(RoastopSyncStart, SYNCSTART_KEY, sink.addr,
                                                  run_id, heartbeat=False)}
        announced = Announced(roastop.emitter.emitter_for(sink.addr, "ab" * 32))
        run(chunks[:6], procs)                       # imports, caches of the code itself
        if args.profile:
            profile(chunks, ro)
        else:
            times, added = run(chunks, procs)
    received, starts = sink.chunks()
    if args.profile:
        return
    calls = len(chunks) + 6               # real sends, not an emitter failing fast
    if received < 3 * calls or starts < calls + len(announced.us):
        sys.exit("bench_emitter: roastop's datagrams did not arrive (%d of %d chunks, "
                 "%d of %d starts)" % (received, 3 * calls, starts, calls + len(announced.us)))
    ro_us, rc_us = median_us(added["roastop"]), median_us(added["roastcoffea"])
    nostart_us = median_us(added["roastop_nostart"])
    sync_us = median_us(added["roastop_syncstart"])
    print("bench emitter_process_plain_us: %.0f us (%d chunks of %d events)"
          % (median_us(times["plain"]), len(chunks), CHUNK))
    print("bench emitter_overhead_roastcoffea_us: %.1f us (call - body; vs plain call: %.0f)"
          % (rc_us, median_us(times["roastcoffea"]) - median_us(times["plain"])))
    print("bench emitter_overhead_roastop_us: %.1f us (call - body, chunk_start deferred to the "
          "heartbeat; vs plain call: %.0f)"
          % (ro_us, median_us(times["roastop"]) - median_us(times["plain"])))
    print("bench emitter_overhead_roastop_syncstart_us: %.1f us (call - body, ROASTOP_HEARTBEAT=0:"
          " the chunk_start on the chunk's path; vs plain call: %.0f)"
          % (sync_us, median_us(times["roastop_syncstart"]) - median_us(times["plain"])))
    print("bench emitter_overhead_roastop_nostart_us: %.1f us (call - body, ROASTOP_CHUNK_START=0;"
          " vs plain call: %.0f)"
          % (nostart_us, median_us(times["roastop_nostart"]) - median_us(times["plain"])))
    print("bench emitter_chunk_start_deferred_us: %.1f us (default - nostart: a chunk shorter "
          "than a beat)" % (ro_us - nostart_us))
    print("bench emitter_chunk_start_us: %.1f us (syncstart - nostart: a start on the chunk's "
          "path)" % (sync_us - nostart_us))
    if announced.us:
        print("bench emitter_chunk_start_announce_us: %.1f us (the heartbeat thread's CPU to send "
              "a running chunk's start, off its path; wall %.0f us; %d of %d chunks announced)"
              % (statistics.median(announced.us), statistics.median(announced.wall_us),
                 len(announced.us), calls))
    else:
        print("bench emitter_chunk_start_announce_us: n/a us (no chunk was running at a beat; "
              "%d chunks)" % calls)
    print("bench emitter_overhead_syncstart_vs_roastcoffea: %.2f ratio (the start on every "
          "chunk's path, ROASTOP_HEARTBEAT=0)" % (sync_us / rc_us))
    print("bench emitter_overhead_vs_roastcoffea: %.2f ratio (target <= 0.20)" % (ro_us / rc_us))

if __name__ == "__main__":
    main()
