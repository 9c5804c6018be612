"""The documents say what the code does: read off the source tree, no binary
run, no cluster.

The documents are README.md, roastop.1, docs/*.md and themes/README.md.
They must name

- every option of src/cli.c's option table in roastop.1's OPTIONS (an item
  of its own: the tag under a .TP);
- every key the UI takes (src/ui's case labels of its switches on the key
  `ch`, its comparisons of it, its ranges of characters, the keys of the
  views' table ui_views and their capitals) in roastop.1's KEYS, in bold;
- every environment variable python/roastop reads in roastop.1's
  ENVIRONMENT (an item of its own);
- every finding id (src/diagnosis/diagnosis.c's id names) in a heading of
  docs/diagnosis.md, and no finding id that does not exist;
- no test file, repository path, document or relative link that does not
  exist;
- no "issue N": history lives in git log.

Each check gathers every problem before it fails, so one run lists them
all."""
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MANUAL = ROOT / "roastop.1"
DOCUMENTS = sorted([ROOT / "README.md", MANUAL, ROOT / "themes" / "README.md",
                    ROOT / "bench" / "RESULTS.md",
                    *(ROOT / "docs").glob("*.md")])
SKIP_DIRS = {".git", "build", "__pycache__", ".pytest_cache"}


def rel(path):
    return path.relative_to(ROOT).as_posix()


def repo_files():
    """Every file of the tree but the build's, as paths relative to ROOT."""
    out = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("venv")]
        out += [(Path(top) / f).relative_to(ROOT).as_posix() for f in files]
    return out


def fail_on(problems, what):
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)


# ---- roff: just enough of man(7) to read roastop.1 ----

ESCAPES = [("\\(en", "\u2013"), ("\\(em", "\u2014"), ("\\(aq", "'"), ("\\(bu", "\u2022"),
           ("\\(rs", "\\"), ("\\-", "-"), ("\\&", ""), ("\\%", ""), ("\\ ", " "),
           ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""), ("\\e", "\\")]
FONT_MACROS = {"B", "I", "BR", "RB", "BI", "IB", "IR", "RI"}
ARGS = re.compile(r'"((?:[^"]|"")*)"|(\S+)')


def unescape(text):
    for esc, plain in ESCAPES:
        text = text.replace(esc, plain)
    return text


def macro(line):
    """(name, arguments) of a request line, or (None, None) for text."""
    if not line.startswith("."):
        return None, None
    name, _, rest = line[1:].partition(" ")
    return name, [bare or quoted.replace('""', '"') for quoted, bare in ARGS.findall(rest)]


def bold_words(line):
    """The words set in bold on one line of roff source, unescaped."""
    name, args = macro(line)
    parts = []
    if name == "B":
        parts = [" ".join(args)]
    elif name in ("BR", "BI"):
        parts = args[0::2]
    elif name in ("RB", "IB"):
        parts = args[1::2]
    parts += re.findall(r"\\fB(.*?)\\f[RPI]", line)
    return {w for p in parts for w in re.split(r"[\s,]+", unescape(p)) if w}


def plain(line):
    """One line of roff source as text (font requests' arguments joined as
    groff joins them: without space but for .B and .I)."""
    name, args = macro(line)
    if name is None:
        return unescape(line)
    if name in ("B", "I", "SH", "SS"):
        return unescape(" ".join(args))
    if name in FONT_MACROS:
        return unescape("".join(args))
    return ""


def manual_sections():
    """roastop.1's sections: name -> its source lines."""
    out, name = {}, None
    for line in MANUAL.read_text().splitlines():
        if line.startswith(".SH "):
            name = plain(line).strip()
            out[name] = []
        elif name:
            out[name].append(line)
    return out


def item_tags(lines):
    """The text of each item's tag (the line after a .TP)."""
    return [plain(lines[i + 1]) for i, line in enumerate(lines[:-1]) if line.strip() == ".TP"]


# ---- options ----

def cli_options():
    src = (ROOT / "src" / "cli.c").read_text()
    table = re.search(r"option_def options\[\] = \{(.*?)\n\};", src, re.S)
    assert table, "src/cli.c: no option table (static const struct option_def options[])"
    found = re.findall(r'\{\s*"([a-z0-9-]+)",\s*(0|\'(.)\')', table.group(1))
    assert len(found) > 10, f"src/cli.c: the option table read as {found}"
    return [(name, short or None) for name, _, short in found]


