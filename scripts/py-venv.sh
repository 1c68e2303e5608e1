#!/usr/bin/env bash
# Makes <repo>/.venv (when missing) and installs the Python client with its test and lint extras into it
# (non-editable, so the tests exercise the built wheel); prints the venv's python.
# Environment: PYTHON = interpreter used to create the venv (default python3, must be >= 3.10).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$PWD/.venv"
py="$venv/bin/python"
if [[ ! -x "$py" ]]; then
  "${PYTHON:-python3}" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "py-venv: ${PYTHON:-python3} is older than Python 3.10" >&2
    exit 1
  }
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$py" -m pip install -q --disable-pip-version-check "./clients/python[test,lint]" >&2
echo "$py"
