#!/usr/bin/env bash
# Vets and lints (staticcheck) the Go client in clients/go and the example in examples/go (a module of
# its own, which requires the client through a replace directive), then tests the client, Example
# functions included. Tests start the real server through npm (see clients/go/internal/testserver),
# or use the one at PARKWAY_ADDR when set for the tests that need no configuration of their own.
# Exits non-zero on failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
(cd "$root/clients/go" && go vet ./... && go run "$staticcheck" ./...)
(cd "$root/examples/go" && go vet ./... && go run "$staticcheck" ./...)
cd "$root/clients/go"
go test -count=1 ./...
