"""Sections inside process(): roastcoffea 0.1.2's track_time, track_memory
and track_bytes, writing into the chunk record the decorator is building
(``processor._roastcoffea_current_chunk``). Outside a tracked chunk they
measure nothing and write nothing."""
import os
import threading
import time
from contextlib import suppress

from roastop._state import current_pid, shared

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):
    _PAGE = 4096

MB = 1024 * 1024            # roastcoffea's "MB": rss / 1024**2


def process_memory_mb(pid=None):
    """Resident set size in MB from /proc/self/statm, or None where it cannot
    be read (left out, never sent as 0). The file stays open and is re-read
    with pread: opening it per chunk cost more than everything else the
    decorator does. Where pread fails it is opened and read once more."""
    statm = shared("statm", lambda: [None, None])   # (pid, fd): reopened after a fork
    try:
        pid = pid or current_pid()
        if statm[0] != pid:
            if statm[1] is not None:
                with suppress(OSError):
                    os.close(statm[1])    # the parent's descriptor, inherited by a fork
            statm[:] = [pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)]
        data = os.pread(statm[1], 128, 0)
    except (OSError, AttributeError, TypeError):
        statm[:] = [None, None]
        try:
            with open("/proc/self/statm", "rb") as f:
                data = f.read(128)
        except OSError:
            return None
    try:
        return int(data.split()[1]) * _PAGE / MB
    except (ValueError, IndexError):
        return None


class _Schedstat:
    """One thread's /proc/thread-self/schedstat, kept open for pread; closed
    when the thread ends (its threading.local entry goes) or the process forked."""

    def __init__(self):
        self.pid = current_pid()
        self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)

    def __del__(self):
        try:
            os.close(self.fd)
        except (OSError, AttributeError):   # no fd, or os gone at interpreter exit
            pass


def cpu_wait_seconds(pid=None):
    """The seconds this thread has been runnable and not running (waiting
    for a CPU: schedstat's run delay, not I/O, a sleep or a lock), or None
    where the kernel does not say."""
    local = shared("schedstat_local", threading.local)
    try:
        st = getattr(local, "schedstat", None)
        if st is None or st.pid != (pid or current_pid()):
            st = local.schedstat = _Schedstat()
        return int(os.pread(st.fd, 128, 0).split()[1]) * 1e-9
    except (OSError, AttributeError, ValueError, IndexError):
        return None


def current_chunks():
    """This thread's {id(processor): sections} of the chunks being tracked
    (a worker's threads may run chunks of one processor instance at once).
    In shared(): a thread-local cannot be pickled."""
    local = shared("chunks_local", threading.local)
    try:
        return local.chunks
    except AttributeError:
        local.chunks = {}
        return local.chunks


def _chunk(processor):
    """The chunk record being built, or None when no chunk is tracked (or
    the processor fails when asked: its __getattr__ may raise anything)."""
    try:
        if not processor:
            return None
        chunks = getattr(shared("chunks_local", threading.local), "chunks", None)
        if chunks:
            chunk = chunks.get(id(processor))
            if chunk is not None:
                return chunk
        chunk = getattr(processor, "_roastcoffea_current_chunk", None)
    except Exception:  # noqa: BLE001 - a section is measured, never breaks process()
        return None
    return chunk if isinstance(chunk, dict) else None


def file_source(factory):
    """uproot's source of the file a coffea events factory reads, or None."""
    try:
        return factory.file_handle.file.source
    except Exception:  # noqa: BLE001 - no file behind the events
        return None


def source_bytes(source):
    """A file source's count of bytes requested, or None without one."""
    try:
        n = source.num_requested_bytes
    except Exception:  # noqa: BLE001
        return None
    return n if isinstance(n, (int, float)) and not isinstance(n, bool) else None


def requested_bytes(events):
    """uproot's count of bytes requested from the chunk's file, or None when
    the events carry no file source (not NanoEvents read from a file)."""
    try:
        factory = events.attrs.get("@events_factory")
    except Exception:  # noqa: BLE001 - an events object without attrs
        return None
    return source_bytes(file_source(factory))


class _Tracked:
    """A section: after - before of the reading, under chunk[kind][name],
    left out when either reading is None or no chunk is tracked."""

    __slots__ = ("_chunk", "_name", "_before")
    kind = None

    def __init__(self, processor, name):
        self._chunk = _chunk(processor)
        self._name = name
        self._before = None

    def __enter__(self):
        if self._chunk is not None:
            self._before = self._read()

    def __exit__(self, *exc):
        if self._before is not None:
            after = self._read()
            if after is not None:
                sections = self._chunk.get(self.kind)
                if not isinstance(sections, dict):
                    sections = self._chunk[self.kind] = {}
                sections[self._name] = after - self._before
        return False


class track_time(_Tracked):
    """Wall seconds spent in the block, under timing[name]::

        with track_time(self, "jet_selection"):
            ...
    """

    __slots__ = ()
    kind = "timing"

    def _read(self):
        return time.time()


class track_memory(_Tracked):
    """Change of the process's RSS over the block in MB, under memory[name]."""

    __slots__ = ()
    kind = "memory"

    def _read(self):
        return process_memory_mb()


class track_bytes(_Tracked):
    """Bytes the chunk's file source was asked for during the block, under
    bytes[name] (left out when the events carry no file source)."""

    __slots__ = ("_events",)
    kind = "bytes"

    def __init__(self, processor, events, name):
        self._events = events
        super().__init__(processor, name)

    def _read(self):
        return requested_bytes(self._events)
