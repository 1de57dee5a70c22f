#!/usr/bin/env bash
# The test command: set up a bare Debian machine, then run every test.
# The real-tree tests unpack Debian's linux-source-6.12 into the cache once
# ($KPATCH_CACHE, else ~/.cache/kpatch) and build kernel objects there.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
scripts/setup.sh
go vet ./...
go test -count=1 -timeout 80m ./... "$@"
