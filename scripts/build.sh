#!/usr/bin/env bash
# Compiles src/ to dist/ (JavaScript, declarations, source maps; tsconfig.build.json) and copies the
# files the server reads at run time (the descriptor set, the demo script) beside the compiled code.
# Then compiles the light client package, @parkway/client, from src/client and src/generated to
# clients/typescript/dist (clients/typescript/tsconfig.json). Last, bundles the web console
# (console/, with src/browser) into dist/console/, which the web port serves at `/`.
# Incremental: a second run with nothing changed only checks. `npm install` runs it (prepare).
# With --if-stale it does nothing unless a source is newer than the last build (the tests use this).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=dist/.build-stamp
if [[ "${1:-}" == "--if-stale" && -f "$stamp" ]] &&
  [[ -z "$(find src console tsconfig.json tsconfig.build.json package.json clients/typescript/tsconfig.json clients/typescript/package.json -newer "$stamp" -print -quit)" ]]; then
  exit 0
fi
npx tsc -p tsconfig.build.json
npx tsc -p clients/typescript/tsconfig.json
while IFS= read -r -d '' file; do
  target="dist/${file#src/}"
  if [[ ! -f "$target" || "$file" -nt "$target" ]]; then
    mkdir -p "$(dirname "$target")"
    cp "$file" "$target"
  fi
done < <(find src -type f ! -name '*.ts' -print0)
npx tsc --noEmit -p console/tsconfig.json
npx vite build --config console/vite.config.ts
touch "$stamp"
