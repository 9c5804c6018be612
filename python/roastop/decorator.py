"""@track_metrics: roastcoffea 0.1.2's chunk record, sent to roastop as one
datagram per chunk instead of being injected into the output; a chunk still
running at its process's next heartbeat is announced in flight by a
chunk_start datagram the heartbeat sends.

Every read from a coffea object is guarded: a missing attribute leaves its
fields out of the record, and nothing here ever raises into process()."""
import functools
import operator
import os
import sys
import time
import warnings

from roastop._state import current_pid, ship_by_value, shared
from roastop.emitter import emitter_for, emitter_from_env
from roastop.transport import dask_worker, parse_transport
from roastop.wire import Static, chunk_message
from roastop.instrumentation import (cpu_wait_seconds, current_chunks, process_memory_mb,
                                     source_bytes)

FLAG = "_roastcoffea_collect_metrics"

# Per process, in shared() (roastop._state explains why not plain globals): env_emitter
# (the ROASTOP_ADDR emitter), files_seen ((run_id, filename): file_metadata once per file),
# file_facts, chunk_static, chunk_files (_file_parts), refused ((addr, key) refused: warned
# about once).


def _attr(processor, name):
    """processor.name, None when reading it fails in any way: getattr's
    default covers only AttributeError, and a processor's __getattr__ may
    raise anything (KeyError from a dict lookup); that must not reach process()."""
    try:
        return getattr(processor, name, None)
    except Exception:  # noqa: BLE001
        return None


def _collecting(processor):
    """roastcoffea's flag (see _attr)."""
    try:
        return bool(_attr(processor, FLAG))
    except Exception:  # noqa: BLE001 - a flag without a truth value: not collecting
        return False


def _emitter(processor):
    """The Emitter for this processor: the collector's address and key
    (pickled with the processor), else the environment's; None without either."""
    try:
        addr = _attr(processor, "_roastop_addr")
        if addr:
            key = _attr(processor, "_roastop_key")
            try:      # emitter_for's cache as it spells it: one lookup per chunk, not three
                return shared("emitter_cache", dict)[(addr, key)]
            except (KeyError, TypeError):   # not made yet, or refused (never cached)
                return _with_transport(_unless_refused(emitter_for, addr, key), processor)
        env = shared("env_emitter", list)
        if not env:
            env.append(_unless_refused(emitter_from_env))
        return env[0]
    except Exception:  # noqa: BLE001 - the analysis runs unmeasured
        return None


def _with_transport(emitter, processor):
    """emitter, taking the client's ROASTOP_TRANSPORT (pickled with the
    processor) unless this process's environment names one."""
    transport = _attr(processor, "_roastop_transport")
    if emitter is not None and transport and not os.environ.get("ROASTOP_TRANSPORT"):
        emitter.transport = parse_transport(transport)
    return emitter


def _unless_refused(make, *args):
    """make(*args); None when it refuses the address or key (ValueError),
    after one warning per process: the analysis runs unmeasured, and the
    refusal is neither made nor warned about again for every chunk."""
    refused = shared("refused", set)
    if args in refused:
        return None
    try:
        return make(*args)
    except ValueError as exc:
        refused.add(args)
        warnings.warn(f"{exc}; this process sends no metrics", RuntimeWarning,
                      stacklevel=2)
        return None


def _worker_name():
    """The Dask worker's name, or None off a worker (transport.dask_worker:
    nothing is imported here); its context variable asked directly."""
    try:
        worker = sys.modules["distributed"].worker._worker_cvar.get(None)
    except Exception:  # noqa: BLE001 - not imported, or not as dask_worker knows it
        worker = dask_worker()
    name = getattr(worker, "name", None)
    return None if name is None else str(name)


_META_KEYS = ("entrystart", "entrystop", "dataset", "filename", "uuid")
_PLAIN_META = frozenset((str, int, float, type(None)))


