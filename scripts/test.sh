#!/usr/bin/env bash
# The test command: set up a bare Debian machine, run kpatch test qemu on
# Debian's linux-source-6.12 (all self-test cases must pass), then every Go
# test. The real-tree tests unpack the kernel sources into the cache once
# ($KPATCH_CACHE, else ~/.cache/kpatch) and build kernel objects there.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
scripts/setup.sh
go vet ./...
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -o "$bin/kpatch" ./cmd/kpatch
# With no revision named, test qemu boots the newest state with an x86
# unwinder: v16 with the x86 part as Linux 6.19 merged it (--stack
# x86-6.19), 64-bit and IA32 tasks unwound (docs/revisions.md)
"$bin/kpatch" test qemu --tree "$("$bin/kpatch" tree)" --base v6.12
go test -count=1 -timeout 80m ./... "$@"
