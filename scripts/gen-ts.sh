#!/usr/bin/env bash
# Writes the TypeScript messages and grpc-js services for every proto into src/generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
npx buf generate --template buf.gen.ts.yaml
# The descriptor set (with imports) served by server reflection, so grpcurl-style tools can resolve
# every type.
npx buf build --as-file-descriptor-set -o src/generated/parkway.binpb