def _meta_values(meta):
    """meta's values for _META_KEYS as the record carries them (text unless
    a number, None when missing or unreadable), in one C call."""
    try:
        values = list(map(meta.get, _META_KEYS))
        if _PLAIN_META.issuperset(map(type, values)):
            return values
    except Exception:  # noqa: BLE001
        values = []
        for key in _META_KEYS:
            try:
                values.append(meta.get(key))
            except Exception:  # noqa: BLE001
                values.append(None)
    for i, value in enumerate(values):
        if value is not None and not isinstance(value, (str, int, float)):
            values[i] = str(value)
    return values


STATIC_MAX = 256           # Static records remembered per process; more: start again

_STATIC_FIELDS = ("run_id", "dataset", "file", "uuid")


def _file_parts(meta, run_id, factory, rec):
    """The chunk's entry range into rec; its file's Static (run_id, dataset,
    file, uuid: encoded on the file's first chunk in this process), _FileFacts
    and file_metadata (None but on the file's first chunk). A file read
    through a factory keeps the three in chunk_files after its first chunk:
    one lookup a chunk, not three."""
    if meta is None:
        static = _static(("run", run_id), {"run_id": run_id}) if run_id is not None else None
        return static, None, None
    entry_start, entry_stop, dataset, filename, uuid = _meta_values(meta)
    if entry_start is not None:
        rec["entry_start"] = entry_start
    if entry_stop is not None:
        rec["entry_stop"] = entry_stop
    key = (run_id, dataset, filename, uuid)
    if factory is None:
        return _file_static(key), None, None
    files = shared("chunk_files", dict)
    try:
        whole = (key, meta.get("treename", "Events"), meta.get("fileuuid"))
        return files[whole]
    except KeyError:
        pass
    except Exception:  # noqa: BLE001 - unhashable or unreadable: not kept
        whole = None
    static, facts = _file_static(key), _file_facts(factory, meta)
    file_meta = _file_metadata(facts, meta, run_id)
    if whole is not None and facts is not None and (run_id, filename) in shared("files_seen", set):
        if len(files) >= FILE_FACTS_MAX:
            files.clear()
        files[whole] = (static, facts, None)
    return static, facts, file_meta


def _file_static(key):
    """The Static of the fields every chunk of a file repeats, or None."""
    try:
        return shared("chunk_static", dict)[key]
    except (KeyError, TypeError):
        pass
    fields = {name: value for name, value in zip(_STATIC_FIELDS, key) if value is not None}
    return _static(key, fields) if fields else None


def _static(key, fields):
    """The process's Static for key, made of fields the first time."""
    cache = shared("chunk_static", dict)
    try:
        return cache[key]
    except KeyError:
        pass
    except TypeError:                        # an unhashable value: not kept
        return Static(fields)
    if len(cache) >= STATIC_MAX:
        cache.clear()
    return cache.setdefault(key, Static(fields))


def _tree(factory, meta):
    try:
        name = meta.get("treename", "Events")
    except Exception:  # noqa: BLE001
        name = "Events"
    return factory.file_handle[name]


class _FileFacts:
    """What one file's tree says that no chunk changes: read from uproot on
    the first chunk of the file in this process, not on every chunk (coffea
    opens the file afresh for each chunk, and summing a tree's baskets cost
    more than the rest of the decorator). Branch sizes, and the encoded
    branch fields of each set of branches read, are added as chunks need them."""

    __slots__ = ("total_branches", "total_bytes", "uncompressed", "branches", "accessed")

    def __init__(self, tree):
        self.total_branches = len(tree.keys())
        self.total_bytes = tree.compressed_bytes
        self.uncompressed = tree.uncompressed_bytes
        self.branches = {}            # name -> (compressed, uncompressed), None: no such branch
        self.accessed = {}            # frozenset of branch names -> Static

    def branch_bytes(self, name, tree_of):
        """(compressed, uncompressed) of a branch, read from the tree
        (tree_of(), the chunk's) the first time it is asked for."""
        try:
            return self.branches[name]
        except KeyError:
            pass
        try:
            branch = tree_of()[name]
            sizes = (branch.compressed_bytes, branch.uncompressed_bytes)
        except Exception:  # noqa: BLE001 - a branch the tree does not have: no bytes
            sizes = None
        self.branches[name] = sizes
        return sizes


