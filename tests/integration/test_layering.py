"""The house's layering (issue 20, docs/architecture.md "Adding a source"):
the app's files (src/app*.c, apppriv.h), ui.h and the views know no source
by name, and a source file includes only the event API, util headers and
its transport library.

No binary is run: the rules are read off the source tree. The sources not
yet moved behind source.h would be listed in KNOWN, by file and identifier
(none is left but the run's dask_version); a new name fails the test, and a
name that has gone must leave the list (so the list only shrinks)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORDS = re.compile(r"udp|dask|replay|scheduler", re.I)

# Identifiers still naming a source, per file. dask_version is no source:
# the run's own field (the cluster's version its samples carry, metrics.json's
# dask_version), shown beside the sources.
KNOWN = {
    "src/ui/views/main_header.c": {"dask_version"},
}
KNOWN_INCLUDES = set()

# What a registry source may include: the source interface (event API and
# configuration), util headers, its own header and its decoders; and any
# system or transport library header (<...>).
SOURCE_ALLOWED = {
    "roastop/source.h", "roastop/event.h", "roastop/config.h", "roastop/common.h",
    "roastop/arena.h", "roastop/clock.h", "roastop/timer.h", "roastop/strbuf.h",
    "roastop/strutil.h", "roastop/format.h", "roastop/jsonw.h", "roastop/range.h",
    "roastop/httpc.h",  # the shared HTTP client: a transport
    "roastop/cjson_lock.h",  # the lock around cJSON's global allocator
}
SOURCE_OWN = {
    # daskpriv.h: the poller's own parts (dask_routes.c, dask_workers.c)
    "dask": {"roastop/dask.h", "roastop/dask_json.h", "daskpriv.h"},
    # the listener's transport is the datagram engine (udp.c: framing, key,
    # sequence), tested apart from the socket through udp_process; the port
    # remembered beside the key is its own (portfile.c)
    "listener": {"roastop/udp.h", "roastop/portfile.h"},
    # the stream's check against the scheduler's count (taskcheck.c)
    "taskstream": {"roastop/taskstream.h", "roastop/taskcheck.h"}}


def strip(text):
    """C text without comments and string or character literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def identifiers(path):
    code = strip((ROOT / path).read_text())
    code = re.sub(r"#include[^\n]*", " ", code)
    return {t for t in re.findall(r"[A-Za-z_]\w*", code) if WORDS.search(t)}


def includes(path):
    return set(re.findall(r'#include\s+"([^"]+)"', (ROOT / path).read_text()))


def no_source_files():
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src").glob("app*.[ch]"))
    files += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "include/roastop").glob("app*.h"))
    files += ["src/export/metrics_extra.c", "include/roastop/ui.h"]
    files += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/ui/views").glob("*.c"))
    return files


def test_app_ui_and_views_name_no_source():
    for f in no_source_files():
        names = identifiers(f)
        known = KNOWN.get(f, set())
        assert names - known == set(), f"{f} names a source: {sorted(names - known)}"
        assert known - names == set(), f"{f} no longer names {sorted(known - names)}: " \
                                       "take them off KNOWN"


def test_app_ui_and_views_include_no_source_header():
    for f in no_source_files():
        bad = {h for h in includes(f) if WORDS.search(h)}
        assert bad == {h for (g, h) in KNOWN_INCLUDES if g == f}, f"{f}: {sorted(bad)}"


def registry_sources():
    text = strip((ROOT / "src/source/source.c").read_text())
    return re.findall(r"X\((\w+)_source\)", text)


def test_registry_sources_include_only_the_event_api_util_and_transport():
    names = registry_sources()
    assert "dask" in names and "listener" in names
    for name in names:
        path = ROOT / "src/source" / f"{name}.c"
        assert path.exists(), f"registry names {name}_source but {path} is missing"
        allowed = SOURCE_ALLOWED | SOURCE_OWN.get(name, {f"roastop/{name}.h"})
        bad = includes(path.relative_to(ROOT)) - allowed
        assert bad == set(), f"{path.name} includes {sorted(bad)}"
        assert re.search(rf"const struct source_ops {name}_source\b", path.read_text())


def test_registry_is_one_line_per_source():
    text = (ROOT / "src/source/source.c").read_text()
    for name in registry_sources():
        assert len(re.findall(rf"\b{name}_source\b", text)) == 1, name


