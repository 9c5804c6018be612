#!/bin/sh
# make demo: replays the embedded default recording, a real coffea run
# (examples/demo-recording.jsonl, made by examples/record_demo.py; .gz when
# large, fed through zcat since --replay reads plain text). Without one, a
# generated recording stands in for it.
set -eu
BUILD=${1:-build}
for REAL in examples/demo-recording.jsonl examples/demo-recording.jsonl.gz; do
	[ -s "$REAL" ] || continue
	case "$REAL" in
	*.gz) zcat "$REAL" | exec "$BUILD/roastop" --replay - --speed 1 --output "$BUILD/demo-measurement" ;;
	*) exec "$BUILD/roastop" --replay "$REAL" --speed 1 --output "$BUILD/demo-measurement" ;;
	esac
done
REC="$BUILD/demo-recording.jsonl"
if [ ! -s "$REC" ]; then
	make --no-print-directory "$BUILD/tools/gen_recording" >/dev/null
	"$BUILD/tools/gen_recording" --chunks 3000 --workers 12 --hours 0.25 \
		--sample-interval 1 --datasets 3 --files 60 --fail-every 400 >"$REC"
fi
exec "$BUILD/roastop" --replay "$REC" --speed 30 --output "$BUILD/demo-measurement"