FILE_FACTS_MAX = 256       # files remembered per process; more: start again


def _file_facts(factory, meta):
    """This process's _FileFacts of the chunk's file and tree, or None when
    the events carry no file handle or its tree cannot be read."""
    try:
        filename = meta.get("filename")
        # coffea's fileuuid is the file's own (ROOT's): a file rewritten
        # under its name between two runs of one worker is another file
        key = (filename, meta.get("treename", "Events"), meta.get("fileuuid"))
        facts = shared("file_facts", dict)
        found = facts.get(key)
        if found is not None:
            return found
        if not factory.file_handle:
            return None
        if not filename:                          # a file without a name: nothing to key on
            return _FileFacts(_tree(factory, meta))
        if len(facts) >= FILE_FACTS_MAX:
            facts.clear()
        return facts.setdefault(key, _FileFacts(_tree(factory, meta)))
    except Exception:  # noqa: BLE001 - no file handle, tree or metadata: no file facts
        return None


def _file_metadata(facts, meta, run_id):
    """filename, compression_ratio, total_branches, total_tree_bytes; None when
    already sent for this file from this process, or not available."""
    try:
        filename = meta.get("filename")
        if not filename or facts is None:
            return None
        seen = (run_id, filename)
        files_seen = shared("files_seen", set)
        if seen in files_seen:
            return None
        compressed, uncompressed = facts.total_bytes, facts.uncompressed
        file_meta = {"filename": str(filename),
                     "compression_ratio": compressed / uncompressed if uncompressed > 0 else 0.0,
                     "total_branches": facts.total_branches, "total_tree_bytes": compressed}
        files_seen.add(seen)
        return file_meta
    except Exception:  # noqa: BLE001
        return None


ACCESSED_MAX = 64          # sets of branches remembered per file; more: start again
_BRANCH_OF = operator.attrgetter("branch")   # C calls: no comprehension's frame per chunk


def _branch_metrics(factory, facts, meta):
    """Branches in uproot's access log and their bytes (facts of the file),
    as one Static: the chunks of a file mostly read the same branches, so
    their six fields are worked out and encoded once per set; None without
    an access log."""
    try:
        branches = frozenset(map(str, map(_BRANCH_OF, factory.access_log)))
    except Exception:  # noqa: BLE001
        return None
    if facts is None:
        return _static(("branches", branches), {"accessed_branches": sorted(branches),
                                                "num_branches_accessed": len(branches)})
    found = facts.accessed.get(branches)
    if found is None:
        if len(facts.accessed) >= ACCESSED_MAX:
            facts.accessed.clear()
        found = facts.accessed.setdefault(
            branches, Static(_branch_fields(factory, facts, meta, branches)))
    return found


def _branch_fields(factory, facts, meta, branches):
    comp = uncomp = 0
    tree = []

    def tree_of():
        if not tree:
            tree.append(_tree(factory, meta))
        return tree[0]

    for b in branches:
        sizes = facts.branch_bytes(b, tree_of)
        if sizes is not None:
            comp += sizes[0]
            uncomp += sizes[1]
    total_branches, total_bytes = facts.total_branches, facts.total_bytes
    return {"accessed_branches": sorted(branches), "num_branches_accessed": len(branches),
            "accessed_bytes": comp, "accessed_uncompressed_bytes": uncomp,
            "branches_read_percent":
                100 * len(branches) / total_branches if total_branches else 0.0,
            "bytes_read_percent": 100 * comp / total_bytes if total_bytes else 0.0}


def _send_old(emitter, measured, fields, static):
    """One chunk to an Emitter an older roastop left in a long-lived worker
    (no send_chunk taking static): static's fields merged into the rest."""
    for part in static:
        fields = dict(part.fields, **fields)
    send_chunk = getattr(emitter, "send_chunk", None)
    if send_chunk is not None:
        send_chunk(measured, fields)
    else:
        emitter.send(chunk_message(measured, fields))


