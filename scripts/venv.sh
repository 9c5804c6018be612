#!/bin/sh
# The test and bench virtual environment (pinned versions, tests/requirements*.txt),
# made again only when the pins change. Usage: scripts/venv.sh [VENV]
set -eu
VENV="${1:-build/venv}"
REQS="tests/requirements.txt tests/requirements-nodeps.txt"
if [ ! -x "$VENV/bin/pytest" ] || ! cat $REQS | cmp -s - "$VENV/requirements.txt"; then
	python3 -m venv --clear "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check -r tests/requirements.txt
	"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
		--ignore-requires-python -r tests/requirements-nodeps.txt
	cat $REQS >"$VENV/requirements.txt"
fi
