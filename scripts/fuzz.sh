#!/bin/bash
# Runs every libFuzzer harness for SECONDS each (ASan + UBSan builds), JOBS at
# a time, each from its committed seed corpus plus what earlier runs found.
# A crash prints the harness's log tail and fails.
# Usage: scripts/fuzz.sh BUILD SECONDS JOBS harness...
set -eu
build=$1 seconds=$2 jobs=$3
shift 3
run_one() {
	n=$(basename "$1")
	mkdir -p "$build/fuzz-corpus/$n"
	dict=""  # a harness's dictionary of its format's tokens, when it has one
	[ -f "tests/fuzz/$n.dict" ] && dict="-dict=tests/fuzz/$n.dict"
	if "$1" -max_total_time="$seconds" -max_len=65536 -artifact_prefix="$build/fuzz/$n-" $dict \
		"$build/fuzz-corpus/$n" "tests/fuzz/corpus/$n" >"$build/fuzz/$n.log" 2>&1; then
		echo "fuzz $n: $seconds s, $(grep -o 'Done [0-9]* runs' "$build/fuzz/$n.log" | tail -1)"
	else
		echo "fuzz $n: FAILED"; tail -40 "$build/fuzz/$n.log"; return 1
	fi
}
fail=0
running=0
for f in "$@"; do
	run_one "$f" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n 2>/dev/null || fail=1
		running=$((running - 1))
	fi
done
while [ "$running" -gt 0 ]; do
	wait -n 2>/dev/null || fail=1
	running=$((running - 1))
done
exit $fail
