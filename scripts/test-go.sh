#!/usr/bin/env bash
# Vets and tests the Go client in clients/go. Tests start the real server through npm (see
# clients/go/internal/testserver), or use the one at PARKWAY_ADDR when set. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/../clients/go"
go vet ./...
go test -count=1 ./...
