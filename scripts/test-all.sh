#!/usr/bin/env bash
# Every check in every language: the build, typecheck, lint, proto lint and breaking check, codegen diff,
# TypeScript tests, Go vet and tests, Python tests. Runs them all, then fails if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
# Every process the tests start carries this in its environment; check-leftovers finds any still
# running at the end.
run_id="$(date +%s)-$$-${RANDOM}"
tests() { env PARKWAY_TEST_RUN="${run_id}" "$@"; }
step() {
  local name="$1"
  shift
  echo "==> ${name}"
  if ! "$@"; then
    failed+=("${name}")
    echo "==> ${name}: FAILED"
  fi
}
# A step started in the background (`beside`), its output kept in a file until `collect` shows it.
logs="$(mktemp -d)"
trap 'rm -rf "${logs}"' EXIT
declare -A pids=()
beside() {
  local name="$1"
  shift
  "$@" >"${logs}/${name}" 2>&1 &
  pids[${name}]=$!
}
collect() {
  local name="$1" status=0
  echo "==> ${name}"
  wait "${pids[${name}]}" || status=$?
  cat "${logs}/${name}"
  if [[ ${status} -ne 0 ]]; then
    failed+=("${name}")
    echo "==> ${name}: FAILED"
  fi
}

step build npm run build --silent
step typecheck npx tsc --noEmit -p tsconfig.json
step lint bash -c 'npx eslint . && npx prettier --check . && node scripts/check-cycles.mjs'
step buf-lint npx buf lint
step proto-breaking bash scripts/proto-breaking.sh
step gen-check bash scripts/gen-check.sh
step test-ts tests npx vitest run --exclude 'test/faults/**' --exclude 'test/fuzz/**' \
  --exclude test/integration/scenarios-cluster.test.ts
# The fault harnesses kill and restart servers, the fuzz test sends 10,000 inputs, and the
# scenarios on three nodes run three servers and a database: they run alone, one after the
# other, so their timing is their own.
step test-faults tests npx vitest run --no-file-parallelism test/faults test/fuzz \
  test/integration/scenarios-cluster.test.ts
# The Go and Python tests wait on the servers they start far more than they compute: they run side
# by side, each one's output shown once it is done.
beside test-go tests bash scripts/test-go.sh
beside test-py tests bash scripts/test-py.sh
collect test-go
collect test-py
step leftovers bash scripts/check-leftovers.sh "${run_id}"

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all checks passed"
