#!/usr/bin/env bash
# Runs the Python client's tests (clients/python/tests) against a real Parkway server.
#
# Ensures <repo>/.venv exists (created when missing) and installs the package with its test extra
# into it (non-editable, so the tests exercise the built wheel), then runs pytest in clients/python,
# the test files spread over two worker processes (pytest-xdist, a file's tests on one worker; each
# worker starts the servers its fixtures need).
# Exits non-zero when any test fails or when no test was collected (pytest exit code 5).
# Extra arguments are passed to pytest. Environment: PYTHON = interpreter used to create the venv
# (default python3, must be >= 3.10); PARKWAY_ADDR = use an already-running server instead of
# starting one.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$(bash scripts/py-venv.sh)"

cd clients/python
status=0
"$py" -m pytest -n 2 --dist loadfile "$@" || status=$?
if [[ $status -eq 5 ]]; then
  echo "test-py: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
