#!/usr/bin/env bash
# Writes the TypeScript messages and grpc-js services for every proto into src/generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf generate --template buf.gen.ts.yaml
npx prettier --log-level warn --write src/generated
