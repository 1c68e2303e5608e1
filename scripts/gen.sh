#!/usr/bin/env bash
# One codegen command: TypeScript (src/generated), Go (clients/go/gen) and Python
# (clients/python/src/parkway/v1) from proto/, and the version copies (scripts/gen-version.sh).
# The output is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/gen-ts.sh
bash scripts/gen-go.sh
bash scripts/gen-py.sh
bash scripts/gen-version.sh