def test_every_option_is_in_the_manual():
    tags = item_tags(manual_sections()["OPTIONS"])
    problems = []
    for name, short in cli_options():
        spelt = [f"--{name}"] + ([f"-{short}"] if short else [])
        for s in spelt:
            word = re.compile(r"(?<![\w-])" + re.escape(s) + r"(?![\w-])")
            if not any(word.search(t) for t in tags):
                problems.append(f"{s} (src/cli.c) has no item in roastop.1's OPTIONS")
    fail_on(problems, "options of src/cli.c missing from roastop.1")


# ---- keys ----

CHAR = r"'(?:\\.|[^'\\])'"
KEY_TOKEN = CHAR + r"|KEY_F\(\d+\)|[A-Za-z_]\w*|\d+"
C_ESCAPES = {"'\\t'": "\t", "'\\n'": "\n", "'\\r'": "\r", "'\\\\'": "\\", "'\\''": "'"}
# What roastop.1 calls the keys that are not a printable character.
KEY_NAMES = {
    "\t": "Tab", "\n": "Enter", "\r": "Enter", "KEY_ENTER": "Enter", " ": "Space",
    "KEY_BTAB": "Shift-Tab", "KEY_UP": "Up", "KEY_DOWN": "Down", "KEY_PPAGE": "PgUp",
    "KEY_NPAGE": "PgDn", "KEY_HOME": "Home", "KEY_END": "End", "27": "Esc",
    "KEY_BACKSPACE": "Backspace", "127": "Backspace", "8": "Backspace",
}
NOT_KEYS = {"KEY_RESIZE"}  # ncurses' word for a new terminal size, not a key


def char_of(token):
    return C_ESCAPES.get(token, token[1:-1]) if token.startswith("'") else None


def key_name(token):
    """roastop.1's name of the key a C token stands for; None when the
    test does not know it (a new kind of key: name it here and there)."""
    char = char_of(token)
    if char is not None and char not in KEY_NAMES:
        return char if char.isprintable() else None
    if char is not None:
        return KEY_NAMES[char]
    if token in KEY_NAMES:
        return KEY_NAMES[token]
    m = re.fullmatch(r"KEY_F\((\d+)\)", token)
    if m:
        return f"F{m.group(1)}"
    if token.isdigit() and 1 <= int(token) <= 26:
        return "Ctrl-" + chr(64 + int(token))
    return None


def switch_bodies(src):
    """The bodies of the switches on the key (switch (ch) {...})."""
    # braces inside character literals ('{') must not count
    masked = re.sub(CHAR, lambda m: "_" * len(m.group(0)), src)
    for m in re.finditer(r"switch\s*\(\s*ch\s*\)\s*\{", masked):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(masked[i], 0)
            i += 1
        yield src[m.end():i - 1]


def table_ranges(chars):
    """The runs of characters each one after the one before, of three or more."""
    runs = []
    for c in chars:
        if runs and ord(c) == ord(runs[-1][-1]) + 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    return [(r[0], r[-1]) for r in runs if len(r) > 2]


def handled_keys():
    """Key name -> where and how the UI's code (src/ui/keys.c, and any view
    that reads a key: a `ch` compared or switched on) takes it."""
    keys, ranges, unknown = {}, [], []
    for path in sorted((ROOT / "src" / "ui").rglob("*.c")):
        src = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
        tokens = [t for body in switch_bodies(src)
                  for t in re.findall(r"\bcase\s+(" + KEY_TOKEN + r")\s*:", body)]
        tokens += re.findall(r"\bch\s*==\s*(" + KEY_TOKEN + ")", src)
        # the views' table (src/ui/ui.c): each view's key, a letter's capital
        # too; keys following each other in it (1 to 9) are a range
        table = re.findall(r"\[UI_VIEW_\w+\]\s*=\s*\{\s*\"[^\"]*\",\s*(" + CHAR + ")", src)
        tokens += [u for t in table for u in {t, t.upper()}]
        for lo, hi in table_ranges([char_of(t) for t in table]):
            ranges.append((lo, hi))
        for lo, hi in re.findall(r"\bch\s*>=\s*(" + CHAR + r")\s*&&\s*ch\s*<=\s*(" + CHAR + ")",
                                 src):
            ranges.append((char_of(lo), char_of(hi)))
            for c in range(ord(char_of(lo)), ord(char_of(hi)) + 1):
                keys.setdefault(chr(c), f"{rel(path)}: {lo}..{hi}")
        for t in tokens:
            name = None if t in NOT_KEYS else key_name(t)
            if name is None and t not in NOT_KEYS:
                unknown.append(f"{rel(path)}: {t}")
            elif name is not None:
                keys.setdefault(name, f"{rel(path)}: {t}")
    assert not unknown, (f"{unknown}: give each its name in test_docs.py's KEY_NAMES and "
                         "document it in roastop.1's KEYS")
    assert len(keys) > 20, f"src/ui read as taking the keys {keys}"
    return keys, ranges


