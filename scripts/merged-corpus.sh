#!/usr/bin/env bash
# Merged-code benchmark: verify's rules and checkpatch.pl on code the
# kernel's reviewers accepted.
#
#   scripts/merged-corpus.sh [N] [SEED]
#
# The corpus is what changed between Debian's linux-source-6.1 and
# linux-source-6.12 (apt-get install linux-source-6.1 linux-source-6.12):
# one mail per directory, the directory's .c, .h, Kconfig and Makefile
# files as 6.1 has them turned into 6.12's (a directory holds a driver or
# a subsystem's part), applied to the 6.1 tree. Such a mail is no real
# patch: its message, subject and shape are made up, so only the rules
# that judge lines and C are counted (MSG_RULES below are left out).
#
# The sample (N directories, default 30) is repeatable: every directory
# of drivers/, fs/, net/, kernel/, mm/, lib/, sound/, crypto/, block/ and
# arch/x86/ that has .c files in both releases, ordered by the SHA-1 of
# SEED (default "kpatch") and its name, and the first N whose change has
# 20 to 2500 added lines taken. The trees and mails stay in the cache
# ($KPATCH_CACHE or ~/.cache/kpatch, under merged-corpus/), never in the
# repository.
#
# For each mail it runs `kpatch verify --tree 6.1 --plain --build-dir none
# --json` and the 6.12 tree's scripts/checkpatch.pl (--terse --show-types),
# and prints one table: for each rule and each checkpatch type, its
# findings, findings per 1000 added lines, and in how many mails; then
# the added lines and the time the run took (checkpatch.pl's verdicts are
# kept with the mails: a second run times verify alone). Set KPATCH_BIN
# to use an existing binary. Run it under nice on a shared machine.
set -euo pipefail
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
n=${1:-30}
seed=${2:-kpatch}
cache=${KPATCH_CACHE:-$HOME/.cache/kpatch}
root=$cache/merged-corpus
old=$root/linux-6.1
new=$root/linux-6.12
mails=$root/mails-$seed-$n
out=$root/out-$seed-$n
mkdir -p "$root"
start=$(date +%s)

if [ ! -e "$old/.complete" ]; then
	[ -e /usr/src/linux-source-6.1.tar.xz ] || { echo "merged-corpus: apt-get install linux-source-6.1" >&2; exit 2; }
	echo "merged-corpus: unpacking linux-source-6.1 (a minute or two)" >&2
	rm -rf "$old" "$root/linux-source-6.1"
	tar -C "$root" -xJf /usr/src/linux-source-6.1.tar.xz
	mv "$root/linux-source-6.1" "$old"
	touch "$old/.complete"
fi
if [ ! -e "$new/.complete" ]; then
	[ -e /usr/src/linux-source-6.12.tar.xz ] || { echo "merged-corpus: apt-get install linux-source-6.12" >&2; exit 2; }
	echo "merged-corpus: unpacking linux-source-6.12 (a minute or two)" >&2
	rm -rf "$new" "$root/linux-source-6.12"
	tar -C "$root" -xJf /usr/src/linux-source-6.12.tar.xz
	mv "$root/linux-source-6.12" "$new"
	touch "$new/.complete"
fi

bin=${KPATCH_BIN:-}
if [ -z "$bin" ]; then
	bin=$root/kpatch
	go build -o "$bin" ./cmd/kpatch
fi

