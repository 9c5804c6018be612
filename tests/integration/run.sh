#!/bin/sh
# Integration tests: the real roastop binary, driven from pytest in a virtual
# environment under the build directory (pinned versions, tests/requirements*.txt).
set -eu
BUILD=${BUILD:-build}
VENV="${VENV:-build/venv}" # one environment for the plain and the ASan runs
sh scripts/venv.sh "$VENV"
# the dask-awkward path's own environment (tests/requirements-dak.txt says why)
VENV_DAK=$(realpath -m "${VENV_DAK:-$VENV-dak}")
sh scripts/venv.sh "$VENV_DAK" tests/requirements-dak.txt
# The emitter package installs like a user's would (pip, from the repository),
# but beside the venv, not into it: the Dask scheduler and workers the tests
# start run from the venv and must not be able to import roastop, as on a
# real cluster where only the client has it (MetricsCollector ships the code
# by value). PYTHONPATH gives it to pytest and to the client processes; the
# tests that start a cluster take it out of the cluster's environment.
"$VENV/bin/pip" uninstall -q -y --disable-pip-version-check roastop >/dev/null 2>&1 || true
rm -rf "$BUILD/roastop-client"
"$VENV/bin/pip" install -q --disable-pip-version-check --target "$BUILD/roastop-client" ./python
ROASTOP_CLIENT=$(realpath "$BUILD/roastop-client")
PYTHONPATH="$ROASTOP_CLIENT${PYTHONPATH:+:$PYTHONPATH}"
ROASTOP=$(realpath "${ROASTOP:-$BUILD/roastop}")
TOOLS=$(realpath "${TOOLS:-$BUILD/tools}")
export ROASTOP TOOLS ROASTOP_CLIENT PYTHONPATH VENV_DAK
if [ "${1:-}" = "--only-faults" ]; then
	shift
	exec "$VENV/bin/pytest" -q -p no:cacheprovider tests/faults "$@"
fi
# Test paths given (run.sh tests/faults/test_x.py -x): those alone; else the
# whole suite, with any options given.
case "${1:-}" in
tests/* | python/*) exec "$VENV/bin/pytest" -q -p no:cacheprovider "$@" ;;
esac
# The whole suite: its tests mostly wait (for a screen, a cluster, a timer), so
# PYTEST_JOBS of them (3) run at once, each file's tests in one process (its
# module fixtures, a cluster, made once).
exec "$VENV/bin/pytest" -q -p no:cacheprovider -n "${PYTEST_JOBS:-3}" --dist loadfile \
	tests/integration tests/faults python/tests "$@"