def test_every_key_is_in_the_manual():
    lines = manual_sections()["KEYS"]
    bold = set().union(*(bold_words(line) for line in lines))
    text = " ".join(plain(line) for line in lines)
    keys, ranges = handled_keys()
    in_range = {chr(c) for lo, hi in ranges for c in range(ord(lo), ord(hi) + 1)
                if re.search(re.escape(lo) + r"\s*[\u2013-]\s*" + re.escape(hi), text)}
    problems = [f"{name} ({how}) is not named in bold in roastop.1's KEYS"
                for name, how in sorted(keys.items())
                if name not in bold and name not in in_range]
    fail_on(problems, "keys src/ui takes missing from roastop.1")


# ---- environment ----

ENV_READ = re.compile(r"""os\.(?:environ\.get|getenv|environ\.setdefault)\(\s*["'](\w+)["']"""
                      r"""|os\.environ\[\s*["'](\w+)["']\s*\]"""
                      r"""|["'](\w+)["']\s+(?:not\s+)?in\s+os\.environ""")


def python_environment():
    found = {}
    for path in sorted((ROOT / "python" / "roastop").glob("*.py")):
        for m in ENV_READ.finditer(path.read_text()):
            found.setdefault(next(g for g in m.groups() if g), rel(path))
    assert len(found) >= 3, f"python/roastop read as reading {found}"
    return found


def test_every_environment_variable_is_in_the_manual():
    tags = item_tags(manual_sections()["ENVIRONMENT"])
    problems = [f"{name} (read in {where}) has no item in roastop.1's ENVIRONMENT"
                for name, where in sorted(python_environment().items())
                if not any(re.search(rf"\b{name}\b", t) for t in tags)]
    fail_on(problems, "environment variables python/roastop reads missing from roastop.1")


# ---- findings ----

ID = r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*"
# Where a document names a finding by its id:
FINDING_REFS = [
    re.compile(rf"`({ID})`\s+findings?\b"),                      # the `slow_file` finding
    re.compile(rf"\bfindings?\s+(?:id\s+)?`({ID})`"),            # finding `slow_file`
    re.compile(rf"^\s+(?:critical|warning|info)\s+({ID}):\s", re.M),  # compare's lines
    re.compile(rf'finding="({ID})"'),                            # the OpenMetrics label
]
MAN_FINDING_REFS = [  # in roastop.1's text, ids have no backticks but an underscore
    re.compile(r"\b([a-z]+(?:_[a-z0-9]+)+)\s+findings?\b"),
    re.compile(r"\bfindings?\s+([a-z]+(?:_[a-z0-9]+)+)\b"),
]


def finding_ids():
    src = (ROOT / "src" / "diagnosis" / "diagnosis.c").read_text()
    table = re.search(r"rules\[FIND__COUNT\]\s*=\s*\{(.*?)\n\};", src, re.S)
    assert table, "src/diagnosis/diagnosis.c: no rules table"
    ids = re.findall(r'\]\s*=\s*\{\s*"([^"]+)"', table.group(1))
    assert len(ids) > 5, f"src/diagnosis/diagnosis.c: id names read as {ids}"
    return ids


def document_text(path):
    """A document as a reader sees its words: roastop.1 unescaped."""
    text = path.read_text()
    if path == MANUAL:
        return "\n".join(plain(line) for line in text.splitlines())
    return text


