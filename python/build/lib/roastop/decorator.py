"""@track_metrics: roastcoffea 0.1.2's chunk record, sent to roastop as one
datagram per chunk instead of being injected into the output."""
import functools
import time

from roastop.emitter import emitter_for, emitter_from_env
from roastop.instrumentation import _requested_bytes, process_memory_mb

_env_emitter = []


def _emitter(processor):
    addr = getattr(processor, "_roastop_addr", None)
    if addr:
        return emitter_for(addr, getattr(processor, "_roastop_key", None))
    if not _env_emitter:
        _env_emitter.append(emitter_from_env())
    return _env_emitter[0]


_get_worker = []


def _worker_name():
    """The Dask worker's name; the import is tried once per process (a failed
    import is not cached by Python and would be retried on every chunk)."""
    if not _get_worker:
        try:
            from distributed import get_worker
        except Exception:  # noqa: BLE001 - distributed is optional
            get_worker = None
        _get_worker.append(get_worker)
    if _get_worker[0] is None:
        return None
    try:
        return str(_get_worker[0]().name)
    except Exception:  # noqa: BLE001 - not on a Dask worker
        return None


def _chunk_metadata(events):
    out = {}
    try:
        out["num_events"] = len(events)
    except Exception:  # noqa: BLE001
        pass
    meta = getattr(events, "metadata", None) or {}
    for field, key in (("dataset", "dataset"), ("file", "filename"), ("uuid", "uuid"),
                       ("entry_start", "entrystart"), ("entry_stop", "entrystop")):
        value = meta.get(key) if hasattr(meta, "get") else None
        if value is not None:
            out[field] = value
    return out


def _tree(events):
    factory = events.attrs.get("@events_factory")
    meta = events.metadata
    return factory, factory.file_handle[meta.get("treename", "Events")]


def _file_metadata(processor, events):
    """Once per file per worker (roastcoffea's dedup set on the processor)."""
    seen = processor.__dict__.setdefault("_roastcoffea_processed_files", set())
    try:
        filename = events.metadata.get("filename")
        if not filename or filename in seen:
            return None
        _, tree = _tree(events)
        compressed, uncompressed = tree.compressed_bytes, tree.uncompressed_bytes
        seen.add(filename)
        return {"filename": filename,
                "compression_ratio": compressed / uncompressed if uncompressed > 0 else 0.0,
                "total_branches": len(tree.keys()), "total_tree_bytes": compressed}
    except Exception:  # noqa: BLE001 - no file handle: no file metadata
        return None


def _branch_metrics(events):
    """Accessed branches from uproot's access log; their bytes from the tree."""
    try:
        factory, tree = _tree(events)
        branches = {entry.branch for entry in factory.access_log}
    except Exception:  # noqa: BLE001
        return {}
    comp = uncomp = 0
    for b in branches:
        try:
            comp += tree[b].compressed_bytes
            uncomp += tree[b].uncompressed_bytes
        except Exception:  # noqa: BLE001
            pass
    total_branches, total_bytes = len(tree.keys()), tree.compressed_bytes
    return {
        "accessed_branches": sorted(branches), "num_branches_accessed": len(branches),
        "accessed_bytes": comp, "accessed_uncompressed_bytes": uncomp,
        "branches_read_percent": 100 * len(branches) / total_branches if total_branches else 0.0,
        "bytes_read_percent": 100 * comp / total_bytes if total_bytes else 0.0,
    }


def _has_factory(events):
    """Whether events come from a coffea file factory (NanoEvents from ROOT);
    checked once per chunk so that plain arrays skip the file lookups."""
    try:
        return events.attrs.get("@events_factory") is not None
    except Exception:  # noqa: BLE001
        return False


def _record(processor, events, start, error):
    """The chunk record: roastcoffea 0.1.2's fields plus cpu_time, worker, error."""
    t_end, mem_after = time.time(), process_memory_mb()
    rec = {"type": "chunk", "run_id": getattr(processor, "_roastop_run_id", None),
           "t_start": start["t"], "t_end": t_end, "duration": t_end - start["t"],
           "timestamp": t_end, "cpu_time": time.thread_time() - start["cpu"]}
    if start["mem"] is not None and mem_after is not None:
        rec.update(mem_before_mb=start["mem"], mem_after_mb=mem_after,
                   mem_delta_mb=mem_after - start["mem"])
    rec.update(_chunk_metadata(events))
    if start["factory"]:
        bytes_after = _requested_bytes(events)
        if start["bytes"] is not None and bytes_after is not None:
            rec["bytes_read"] = bytes_after - start["bytes"]
        rec.update(_branch_metrics(events))
    sections = getattr(processor, "_roastcoffea_current_chunk", None) or {}
    for kind in ("timing", "memory", "bytes"):
        if sections.get(kind):
            rec[kind] = sections[kind]
    if start["file_metadata"]:
        rec["file_metadata"] = start["file_metadata"]
    worker = _worker_name()
    if worker:
        rec["worker"] = worker
    if error is not None:
        rec["error"] = type(error).__name__
    return rec


def track_metrics(func):
    """Decorates process(): one datagram per chunk while a MetricsCollector
    has collection on (roastcoffea's ``_roastcoffea_collect_metrics`` flag)."""

    @functools.wraps(func)
    def wrapper(self, events, *args, **kwargs):
        emitter = _emitter(self) if getattr(self, "_roastcoffea_collect_metrics", False) else None
        if emitter is None:
            return func(self, events, *args, **kwargs)
        self._roastcoffea_current_chunk = {"timing": {}, "memory": {}, "bytes": {}}
        factory = _has_factory(events)
        start = {"t": time.time(), "cpu": time.thread_time(), "mem": process_memory_mb(),
                 "factory": factory, "bytes": _requested_bytes(events) if factory else None,
                 "file_metadata": _file_metadata(self, events) if factory else None}
        error = None
        try:
            return func(self, events, *args, **kwargs)
        except Exception as exc:
            error = exc
            raise
        finally:
            try:
                emitter.send(_record(self, events, start, error))
            except Exception:  # noqa: BLE001 - measuring must never break the analysis
                emitter.lost += 1
            self.__dict__.pop("_roastcoffea_current_chunk", None)

    return wrapper
