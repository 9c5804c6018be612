#!/bin/sh
# make demo: replays the recording shipped with roastop, a real coffea run
# (examples/demo-recording.jsonl, made by examples/record_demo.py), as
# `roastop --demo` does wherever roastop is installed.
set -eu
BUILD=${1:-build}
exec "$BUILD/roastop" --demo --output "$BUILD/demo-measurement"