def _begin_old(emitter, t_start, file_static, entry_start, entry_stop, worker):
    """_Chunk.begin for an older Emitter (no chunk_begin): its own count and
    start, as it did them."""
    start = [None, t_start, file_static, entry_start, entry_stop, worker, None]
    try:
        start[0] = emitter.chunk_began(worker)
        start[6] = emitter.send_chunk_start(t_start, file_static, entry_start, entry_stop,
                                            worker)
    except Exception:  # noqa: BLE001 - older still: no count or no start
        pass
    return start


class _Chunk:
    """One tracked chunk: what the wrapper measured before process() and
    needs after it. Made current for track_time & co (by id(processor) in
    this thread, and as roastcoffea's attribute) until it ends; a nested
    call's enclosing chunk is current again then."""

    __slots__ = ("processor", "emitter", "chunks", "key", "outer", "sections", "meta", "rec",
                 "file_static", "worker", "factory", "facts", "file_meta", "source",
                 "bytes_before", "mem_before", "start", "pid", "t_start", "cpu_start",
                 "wait_start", "error")

    def __init__(self, processor, events, emitter):
        """Raises when reading the events fails (then nothing is left current)."""
        self.processor, self.emitter, self.error = processor, emitter, None
        self.sections = sections = {"timing": {}, "memory": {}, "bytes": {}}
        self.chunks, self.key = chunks, key = current_chunks(), id(processor)
        self.outer = chunks.get(key)             # a nested call (process calling process)
        chunks[key] = sections
        try:
            try:
                processor._roastcoffea_current_chunk = sections  # roastcoffea's place for it
            except Exception:  # noqa: BLE001 - __slots__: the thread's record is enough
                pass
            self.measure(events, _attr(processor, "_roastop_run_id"))
        except BaseException:
            self.restore()
            raise

    def measure(self, events, run_id):
        try:
            meta = events.metadata
            meta.get
        except Exception:  # noqa: BLE001
            meta = None
        self.meta = meta
        self.rec = rec = {}
        try:
            rec["num_events"] = len(events)
        except Exception:  # noqa: BLE001
            pass
        try:
            factory = events.attrs.get("@events_factory")
        except Exception:  # noqa: BLE001
            factory = None
        self.factory = factory
        self.file_static, self.facts, self.file_meta = _file_parts(meta, run_id, factory, rec)
        self.worker = _worker_name() if "distributed" in sys.modules else None
        try:
            self.source = source = factory.file_handle.file.source
        except Exception:  # noqa: BLE001 - no factory, or no file behind the events
            self.source = source = None
        self.bytes_before = source_bytes(source)
        self.pid = current_pid()                 # read once: the readings take it

    def begin(self):
        """Counted in flight, its chunk_start pending for the heartbeat's
        next beat (Emitter.chunk_begin); the clocks read last, just before
        process() runs."""
        self.t_start = t_start = time.time()
        rec, emitter = self.rec, self.emitter
        args = (t_start, self.file_static, rec.get("entry_start"), rec.get("entry_stop"),
                self.worker)
        try:
            self.start = emitter.chunk_begin(*args)
        except Exception:  # noqa: BLE001
            self.start = _begin_old(emitter, *args)
        # the /proc reads side by side: the second finds the kernel's path warm
        self.mem_before = process_memory_mb(self.pid)
        self.cpu_start, self.wait_start = time.thread_time(), cpu_wait_seconds(self.pid)

    def end(self):
        """process() returned or raised (self.error): the chunk's datagram,
        its start_seq when its start was sent (a pending one never will be:
        chunk_end comes first)."""
        cpu_end, wait_end, t_end = time.thread_time(), cpu_wait_seconds(self.pid), time.time()
        mem_after = process_memory_mb(self.pid)
        rec, emitter, start = self.rec, self.emitter, self.start
        try:
            seq = emitter.chunk_end(start)
        except Exception:  # noqa: BLE001 - _begin_old's Emitter: its count only
            if start[0] is not None:
                start[0].add(-1)
            seq = start[6]
        if seq is not None:
            rec["start_seq"] = seq
        try:
            if wait_end is not None and self.wait_start is not None:
                rec["cpu_wait"] = max(wait_end - self.wait_start, 0.0)
            measured = (self.t_start, t_end, time.time(), max(cpu_end - self.cpu_start, 0.0),
                        self.mem_before, mem_after)     # wire.MEASURED
            fields, static = self.fields()
            try:
                emitter.send_chunk(measured, fields, static)     # never raises itself
            except TypeError:   # an older Emitter's: without static, or without send_chunk
                _send_old(emitter, measured, fields, static)
        except Exception:  # noqa: BLE001
            emitter.lost += 1
        self.restore()

    def fields(self):
        """The record's fields other than the MEASURED numbers (roastcoffea
        0.1.2's plus worker, error and start_seq): rec with this chunk's
        added, and a tuple of Static for those its file's chunks repeat."""
        rec, file_static = self.rec, self.file_static
        if self.bytes_before is not None:
            bytes_after = source_bytes(self.source)
            if bytes_after is not None:
                rec["bytes_read"] = bytes_after - self.bytes_before
        branches = (_branch_metrics(self.factory, self.facts, self.meta)
                    if self.factory is not None else None)
        for kind in ("timing", "memory", "bytes"):
            if self.sections.get(kind):
                rec[kind] = self.sections[kind]
        if self.file_meta is not None:
            rec["file_metadata"] = self.file_meta
        if self.worker is not None:
            rec["worker"] = self.worker
        if self.error is not None:
            rec["error"] = type(self.error).__name__
        statics = (file_static, branches) if file_static is not None else (branches,)
        return rec, tuple(filter(None, statics))

    def restore(self):
        """The enclosing chunk (nested calls) or none is current again."""
        outer, sections, processor = self.outer, self.sections, self.processor
        if outer is None:
            self.chunks.pop(self.key, None)
        else:
            self.chunks[self.key] = outer
        try:
            if getattr(processor, "_roastcoffea_current_chunk", None) is sections:
                if outer is None:
                    del processor._roastcoffea_current_chunk
                else:
                    processor._roastcoffea_current_chunk = outer
        except Exception:  # noqa: BLE001
            pass