# ---- folders: data flows one way (docs/architecture.md, "Where things are") ----

def src_files():
    return sorted(p.relative_to(ROOT) for p in (ROOT / "src").rglob("*.c"))


def folder_of_header():
    """roastop/X.h -> the folder of the X.c that implements it (and includes it);
    a header no file of its name implements (common.h, config.h) is no folder's."""
    return {f"roastop/{p.stem}.h": str(p.parent) for p in src_files()
            if f"roastop/{p.stem}.h" in includes(p)}


def folder_arrows():
    """{(from folder, to folder): [file including, header]} across folders; a
    header's includes are its implementing folder's."""
    owner, arrows = folder_of_header(), {}
    files = [(f, str(f.parent)) for f in src_files()]
    files += [(h.relative_to(ROOT), owner[f"roastop/{h.name}"])
              for h in sorted((ROOT / "include/roastop").glob("*.h"))
              if f"roastop/{h.name}" in owner]
    for f, folder in files:
        for h in includes(f):
            to = owner.get(h)
            if to and to != folder:
                arrows.setdefault((folder, to), []).append(f"{f}: {h}")
    return arrows


def test_no_include_cycle_between_folders():
    arrows = folder_arrows()
    graph = {}
    for a, b in arrows:
        graph.setdefault(a, set()).add(b)
    for (a, b), why in arrows.items():
        assert a not in reach_of(graph, b), f"{a} -> {b} ({why[0]}) closes a cycle back to {a}"


def reach_of(graph, start):
    seen, todo = set(), [start]
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def registry_names():
    """The registry sources' names as metrics.json and the log know them."""
    names = set()
    for n in registry_sources():
        text = (ROOT / "src/source" / f"{n}.c").read_text()
        m = re.search(rf"const struct source_ops {n}_source = \{{.*?\.name = \"(\w+)\"", text, re.S)
        assert m, f"{n}_source has no .name"
        names.add(m.group(1))
    return names


def test_model_and_metrics_name_no_source():
    """The model never knows where an event came from: no source header, no
    source's name as a string (a sample made from heartbeats is the model's own)."""
    names, owner = registry_names(), folder_of_header()
    assert {"udp", "scheduler"} <= names
    for f in src_files():
        if f.parts[1] not in ("model", "metrics"):
            continue
        bad = {h for h in includes(f) if owner.get(h) == "src/source"}
        assert not bad, f"{f} includes {sorted(bad)}"
        literals = set(re.findall(r'"(\w+)"', (ROOT / f).read_text()))
        assert not literals & names, f"{f} names the source {sorted(literals & names)}"


# A source's name as a string outside the source's own files: a reader
# naming a source (or its counters) instead of reading its typed statistics
# (source.h, struct source_typed). Known uses, per file: the options
# --scheduler and --replay, named as the sources are; a recorded status event
# older than gaps_timelines (only the scheduler's loss made a gap then).
KNOWN_NAMED = {
    ("src/cli.c", "scheduler"), ("src/cli.c", "replay"),
    ("src/event/event_field.c", "scheduler"),
}


def own_files():
    """{source's name: its files}: its registry file and private split
    (dask*.c, daskpriv.h), and the files of the headers it owns."""
    own = {}
    for n in registry_sources():
        text = (ROOT / "src/source" / f"{n}.c").read_text()
        name = re.search(rf"const struct source_ops {n}_source = \{{.*?\.name = \"(\w+)\"",
                         text, re.S).group(1)
        stems = {n} | {h[len("roastop/"):-2] for h in SOURCE_OWN.get(n, ()) if h.startswith("roastop/")}
        files = {str(p.relative_to(ROOT)) for s in stems
                 for p in (ROOT / "src/source").glob(f"{s}*.[ch]")}
        own[name] = files | {f"include/roastop/{s}.h" for s in stems}
    return own


