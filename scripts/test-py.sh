#!/usr/bin/env bash
# Lints the Python client (ruff, its formatter's check, mypy strict; configured in
# clients/python/pyproject.toml) and runs its tests (clients/python/tests) against a real Parkway server.
#
# Ensures <repo>/.venv exists (created when missing) and installs the package with its test and lint
# extras into it (non-editable, so the tests exercise the built wheel), then runs pytest in clients/python,
# the test files spread over two worker processes (pytest-xdist, a file's tests on one worker; each
# worker starts the servers its fixtures need).
# Exits non-zero when a lint finds anything, when any test fails or when no test was collected
# (pytest exit code 5).
# Extra arguments are passed to pytest. Environment: PYTHON = interpreter used to create the venv
# (default python3, must be >= 3.10); PARKWAY_ADDR = use an already-running server instead of
# starting one.
set -euo pipefail
cd "$(dirname "$0")/.."
py="$(bash scripts/py-venv.sh)"

cd clients/python
lint=0
bin="$(dirname "$py")"
"$bin/ruff" check src tests || lint=1
"$bin/ruff" format --check src tests || lint=1
"$bin/mypy" || lint=1
status=0
"$py" -m pytest -n 2 --dist loadfile "$@" || status=$?
if [[ $status -eq 5 ]]; then
  echo "test-py: pytest collected no tests" >&2
  exit 1
fi
if [[ $lint -ne 0 ]]; then
  echo "test-py: the Python lint failed (ruff check, ruff format --check or mypy, above)" >&2
  exit 1
fi
exit "$status"
