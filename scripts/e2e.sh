#!/usr/bin/env bash
# The main job, end to end, on a real kernel tree it obtains itself:
# Debian's linux-source-6.12 as a git repository tagged v6.12. It generates
# the series (kpatch gen), then builds, boots and checks it in QEMU
# (kpatch test --qemu). Output goes to ./outgoing and the cache.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
scripts/setup.sh
go build -o kpatch ./cmd/kpatch
tree=$(./kpatch tree)
./kpatch gen --tree "$tree" --base v6.12 -o outgoing
./kpatch test --qemu --tree "$tree" --base v6.12 "$@"