def test_source_names_only_in_their_source():
    own = own_files()
    files = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "src").rglob("*.[ch]"))]
    files += [str(p.relative_to(ROOT)) for p in sorted((ROOT / "include").rglob("*.h"))]
    found = set()
    for f in files:
        code = re.sub(r"/\*.*?\*/", " ", (ROOT / f).read_text(), flags=re.S)
        for name in set(re.findall(r'"(\w+)"', code)) & set(own):
            if f not in own[name]:
                found.add((f, name))
    assert found - KNOWN_NAMED == set(), f"a source named outside it: {sorted(found - KNOWN_NAMED)}"
    assert KNOWN_NAMED - found == set(), f"no longer named: {sorted(KNOWN_NAMED - found)}: " \
                                         "take them off KNOWN_NAMED"


# a metric's formula divides by one of these: the metrics module's job, never a view's
DENOMINATOR = re.compile(r"/\s*\(?\s*(?:\(double\)\s*)?[\w>.-]*"
                         r"(limit|elapsed|threads|num_chunks|n_chunks|duration|cpu_time|"
                         r"total_time|wall|events|bytes)\b")


def test_views_compute_no_metric():
    for f in sorted((ROOT / "src/ui/views").glob("*.c")):
        code = strip(f.read_text())
        assert "metrics_compute" not in code, f"{f.name} computes the metrics"
        hit = DENOMINATOR.search(code)
        assert not hit, f"{f.name} computes a metric: {hit.group(0)!r}"


# The diagnosis (docs/diagnosis.md) reads the model and the metrics, as the
# metrics read the model; nothing under it reads it back; the views show
# findings and compute none (the app evaluates them for the frame).
DIAGNOSIS_MAY_INCLUDE = {
    "roastop/diagnosis.h", "roastop/metrics.h", "roastop/run.h", "roastop/format.h",
    "roastop/common.h", "diagnosispriv.h",
    # the place rules' private index of chunk paces, keyed by the model's strmap
    "paces.h", "roastop/strmap.h", "roastop/strutil.h"}


def test_diagnosis_reads_only_model_and_metrics():
    for p in sorted((ROOT / "src/diagnosis").glob("*.[ch]")):
        bad = includes(p.relative_to(ROOT)) - DIAGNOSIS_MAY_INCLUDE
        assert bad == set(), f"{p.name} includes {sorted(bad)}"
    header = includes("include/roastop/diagnosis.h")
    assert header <= {"roastop/metrics.h", "roastop/run.h"}, header


def test_model_and_metrics_do_not_read_diagnosis():
    files = sorted((ROOT / "src/model").glob("*.[ch]")) + sorted((ROOT / "src/metrics").glob("*.c"))
    files += [ROOT / "include/roastop" / f"{p.stem}.h" for p in files if p.suffix == ".c"]
    for p in files:
        if p.exists():
            assert "roastop/diagnosis.h" not in includes(p.relative_to(ROOT)), p.name


def test_no_view_computes_a_finding():
    views = sorted((ROOT / "src/ui").glob("*.c")) + sorted((ROOT / "src/ui/views").glob("*.c"))
    for p in views:
        code = strip(p.read_text())
        for name in ("diagnosis_evaluate", "diagnosis_of_record", "diag_"):
            assert name not in code, f"{p.name} calls {name}"


# ---- files: no cycle between modules (issue 44) ----
# A module is a public header and the .c files that define what it declares,
# or the files that share a private header (src/apppriv.h, src/ui/uipriv.h,
# src/model/runpriv.h, ...): its private split, inside which files may call
# each other. A .c file depends on the files implementing each header it
# includes (a private header's own includes are its includers'). Cycles
# between modules let stand, each as (its files, why): none, and the list
# only shrinks; a cycle gone, or changed, must leave it.
KNOWN_CYCLES = []