def _tracked(processor, events):
    """The _Chunk begun for this call, or None: collection off, no address,
    or the events could not be read (the analysis runs unmeasured)."""
    try:    # the common case in one go: the flag set, the Emitter made (emitter_for's cache)
        emitter = (shared("emitter_cache", dict)[(processor._roastop_addr,
                                                   processor._roastop_key)]
                   if processor._roastcoffea_collect_metrics else None)
    except Exception:  # noqa: BLE001 - an attribute missing or raising, no Emitter yet
        emitter = _emitter(processor) if _collecting(processor) else None
    if emitter is None:
        return None
    try:
        chunk = _Chunk(processor, events, emitter)
    except Exception:  # noqa: BLE001 - measuring must never break the analysis
        return None
    chunk.begin()
    return chunk


def track_metrics(func):
    """Decorates process(): the chunk's datagram when it returns or raises,
    and for a chunk still running at the process's next heartbeat a
    chunk_start the heartbeat sends (the chunk's ``start_seq`` its seq; just
    before process() runs when the heartbeat is off), while collection is
    on (roastcoffea's ``_roastcoffea_collect_metrics`` flag, set by
    MetricsCollector) and roastop's address is known. The output of
    process() is returned untouched. When process() raises, the chunk is
    sent with ``error`` (the exception's class name) and the exception
    re-raised.
    Decorating registers roastop with cloudpickle to travel by value, so the
    processor reaches workers that do not have roastop installed."""
    ship_by_value()

    @functools.wraps(func)
    def wrapper(self, events, *args, **kwargs):
        chunk = _tracked(self, events)
        if chunk is None:
            return func(self, events, *args, **kwargs)
        try:
            return func(self, events, *args, **kwargs)
        except BaseException as exc:
            chunk.error = exc
            raise
        finally:
            chunk.end()

    return wrapper
