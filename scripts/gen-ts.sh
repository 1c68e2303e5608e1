#!/usr/bin/env bash
# Writes the TypeScript messages and grpc-js services for every proto into src/generated/, and the
# protobuf-es messages and service descriptors (for browsers and Connect) into src/generated-es/.
set -euo pipefail
cd "$(dirname "$0")/.."
# grpc.health.v1 is only served by reflection; grpc-health-check implements it.
npx buf generate --template buf.gen.ts.yaml --exclude-path proto/grpc
npx buf generate --template buf.gen.es.yaml --exclude-path proto/grpc
# The descriptor set (with imports) served by server reflection, so grpcurl-style tools can resolve
# every type.
npx buf build --as-file-descriptor-set -o src/generated/parkway.binpb
