#!/usr/bin/env bash
# Checks proto/ for breaking changes against the last released contract: the newest git tag named
# proto/vX.Y.Z. Before the first release there is nothing to compare with, and it says so.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="$(git tag --list 'proto/v*' --sort=-v:refname | head -n 1)"
if [[ -z "$tag" ]]; then
  echo "proto:breaking: no released contract yet (no proto/v* tag); nothing to compare"
  exit 0
fi
npx buf breaking --against ".git#tag=${tag},subdir=." 
echo "proto:breaking: no breaking change since ${tag}"
