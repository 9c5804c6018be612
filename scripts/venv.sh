#!/bin/sh
# A test and bench virtual environment with pinned versions, made again only when
# the pins change. Usage: scripts/venv.sh [VENV [REQUIREMENTS...]]; without
# requirement files, build/venv's: tests/requirements.txt and
# tests/requirements-nodeps.txt. A file named *-nodeps.txt is installed without
# dependencies and without the Python version check (roastcoffea 0.1.2 declares
# Python >= 3.12 and runs on 3.11).
set -eu
VENV="${1:-build/venv}"
[ $# -gt 0 ] && shift
REQS="${*:-tests/requirements.txt tests/requirements-nodeps.txt}"
if [ ! -x "$VENV/bin/python" ] || ! cat $REQS | cmp -s - "$VENV/requirements.txt"; then
	python3 -m venv --clear "$VENV"
	for r in $REQS; do
		case "$r" in
		*-nodeps.txt) "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
			--ignore-requires-python -r "$r" ;;
		*) "$VENV/bin/pip" install -q --disable-pip-version-check -r "$r" ;;
		esac
	done
	cat $REQS >"$VENV/requirements.txt"
fi