def test_every_finding_has_its_section_in_diagnosis_md():
    headings = set(re.findall(r"^#+ .*?`([^`]+)`", (ROOT / "docs" / "diagnosis.md").read_text(),
                              re.M))
    problems = [f"{i} (src/diagnosis/diagnosis.c) has no heading in docs/diagnosis.md"
                for i in finding_ids() if i not in headings]
    problems += [f"docs/diagnosis.md has a heading for `{h}`, which is no finding id"
                 for h in sorted(headings - set(finding_ids()))]
    fail_on(problems, "findings and docs/diagnosis.md")


def test_documents_name_only_findings_that_exist():
    ids = set(finding_ids())
    problems = []
    for path in DOCUMENTS:
        text = document_text(path)
        refs = MAN_FINDING_REFS if path == MANUAL else FINDING_REFS
        for pattern in refs:
            for m in pattern.finditer(text):
                if m.group(1) not in ids:
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{rel(path)}:{line}: {m.group(1)!r} is no finding id "
                                    f"(they are {', '.join(sorted(ids))})")
    fail_on(problems, "finding ids that do not exist")


# ---- files, paths, links ----

TEST_FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*test_\w+\.(?:py|c))(?:::(\w+))?")
TOP_DIRS = "src|tests|docs|examples|scripts|bench|python|include|themes"
REPO_PATH = re.compile(rf"(?<![\w./~$-])((?:{TOP_DIRS})/[\w.*/-]*)")
PARENT_PATH = re.compile(r"(?<![\w./-])(\.\./[\w./-]*[\w/])")
DOCUMENT_NAME = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")
# A test's definition in its file (file.py::test_x, file.c::case_x)
DEFINES = {".py": r"^\s*(?:async\s+)?(?:def|class)\s+{}\b",
           ".c": r"^(?:static\s+)?void\s+{}\s*\("}
# a name to fill in, as src/source/NAME.c (when no such file exists; a
# document in capitals, as README.md, is no placeholder)
PLACEHOLDER = re.compile(r"(?:^|/)[A-Z][A-Z_]*(?:/|\.(?!md\b)|$)")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def test_named_test_files_exist():
    files = repo_files()
    problems = []
    for path in DOCUMENTS:
        text = document_text(path)
        for m in TEST_FILE.finditer(text):
            name, function = m.groups()
            line = text.count("\n", 0, m.start()) + 1
            found = [f for f in files if f == name or f.endswith("/" + name)]
            if not found:
                problems.append(f"{rel(path)}:{line}: {name}: no such test file")
            elif function and not any(re.search(DEFINES[Path(f).suffix].format(function),
                                                (ROOT / f).read_text(), re.M) for f in found):
                problems.append(f"{rel(path)}:{line}: {name} has no test {function}")
    fail_on(problems, "test files named in the documents")


def test_named_paths_and_links_exist():
    names = {Path(f).name for f in repo_files()}
    problems = []
    for path in DOCUMENTS:
        text = document_text(path)

        def where(m):
            return f"{rel(path)}:{text.count(chr(10), 0, m.start()) + 1}"

        for m in REPO_PATH.finditer(text):
            p = m.group(1).rstrip(".")
            if not (list(ROOT.glob(p)) if "*" in p else (ROOT / p).exists()) and \
                    not PLACEHOLDER.search(p):
                problems.append(f"{where(m)}: {p}: not in the repository")
        # a Markdown document's relative paths are from its directory (the
        # manual's are not: they are the program's, as in --demo)
        for pattern in (PARENT_PATH, LINK) if path.suffix == ".md" else ():
            for m in pattern.finditer(text):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                if not (path.parent / target).exists():
                    problems.append(f"{where(m)}: {target}: not in the repository")
        for m in DOCUMENT_NAME.finditer(text):
            if m.group(1) not in names:
                problems.append(f"{where(m)}: {m.group(1)}: no such document in the repository")
    fail_on(list(dict.fromkeys(problems)), "paths named in the documents")


# ---- history ----

ISSUE = re.compile(r"\bissues?\s+(?:no\.\s*)?#?\d+|(?<![\w/])#\d+\b", re.I)


def test_documents_cite_no_issue():
    problems = []
    for path in DOCUMENTS:
        text = document_text(path)
        for m in ISSUE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel(path)}:{line}: {m.group(0)!r} (history is git log's)")
    fail_on(problems, "issue numbers in the documents")
