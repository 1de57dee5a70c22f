#!/usr/bin/env bash
# The main job, end to end, on a real kernel tree it obtains itself:
# Debian's linux-source-6.12 as a git repository tagged v6.12. It generates
# the series (kpatch gen, the newest revision), checks it (kpatch verify),
# then builds, boots and checks it in QEMU (kpatch test --qemu). Output goes
# to ./outgoing and the cache. Extra arguments go to kpatch test.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
scripts/setup.sh
go build -o kpatch ./cmd/kpatch
tree=$(./kpatch tree)
./kpatch gen --tree "$tree" --base v6.12 -o outgoing

# The series as posted keeps errors the review found and v12 did not fix:
# the Co-developed-by order of patches 5 and 6,
# unwind_deferred_task_exit() reading current instead of its task, and
# unwind_reset_info() using instrumented atomics (local64_*, try_cmpxchg)
# after instrumentation_end() in exit_to_user_mode(). verify must report
# them (exit 1), and no other error.
known=CO_DEVELOPED_BY,NOINSTR_ACCESS,TASK_CURRENT
if ./kpatch verify --tree "$tree" --base v6.12 outgoing; then
	echo "e2e: kpatch verify reported none of the errors the posted series has ($known)" >&2
	exit 1
fi
./kpatch verify --tree "$tree" --base v6.12 --ignore "$known" outgoing >/dev/null || {
	echo "e2e: kpatch verify reports errors beyond the known ones ($known): see the report above" >&2
	exit 1
}

./kpatch test --qemu --tree "$tree" --base v6.12 "$@"
