#!/usr/bin/env bash
# The test command: set up a bare Debian machine, then run every test.
# The real-tree tests unpack Debian's linux-source-6.12 into the cache once
# ($KPATCH_CACHE, else ~/.cache/kpatch) and build kernel objects there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
go vet ./...
go test -timeout 80m ./... "$@"
