#!/usr/bin/env bash
# Regenerates every language and fails when the result differs from what is committed, so a proto
# change (even a comment) without `npm run gen` cannot land.
set -euo pipefail
cd "$(dirname "$0")/.."
GENERATED=(src/generated src/generated-es clients/go/gen clients/python/src/parkway/v1 clients/python/src/parkway/_version.py clients/go/version.go clients/typescript/package.json)
bash scripts/gen.sh
if [[ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]]; then
  echo "gen:check: generated code is out of date with proto/; run 'npm run gen' and commit:" >&2
  git status --short -- "${GENERATED[@]}" >&2
  git --no-pager diff --stat -- "${GENERATED[@]}" >&2
  exit 1
fi
echo "gen:check: generated code matches proto/"