DEFINED = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{]*?\)\s*\{", re.M)


def header_path(f, h):
    """The file an #include "h" in f names, from the repository's root."""
    if h.startswith("roastop/"):
        return pathlib.Path("include", h)
    return ((ROOT / f).parent / h).resolve().relative_to(ROOT)


def file_includes(f):
    """f's headers, with those its private headers include (theirs are f's)."""
    seen, todo = set(), [pathlib.Path(f)]
    while todo:
        g = todo.pop()
        for h in includes(g):
            p = header_path(g, h)
            if p not in seen:
                seen.add(p)
                if p.parts[0] == "src":
                    todo.append(p)
    return seen


def implementers(files):
    """{header: the .c files defining a function it names}."""
    defined = {}
    for f in files:
        for name in DEFINED.findall(strip((ROOT / f).read_text())):
            defined.setdefault(name, set()).add(f)
    out = {}
    for h in {h for f in files for h in file_includes(f)}:
        names = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", strip((ROOT / h).read_text())))
        out[h] = set().union(set(), *(defined.get(n, set()) for n in names))
    return out


def modules(files, impl):
    """{file: its module's first file}: a header's implementers are one module,
    and so are the files sharing a private header."""
    parent = {f: f for f in files}

    def root(f):
        while parent[f] != f:
            f = parent[f]
        return f
    sets = list(impl.values())
    sets += [{f for f in files if h in file_includes(f)} for h in impl if h.parts[0] == "src"]
    for s in sets:
        s = sorted(s)
        for f in s[1:]:
            parent[root(f)] = root(s[0])
    return {f: root(f) for f in files}


def module_graph():
    """The modules' dependencies ({module: modules}) and each module's files."""
    files = src_files()
    impl = implementers(files)
    mod = modules(files, impl)
    graph, members = {m: set() for m in mod.values()}, {}
    for f in files:
        members.setdefault(mod[f], set()).add(str(f))
        for h in file_includes(f):
            graph[mod[f]] |= {mod[g] for g in impl.get(h, ())} - {mod[f]}
    return graph, members


def strongly_connected(graph):
    """The graph's strongly connected sets of more than one node (Tarjan's,
    with an explicit stack)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while not comp or w != v:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                    if len(comp) > 1:
                        found.append(comp)
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return found


def test_no_cycle_between_modules():
    graph, members = module_graph()
    cycles = [set().union(*(members[m] for m in c)) for c in strongly_connected(graph)]
    known = [files for files, _ in KNOWN_CYCLES]
    for c in cycles:
        assert c in known, f"a cycle between modules: {sorted(c)}"
    for files in known:
        assert files in cycles, f"{sorted(files)} is no longer one cycle: update KNOWN_CYCLES"


def test_app_parts_are_modules_of_their_own():
    """The app's parts (docs/architecture.md, "Where things are") are not
    the loop's private split: each its own module, so the test above sees
    a cycle through them."""
    graph, members = module_graph()
    of = {f: m for m, fs in members.items() for f in fs}
    parts = ["src/app_alerts.c", "src/app_output.c", "src/app_previous.c", "src/app_sources.c"]
    assert len({of[f] for f in parts + ["src/app.c"]}) == len(parts) + 1, members[of["src/app.c"]]
    for f in parts:
        assert of["src/app.c"] not in reach_of(graph, of[f]), f"{f} depends on the loop"


def modules_dot():
    """The modules and their dependencies as a Graphviz drawing, each module
    named by its first file and how many more it has."""
    graph, members = module_graph()
    name = {m: min(members[m]) + (f" +{len(members[m]) - 1}" if len(members[m]) > 1 else "")
            for m in graph}
    arrows = [f'  "{name[a]}" -> "{name[b]}";' for a in sorted(graph) for b in sorted(graph[a])]
    return "\n".join(["digraph modules {", *arrows, "}"])


if __name__ == "__main__":  # python3 tests/integration/test_layering.py > modules.dot
    print(modules_dot())


def c_functions(path):
    """(first line, body lines) of each function of a C file written in the
    house style: the opening brace alone on a line at column 0, the closing
    one too."""
    lines, start = path.read_text().split("\n"), None
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            start = i
        elif line == "}" and start is not None:
            yield lines[start - 1], i - start - 1
            start = None


def test_no_c_function_over_50_lines_nor_file_over_800():
    """Issue 44's sizes for the C (python/tests/test_function_length.py
    holds the Python's functions): no function body over 50 lines, no file
    of src, include or python/roastop over 800."""
    long = [(str(p.relative_to(ROOT)), head, n) for p in sorted(ROOT.glob("src/**/*.c"))
            for head, n in c_functions(p) if n > 50]
    assert not long, long
    files = [*ROOT.glob("src/**/*.[ch]"), *ROOT.glob("include/**/*.h"),
             *ROOT.glob("python/roastop/**/*.py")]
    big = [(str(p.relative_to(ROOT)), n) for p in files
           if (n := len(p.read_text().split("\n")) - 1) > 800]
    assert not big, big
    assert len(files) > 100  # the globs found the tree
