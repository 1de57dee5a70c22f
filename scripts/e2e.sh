#!/usr/bin/env bash
# The main job, end to end, on a real kernel tree it obtains itself:
# Debian's linux-source-6.12 as a git repository tagged v6.12. It generates
# the series (kpatch gen, the newest revision: v16, as Linux 6.17 merged
# it), checks it (kpatch verify), writes the x86 part as Linux 6.19 merged
# it stacked on it (kpatch gen --stack x86-6.19, to ./outgoing-x86-6.19),
# checks both, builds the newest revision with the 6.19 series in the
# three default configurations of kpatch test build (x86_64,
# x86_64-noia32, i386; W=1, C=1 with sparse), then builds, boots and checks
# them in QEMU (kpatch test qemu --stack x86-6.19): 64-bit and IA32 tasks
# unwound, every trace compared with the walker. v16 alone selects no x86
# unwinder (docs/revisions.md). Output goes to ./outgoing,
# ./outgoing-x86-6.19 and the cache. Extra arguments go to kpatch test
# qemu.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
scripts/setup.sh
CGO_ENABLED=0 go build -o kpatch ./cmd/kpatch
tree=$(./kpatch tree)
./kpatch gen --tree "$tree" --base v6.12 -o outgoing --json >outgoing.json
version=$(sed -n 's/^  "version": \([0-9]*\),$/\1/p' outgoing.json)
patches=$(grep -c '"number":' outgoing.json)
rm -f outgoing.json
echo "e2e: v$version, $patches patches"
stack=x86-6.19
./kpatch gen --tree "$tree" --base v6.12 --stack $stack -o outgoing-$stack --json >outgoing-$stack.json
stacked=$(grep -c '"number":' outgoing-$stack.json)
rm -f outgoing-$stack.json
echo "e2e: the x86 part as 6.19 merged it on v$version, $stacked patches"

# The series as posted keeps errors the review and the field found and no
# revision fixed: unwind_deferred_task_exit() reading current instead of
# its task (TASK_CURRENT), unwind_reset_info() using instrumented atomics
# after instrumentation_end() in exit_to_user_mode() (NOINSTR_ACCESS),
# and unwind_deferred_request(), callable in NMI, queueing its work with
# task_work_add(TWA_RESUME) (NMI_UNSAFE). verify must report them (exit
# 1), and no other error; what checkpatch.pl calls warnings (the
# Co-developed-by order, the sender's sign-off) stay warnings.
known=NMI_UNSAFE,NOINSTR_ACCESS,TASK_CURRENT
# --spec: the series' own review rules (TASK_CURRENT among them) apply to
# posted mail only when its spec is named.
if ./kpatch verify --tree "$tree" --base v6.12 --spec templates/linux outgoing; then
	echo "e2e: kpatch verify reported none of the errors the posted series has ($known)" >&2
	exit 1
fi
./kpatch verify --tree "$tree" --base v6.12 --spec templates/linux --ignore "$known" outgoing >/dev/null || {
	echo "e2e: kpatch verify reports errors beyond the known ones ($known): see the report above" >&2
	exit 1
}
# The 6.19 series does not apply to v6.12 alone: verify checks it
# generated with v$version underneath, as one series. Its patches fix
# NMI_UNSAFE (a38a64712e74) and NOINSTR_ACCESS (the placement fix), which
# stay reported at the v16 patches that brought them; X86_PREFIX (the
# v11 review's point) is what 6.19 merged anyway for
# is_uprobe_at_func_entry() (docs/verify.md).
./kpatch verify --tree "$tree" --base v6.12 --stack $stack --ignore "$known,X86_PREFIX" >/dev/null || {
	echo "e2e: kpatch verify --stack $stack reports errors beyond the known ones ($known,X86_PREFIX)" >&2
	exit 1
}

# --from LAST: the other patches applied, the last one builds everything
# the series affects, once per configuration (on a fresh machine: a base
# build and one near-full tinyconfig build each). Patch by patch, as the
# README shows it, is the same command without --from: about seven
# near-full builds per configuration when nothing is cached. Exit 1 if a
# configuration fails.
./kpatch test build --tree "$tree" --base v6.12 --stack $stack --from "$((patches + stacked))" --jobs "$(nproc)"

./kpatch test qemu --tree "$tree" --base v6.12 --stack $stack "$@"