# The sample: directories with C files in both trees, in SEED's order.
if [ ! -e "$mails/.complete" ]; then
	rm -rf "$mails"
	mkdir -p "$mails"
	(cd "$old" && find drivers fs net kernel mm lib sound crypto block arch/x86 -name '*.c' -printf '%h\n') | sort -u >"$mails/dirs-6.1"
	(cd "$new" && find drivers fs net kernel mm lib sound crypto block arch/x86 -name '*.c' -printf '%h\n') | sort -u >"$mails/dirs-6.12"
	comm -12 "$mails/dirs-6.1" "$mails/dirs-6.12" | while read -r d; do
		printf '%s %s\n' "$(printf '%s %s' "$seed" "$d" | sha1sum | cut -c1-40)" "$d"
	done | sort | cut -d' ' -f2 >"$mails/order"
	k=0
	while read -r d && [ "$k" -lt "$n" ]; do
		tmp=$mails/tmp
		rm -rf "$tmp"
		mkdir -p "$tmp/a/$d" "$tmp/b/$d"
		for f in "$old/$d"/*.[ch] "$old/$d"/Kconfig "$old/$d"/Makefile; do [ -f "$f" ] && cp "$f" "$tmp/a/$d/"; done
		for f in "$new/$d"/*.[ch] "$new/$d"/Kconfig "$new/$d"/Makefile; do [ -f "$f" ] && cp "$f" "$tmp/b/$d/"; done
		diff=$( (cd "$tmp" && git diff --no-index --no-renames --no-color a b || true) |
			sed -e 's#^diff --git a/[ab]/\(.*\) b/[ab]/#diff --git a/\1 b/#' -e 's#^--- a/a/#--- a/#' -e 's#^+++ b/b/#+++ b/#')
		added=$(printf '%s\n' "$diff" | grep -c '^+[^+]' || true)
		if [ "$added" -ge 20 ] && [ "$added" -le 2500 ]; then
			k=$((k + 1))
			name=$(printf '%s' "$d" | tr '/' '-')
			{
				printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n'
				printf 'From: Merged Code <merged@example.org>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n'
				printf 'Subject: [PATCH] %s: take the code of v6.12\n\n' "$d"
				printf 'What changed in %s between v6.1 and v6.12, as one change.\n\n' "$d"
				printf 'Signed-off-by: Merged Code <merged@example.org>\n---\n'
				printf '%s\n' "$diff"
				printf -- '-- \n2.39.5\n\n'
			} >"$mails/$(printf '%03d' "$k")-$name.mbox"
			printf '%s %s\n' "$added" "$name" >>"$mails/added"
		fi
	done <"$mails/order"
	rm -rf "$mails/tmp"
	touch "$mails/.complete"
fi

rm -rf "$out"
mkdir -p "$out"
vtime=0
ctime=0
for m in "$mails"/*.mbox; do
	b=$(basename "$m" .mbox)
	t0=$(date +%s.%N)
	rc=0
	"$bin" verify --tree "$old" --plain --base v6.1 --build-dir none --json "$m" >"$out/$b.json" 2>"$out/$b.err" || rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" -gt 1 ]; then
		echo "merged-corpus: verify exit $rc on $b: $(head -c 300 "$out/$b.err")" >&2
	fi
	# checkpatch.pl's verdict on a mail does not change: kept beside the
	# mail (run in $mails: it leaves its .checkpatch-camelcase cache in the
	# current directory)
	if [ ! -e "$mails/$b.cp" ]; then
		(cd "$mails" && perl "$new/scripts/checkpatch.pl" --root="$new" --no-color --terse --show-types --no-summary "$m" >"$mails/$b.cp.tmp" 2>/dev/null) || true
		mv "$mails/$b.cp.tmp" "$mails/$b.cp"
	fi
	cp "$mails/$b.cp" "$out/$b.cp"
	t2=$(date +%s.%N)
	vtime=$(echo "$vtime + $t1 - $t0" | bc)
	ctime=$(echo "$ctime + $t2 - $t1" | bc)
done

total=$(awk '{s+=$1} END {print s}' "$mails/added")
# Rules about a mail's shape, message and subject: made up here.
MSG_RULES='COMMIT_MESSAGE|SUBJECT_.*|SIGNED_OFF|FROM_SIGN_OFF.*|SOB_.*|CHANGELOG_.*|COVER_.*|MOVE_.*|FIXES_.*|DIFFSTAT|PATCH_SPLIT|TRAILER_.*|LINK_.*|COMMIT_LOG_.*|GIT_COMMIT_ID|EMAIL_SUBJECT|FILE_PATH_CHANGES|SPDX_LICENSE_TAG|MISSING_SIGN_OFF|NO_AUTHOR_SIGN_OFF'
{
	printf '| source | ID | severity | findings | per 1000 added lines | mails |\n|---|---|---|---|---|---|\n'
	for j in "$out"/*.json; do
		jq -r --arg m "$(basename "$j")" '.findings[]? | select(.source == "verify") | "verify \(.id) \(.severity) \($m)"' "$j" 2>/dev/null || true
	done
	for c in "$out"/*.cp; do
		sed -n 's/^[^:]*:[0-9]*: \(ERROR\|WARNING\|CHECK\):\([A-Z0-9_]*\):.*/checkpatch \2 \1 '"$(basename "$c")"'/p' "$c" |
			sed 's/ ERROR / error /; s/ WARNING / warning /; s/ CHECK / check /'
	done
} | awk -v total="$total" -v skip="^($MSG_RULES)\$" '
	NR == 1 || NR == 2 { print; next }
	$2 ~ skip { next }
	{ k = $1 " " $2 " " $3; c[k]++; if (!seen[k, $4]++) m[k]++ }
	END {
		for (k in c) { split(k, f, " "); printf "| %s | %s | %s | %d | %.2f | %d |\n", f[1], f[2], f[3], c[k], 1000 * c[k] / total, m[k] | "sort -t\"|\" -k2,2 -k5,5nr" }
	}' >"$out/table.md"
cat "$out/table.md"
printf '\n%d mails (%s), %d added lines; verify %.0f s, checkpatch.pl %.0f s, whole run %d s\n' \
	"$(ls "$mails"/*.mbox | wc -l)" "seed $seed" "$total" "$vtime" "$ctime" "$(($(date +%s) - start))"
