"""The datagram ids are written once, in roastop's tables (the events'
fields in src/event/event_field.c, the envelope's in
src/event/event_datagram.c); build/tools/wire_table prints them per kind.
The emitter's copy (python/roastop/wire.py) and the test decoder's
(python/tests/roastop_testutil.py, kept apart from the emitter on purpose:
it reads what the emitter sends, as roastop does) must say the same, so a
field added in one place and not the others fails here."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import TOOLS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "tests"))

import roastop_testutil  # noqa: E402
from roastop import wire  # noqa: E402

# the emitter writes integers as plain nums; roastop checks them whole
EMITTER_ENCODING = {wire._NUM: {"num", "int"}, wire._STR: {"str"},
                    wire._STRLIST: {"strlist"}, wire._KV: {"kv"},
                    wire._META: {"meta"}}
# wire_table's names for the kinds, and the emitter's ("type")
KIND_NAMES = {"chunk": "chunk", "start": "chunk_start", "heartbeat": "heartbeat",
              "run_start": "run_start", "run_end": "run_end", "report": "report",
              "hello": "hello", "ack": "ack"}


def wire_table():
    """{table: {id: (name, encoding)}} as roastop's binary has it."""
    out = subprocess.run([os.path.join(TOOLS, "wire_table")], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    tables = {}
    for line in out.splitlines():
        table, wid, name, encoding = line.split()
        rows = tables.setdefault(table, {})
        assert int(wid) not in rows, line
        rows[int(wid)] = (name, encoding)
    return tables


def emitter_mismatches(c_rows, py_fields):
    """What the emitter's {name: (id, encoding)} says otherwise than C."""
    c_by_name = {name: (wid, enc) for wid, (name, enc) in c_rows.items()}
    diff = []
    for name in sorted(set(c_by_name) | set(py_fields)):
        if name not in c_by_name or name not in py_fields:
            diff.append((name, c_by_name.get(name), py_fields.get(name)))
            continue
        wid, enc = c_by_name[name]
        pid, penc = py_fields[name]
        if wid != pid or enc not in EMITTER_ENCODING.get(penc, ()):
            diff.append((name, c_by_name[name], py_fields[name]))
    return diff


def test_the_table_has_every_kind_and_field():
    t = wire_table()
    assert set(t) == set(KIND_NAMES) | {"meta"}
    assert set(t["chunk"]) == set(range(1, 31)) | {64, 65, 66, 67, 72}
    assert set(t["start"]) < set(t["chunk"])
    assert all(t["start"][i] == t["chunk"][i] for i in t["start"])
    assert set(t["meta"]) == {1, 2, 3, 4}
    # a name two kinds share has one id: the chunk's, the envelope's
    chunk_ids = {name: wid for wid, (name, _) in t["chunk"].items()}
    for kind in KIND_NAMES:
        for wid, (name, _) in t[kind].items():
            assert name not in chunk_ids or chunk_ids[name] == wid, (kind, name)
    assert {name for name, _ in t["hello"].values()} == {"host", "pid", "sent", "instance",
                                                           "nonce"}
    assert t["ack"] == {71: ("nonce", "str")}


def test_the_emitter_has_roastops_ids():
    t = wire_table()
    for label, kind in KIND_NAMES.items():
        assert emitter_mismatches(t[label], wire.KINDS[kind][1]) == [], kind
        assert wire.KINDS[kind][0][0] == list(KIND_NAMES).index(label) + 1
    assert emitter_mismatches(t["meta"], wire._META_FIELDS) == []
    start_names = {name for name, _ in t["start"].values()}
    assert wire._START_STATIC <= start_names


def test_a_field_in_one_place_only_is_caught():
    t = wire_table()
    chunk = dict(wire._CHUNK_FIELDS)
    chunk["new_field"] = (31, wire._NUM)
    assert [d[0] for d in emitter_mismatches(t["chunk"], chunk)] == ["new_field"]
    chunk = dict(chunk, worker=(31, wire._STR))
    del chunk["new_field"]
    assert [d[0] for d in emitter_mismatches(t["chunk"], chunk)] == ["worker"]


def test_the_test_decoder_has_roastops_ids():
    t = wire_table()
    for label, kind in KIND_NAMES.items():
        code = list(KIND_NAMES).index(label) + 1
        assert roastop_testutil.V2_KINDS[code] == (kind, t[label]), kind
    assert roastop_testutil.V2_START_IDS == frozenset(t["start"])
    assert roastop_testutil.V2_META_FIELDS == t["meta"]
