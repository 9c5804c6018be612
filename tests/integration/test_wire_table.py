"""Version 2's wire ids are written once, in roastop's field table
(src/event/event_field.c); build/tools/wire_table prints it. The emitter's
copy (python/roastop/emitter.py) and the test decoder's
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
from roastop import emitter  # noqa: E402

# the emitter writes integers as plain nums; roastop checks them whole
EMITTER_ENCODING = {emitter._NUM: {"num", "int"}, emitter._STR: {"str"},
                    emitter._STRLIST: {"strlist"}, emitter._KV: {"kv"},
                    emitter._META: {"meta"}}


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


def test_the_table_has_every_v2_field():
    t = wire_table()
    assert set(t) == {"chunk", "start", "heartbeat", "meta"}
    assert set(t["chunk"]) == set(range(1, 31)) | {64, 65, 66, 67}
    assert set(t["start"]) < set(t["chunk"])
    assert all(t["start"][i] == t["chunk"][i] for i in t["start"])
    assert set(t["meta"]) == {1, 2, 3, 4}
    # a heartbeat shares the chunk's ids for the names they share
    shared = {wid for wid, (name, _) in t["heartbeat"].items()
              if name in {n for n, _ in t["chunk"].values()}}
    assert shared and all(t["heartbeat"][i] == t["chunk"][i] for i in shared)


def test_the_emitter_has_roastops_ids():
    t = wire_table()
    chunk = {k: v for k, v in emitter._CHUNK_FIELDS.items() if k != "type"}
    assert emitter_mismatches(t["chunk"], chunk) == []
    assert emitter_mismatches(t["meta"], emitter._META_FIELDS) == []
    start_names = {name for name, _ in t["start"].values()}
    assert emitter._START_STATIC <= start_names
    assert emitter_mismatches(t["heartbeat"], emitter._HEARTBEAT_FIELDS) == []


def test_a_field_in_one_place_only_is_caught():
    t = wire_table()
    chunk = {k: v for k, v in emitter._CHUNK_FIELDS.items() if k != "type"}
    chunk["new_field"] = (31, emitter._NUM)
    assert [d[0] for d in emitter_mismatches(t["chunk"], chunk)] == ["new_field"]
    chunk = dict(chunk, worker=(31, emitter._STR))
    del chunk["new_field"]
    assert [d[0] for d in emitter_mismatches(t["chunk"], chunk)] == ["worker"]


def test_the_test_decoder_has_roastops_ids():
    t = wire_table()
    assert roastop_testutil.V2_CHUNK_FIELDS == t["chunk"]
    assert roastop_testutil.V2_START_IDS == frozenset(t["start"])
    assert roastop_testutil.V2_META_FIELDS == t["meta"]
    assert roastop_testutil.V2_HEARTBEAT_FIELDS == t["heartbeat"]
