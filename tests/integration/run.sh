#!/bin/sh
# Integration tests: the real roastop binary, driven from pytest in a virtual
# environment under the build directory (pinned versions, tests/requirements.txt).
set -eu
BUILD=${BUILD:-build}
VENV="${VENV:-build/venv}" # one environment for the plain and the ASan runs
if [ ! -x "$VENV/bin/pytest" ] || ! cmp -s tests/requirements.txt "$VENV/requirements.txt"; then
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check -r tests/requirements.txt
	cp tests/requirements.txt "$VENV/requirements.txt"
fi
# the emitter package installs like a user's would (pip, from the repository)
"$VENV/bin/pip" install -q --disable-pip-version-check ./python
ROASTOP=$(realpath "${ROASTOP:-$BUILD/roastop}")
TOOLS=$(realpath "${TOOLS:-$BUILD/tools}")
export ROASTOP TOOLS
if [ "${1:-}" = "--only-faults" ]; then
	shift
	exec "$VENV/bin/pytest" -q -p no:cacheprovider tests/faults "$@"
fi
exec "$VENV/bin/pytest" -q -p no:cacheprovider tests/integration tests/faults python/tests "$@"
