"""Sections inside process(): roastcoffea 0.1.2's track_time, track_memory
and track_bytes, writing into the chunk record the decorator is building."""
import os
import time
from contextlib import contextmanager

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


_statm = [None, None]  # (pid, fd): /proc/self resolves at open, so reopen after fork


def process_memory_mb():
    """Resident set size in MB from /proc (standard library only), or None
    where it cannot be read: a missing value is left out, never sent as 0.
    The file stays open and is re-read with pread: opening it per chunk
    cost more than everything else the decorator does."""
    try:
        pid = os.getpid()
        if _statm[0] != pid:
            _statm[:] = [pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)]
        return int(os.pread(_statm[1], 128, 0).split()[1]) * _PAGE / 1e6
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _sections(processor, kind):
    chunk = getattr(processor, "_roastcoffea_current_chunk", None)
    return chunk.get(kind) if isinstance(chunk, dict) else None


@contextmanager
def track_time(processor, name):
    """Seconds spent in the block, under timing[name]."""
    start = time.perf_counter()
    try:
        yield
    finally:
        sections = _sections(processor, "timing")
        if sections is not None:
            sections[name] = sections.get(name, 0.0) + time.perf_counter() - start


@contextmanager
def track_memory(processor, name):
    """RSS change over the block in MB, under memory[name]."""
    before = process_memory_mb()
    try:
        yield
    finally:
        after = process_memory_mb()
        sections = _sections(processor, "memory")
        if sections is not None and before is not None and after is not None:
            sections[name] = after - before


def _requested_bytes(events):
    try:
        factory = events.attrs.get("@events_factory")
        return factory.file_handle.file.source.num_requested_bytes
    except Exception:  # noqa: BLE001 - an events object without a file source
        return None


@contextmanager
def track_bytes(processor, events, name):
    """Bytes the file source was asked for during the block, under bytes[name]."""
    before = _requested_bytes(events)
    try:
        yield
    finally:
        after = _requested_bytes(events)
        sections = _sections(processor, "bytes")
        if sections is not None and before is not None and after is not None:
            sections[name] = after - before
