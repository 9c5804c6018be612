"""Writes the datagram fuzzers' seed corpora: one body of
every kind for fuzz_event_datagram, and each framed for fuzz_udp, untagged
and tagged under the all-zero key its keyed listener holds. The bodies are
the Python emitter's (python/roastop/wire.py), so the seeds are what a
real sender puts on the wire. Standard library only.

    python3 scripts/fuzz_seeds.py [CORPUS_DIR]   (default tests/fuzz/corpus)
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from roastop.wire import encode, frame, keyed_mac  # noqa: E402

ENVELOPE = {"host": "node-042.cluster.example.org", "pid": 4242, "instance": 2 ** 53 - 1,
            "seq": 17, "sent": 1767225600.25}
FILE = "root://eos.example.org//store/DY/nano_0001.root"

MESSAGES = {
    "chunk": {"type": "chunk", "run_id": "5f0c2b9d", "t_start": 1767225595.5,
              "t_end": 1767225600.0, "duration": 4.5, "mem_before_mb": 1012.5,
              "mem_after_mb": 1030.25, "mem_delta_mb": 17.75, "bytes_read": 15468008,
              "timestamp": 1767225600.0, "num_events": 134190, "dataset": "DYJetsToLL",
              "file": FILE, "uuid": "a1b2c3d4", "entry_start": 0, "entry_stop": 134190,
              "accessed_branches": ["nMuon", "Muon_pt"], "num_branches_accessed": 2,
              "accessed_bytes": 13921207, "bytes_read_percent": 3.25,
              "timing": {"selection": 0.375}, "memory": {"selection": 5.5},
              "bytes": {"muons": 1000.0},
              "file_metadata": {"filename": FILE, "compression_ratio": 0.31,
                                "total_branches": 1200, "total_tree_bytes": 2.5e9},
              "cpu_time": 4.25, "worker": "tcp://10.0.3.17:38211", "error": "ValueError",
              "start_seq": 16, **ENVELOPE},
    "chunk_start": {"type": "chunk_start", "run_id": "5f0c2b9d", "dataset": "DYJetsToLL",
                    "file": FILE, "uuid": "a1b2c3d4", "entry_start": 0, "entry_stop": 134190,
                    "worker": "w-3", "t_start": 1767225595.5, **ENVELOPE},
    "heartbeat": {"type": "heartbeat", "cpu_time": 12.5, "chunks_in_flight": 2,
                  "interval": 1.0, "rss_bytes": 104857600, "worker": "w-3", **ENVELOPE},
    "run_start": {"type": "run_start", "run_id": "5f0c2b9d", "name": "dimuon",
                  "processor": "DimuonProcessor", "datasets": ["DYJetsToLL", "TTbar"],
                  "expected_events": 1000000, "client_host": "laptop", "client_pid": 99,
                  **ENVELOPE},
    "run_end": {"type": "run_end", "run_id": "5f0c2b9d", "status": "failed",
                "error_type": "ValueError", "error_message": "boom", **ENVELOPE},
    "report": {"type": "report", "run_id": "5f0c2b9d", "bytesread": 15468008.0,
               "entries": 134190, "processtime": 12.5, "chunks": 3,
               "columns": ["Muon_pt-data", "nMuon-offsets"], **ENVELOPE},
    "report_part": {"type": "report", "run_id": "5f0c2b9d", "report_id": "0a1b2c3d",
                    "part": 1, "parts": 3, "columns": ["Muon_eta-data"], **ENVELOPE},
    "hello": {"type": "hello", "nonce": "0123456789abcdef0123456789abcdef",
              "host": "laptop", "pid": 99, "instance": 7, "sent": 1767225600.5},
    "ack": {"type": "ack", "nonce": "0123456789abcdef0123456789abcdef"},
}


def main(corpus):
    zero_key = keyed_mac(bytes(32))
    for name, msg in MESSAGES.items():
        body, dropped = encode(msg)
        assert dropped == 0, name
        (corpus / "fuzz_event_datagram" / f"seed_{name}").write_bytes(body)
        (corpus / "fuzz_udp" / f"seed_{name}").write_bytes(frame(body, None))
        (corpus / "fuzz_udp" / f"seed_{name}_tagged").write_bytes(frame(body, zero_key))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "fuzz" / "corpus")
