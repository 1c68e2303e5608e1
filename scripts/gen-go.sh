#!/usr/bin/env bash
# Writes the Go messages and gRPC services for proto/parkway into clients/go/gen/parkway/v1/.
# Installs the pinned protoc-gen-go and protoc-gen-go-grpc into .tools/bin first, unless binaries of
# exactly those versions are already there. Idempotent; prints nothing on success.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

TOOLS_BIN="$PWD/.tools/bin"

# ensure_tool BINARY PACKAGE VERSION: installs PACKAGE@VERSION into $TOOLS_BIN unless BINARY there
# was built from that module version.
ensure_tool() {
  local bin="$TOOLS_BIN/$1" pkg="$2" version="$3" have=""
  if [[ -x "$bin" ]]; then
    have="$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')"
  fi
  if [[ "$have" != "$version" ]]; then
    mkdir -p "$TOOLS_BIN"
    local log
    if ! log="$(GOBIN="$TOOLS_BIN" go install "$pkg@$version" 2>&1)"; then
      printf '%s\n' "$log" >&2
      return 1
    fi
  fi
}

ensure_tool protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
ensure_tool protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"

npx buf generate --template buf.gen.go.yaml --path proto/parkway
