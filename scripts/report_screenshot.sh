#!/bin/sh
# make report-screenshot: docs/report.png, the shipped demo recording's
# report.html (a real coffea run, replayed headless) rendered by Debian's
# headless Chromium. The window is the page's top: headline, timelines,
# histogram, fine metrics and the start of the tables.
set -eu
BUILD=${1:-build}
OUT=${2:-docs/report.png}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BUILD/roastop" --replay examples/demo-recording.jsonl --speed 0 --headless \
	--output "$WORK/m" >/dev/null
SANDBOX=
[ "$(id -u)" -ne 0 ] || SANDBOX=--no-sandbox # chromium refuses root otherwise
chromium --headless=new $SANDBOX --disable-gpu --hide-scrollbars --no-first-run \
	--user-data-dir="$WORK/profile" --screenshot="$WORK/report.png" \
	--window-size=1100,2300 "file://$(realpath "$WORK/m/latest/report.html")" 2>/dev/null
cp "$WORK/report.png" "$OUT"
echo "$OUT: $(wc -c <"$OUT") bytes"
