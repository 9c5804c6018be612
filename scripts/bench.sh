#!/bin/sh
# Every benchmark (bench/RESULTS.md): the C ones, $BUILD/bench/bench_* (one
# per bench/bench_*.c), then bench/bench_emitter.py, bench_scheduler_cost.py,
# bench_eventstream.py, bench_observer.py and bench_dask_path.py with $VENV's python. The first that fails stops
# the run with its status.
#
#   BUILD=build VENV=build/venv sh scripts/bench.sh [--smoke]
#
# --smoke (make bench-smoke, part of make test), or BENCH_SMOKE=1 in the
# environment, exports BENCH_SMOKE=1: each
# benchmark then runs every measurement briefly (small sizes, short windows,
# the fewest workers) and still prints every line; no figure is asserted.
#
# Each benchmark ends every process it starts, also when interrupted: the
# Python ones stop theirs on SIGINT, SIGTERM or SIGHUP and at exit
# (tests/integration/dask_cluster.py, end_with_me), the C ones' children
# die with them (bench/bench.h, bench_die_with); test_bench_cleanup.py
# shows it.
#
# A benchmark's figures are the lines of its standard output that begin
# with "bench " (notes go to standard error), each of the form
#
#   bench <name>: <value> <unit> (<note>)
#
# name: lower case, digits and _; value: a decimal number, signed or not, or
# n/a; unit: one word without spaces or parentheses (ms, %, msg/s, ratio,
# us/worker); note: free text without parentheses, saying what the figure
# is compared with. A figure with a target says it first in the note:
#
#   (target <op> <number>[ x <peer>][; more])   op: <, <=, > or >=
#
# e.g. "bench frame_time_1000_workers: 3.64 ms (target < 20)",
# "bench scheduler_route_cost_32w: 36 us (target <= 0.1 x identity)",
# "bench udp_drop_onset: n/a msg/s (target >= 500000)".
# Both modes check that every benchmark printed at least one such line, all
# of that form and no name twice; --smoke also checks that every figure in
# the table at the top of bench/RESULTS.md was printed (a cluster's size in
# a name, _32w, is not compared: smoke runs smaller clusters), where the
# full run only warns.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="${BUILD:-build}"
VENV="${VENV:-$BUILD/venv}"
export BUILD

smoke=0
[ "${BENCH_SMOKE:-0}" = 1 ] && smoke=1 # make bench BENCH_SMOKE=1: the same as --smoke
case "${1:-}" in
--smoke) smoke=1 ;;
"") ;;
*) echo "usage: BUILD=build VENV=build/venv sh scripts/bench.sh [--smoke]" >&2; exit 2 ;;
esac
if [ "$smoke" = 1 ]; then
	BENCH_SMOKE=1
	export BENCH_SMOKE
	me=bench-smoke
else
	me=bench
fi

# The documented form; a note that begins with "target" must have the
# target's form.
NUM='[0-9]+(\.[0-9]+)?'
HEAD="^bench [a-z][a-z0-9_]*: ([-+]?$NUM|n/a) [^ ()]+ "
FORM="$HEAD\\([^()]+\\)\$"
TARGET="$HEAD\\(target (<|<=|>|>=) $NUM( x [a-z_]+)?(; [^()]+)?\\)\$"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
: >"$tmp/names"
lines=0
benches=0

fail() {
	echo "$me: FAIL: $*" >&2
	exit 1
}

# The figures' lines of one benchmark's output, checked; their names are
# added to $tmp/names.
check() {
	label=$1 out=$2
	grep '^bench ' "$out" >"$tmp/lines" || fail "$label printed no 'bench <name>: ...' line"
	bad=$( { grep -Ev "$FORM" "$tmp/lines" || :; grep -E ' \(target' "$tmp/lines" |
		grep -Ev "$TARGET" || :; } | sed 's/^/  /')
	[ -z "$bad" ] || fail "$label printed lines not of the form" \
		"'bench <name>: <value> <unit> (<note>)', the note as '(target <op> <number>...)'" \
		"when it gives a target (scripts/bench.sh):
$bad"
	sed 's/^bench \([a-z0-9_]*\):.*/\1/' "$tmp/lines" >>"$tmp/names"
	lines=$((lines + $(wc -l <"$tmp/lines")))
	benches=$((benches + 1))
}

# Runs one benchmark, its standard output shown as it comes and kept for
# check(); its status is the pipeline's first command's, kept in a file (sh
# has no pipefail).
run() {
	label=$1
	shift
	echo "== $label" >&2
	{
		rc=0
		"$@" || rc=$?
		echo "$rc" >"$tmp/rc"
	} | tee "$tmp/out"
	rc=$(cat "$tmp/rc")
	[ "$rc" = 0 ] || fail "$label exited with status $rc"
	check "$label" "$tmp/out"
}

for src in "$ROOT"/bench/bench_*.c; do
	b="$BUILD/bench/$(basename "$src" .c)"
	[ -x "$b" ] || fail "$b is not built (make $b)"
	run "$b" "$b"
done
PY="$VENV/bin/python"
[ -x "$PY" ] || fail "no $PY (sh scripts/venv.sh $VENV)"
for py in bench_emitter.py bench_scheduler_cost.py bench_eventstream.py bench_observer.py bench_dask_path.py; do
	run "bench/$py" "$PY" "$ROOT/bench/$py"
done

dups=$(sort "$tmp/names" | uniq -d)
[ -z "$dups" ] || fail "names printed more than once:" $dups

# The figures named in the first column of the table at the top of
# RESULTS.md: `name` or `name_{a,b,c}_32w`, expanded; the cluster size of a
# name ending in _<n>w becomes _Nw on both sides.
awk '
	/^\| figure \|/ { in_table = 1; next }
	in_table && !/^\|/ { exit }
	in_table && match($0, /`[^`]+`/) {
		name = substr($0, RSTART + 1, RLENGTH - 2)
		if (match(name, /\{[^}]*\}/)) {
			n = split(substr(name, RSTART + 1, RLENGTH - 2), alt, ",")
			for (i = 1; i <= n; i++)
				print substr(name, 1, RSTART - 1) alt[i] substr(name, RSTART + RLENGTH)
		} else
			print name
	}' "$ROOT/bench/RESULTS.md" | sed 's/_[0-9][0-9]*w$/_Nw/' | sort -u >"$tmp/table"
[ -s "$tmp/table" ] || fail "no figure found in the table at the top of bench/RESULTS.md"
sed 's/_[0-9][0-9]*w$/_Nw/' "$tmp/names" | sort -u >"$tmp/printed"
missing=$(comm -23 "$tmp/table" "$tmp/printed")
if [ -n "$missing" ]; then
	what="figures of bench/RESULTS.md's table that no benchmark printed (_Nw: at any cluster size):"
	[ "$smoke" = 0 ] || fail "$what" $missing
	echo "$me: note: $what" $missing >&2
fi

echo "$me: $lines lines from $benches benchmarks, all of the documented form"
