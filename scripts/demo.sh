#!/bin/sh
# make demo: replays the embedded default recording. Until a recording of a
# real coffea run ships (examples/), a generated one stands in for it.
set -eu
BUILD=${1:-build}
REC="$BUILD/demo-recording.jsonl"
if [ ! -s "$REC" ]; then
	make --no-print-directory "$BUILD/tools/gen_recording" >/dev/null
	"$BUILD/tools/gen_recording" --chunks 3000 --workers 12 --hours 0.25 \
		--sample-interval 1 --datasets 3 --files 60 --fail-every 400 >"$REC"
fi
exec "$BUILD/roastop" --replay "$REC" --speed 30 --output "$BUILD/demo-measurement"
