#!/usr/bin/env bash
# Whole-process benchmark: kpatch gen against git format-patch writing the
# same patches, as a user pays for them (process start-up, first reads).
#
#   scripts/bench-gen.sh [RUNS] [VERSION] [--stack NAME]
#
# (default 15 runs of each, the newest revision). With --stack NAME the
# series stacked on the main one is measured (gen --stack NAME -v VERSION,
# its own patches on a branch that holds its prerequisite's commits too),
# and git format-patch writes the same own patches from the branch's tip,
# with --base naming the base so that it lists the prerequisite's patch ids
# as kpatch does.
#
# It builds kpatch, makes a `git clone --shared` of the cached Debian 6.12
# tree (never touching the cached tree itself), records the series there on
# a branch with `kpatch gen --branch`, then alternates
#
#   kpatch gen -v N --tree CLONE --base v6.12 -o OUT1
#   git -C CLONE format-patch --cover-letter --thread -vN --base=v6.12 -o OUT2 v6.12..BRANCH
#
# under /usr/bin/time -v, and prints for each the median wall time, the
# median CPU time (user+system) and the median peak RSS, and the ratios
# kpatch/git. Set KPATCH_BIN to measure an existing binary.
set -euo pipefail
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/.."
stack=()
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--stack) [ $# -ge 2 ] || { echo "bench-gen: --stack needs a series name (x86)" >&2; exit 2; }
		stack=(--stack "$2"); shift 2 ;;
	--stack=*) stack=(--stack "${1#--stack=}"); shift ;;
	-*) echo "bench-gen: unknown option $1 (usage: bench-gen.sh [RUNS] [VERSION] [--stack NAME])" >&2; exit 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
runs=${args[0]:-15}
version=${args[1]:-0}
for tool in git /usr/bin/time awk sort; do
	command -v "$tool" >/dev/null || { echo "bench-gen: $tool is missing (apt-get install git time gawk coreutils)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${KPATCH_BIN:-}
if [ -z "$bin" ]; then
	bin=$work/kpatch
	CGO_ENABLED=0 go build -o "$bin" ./cmd/kpatch
fi
tree=$("$bin" tree)
clone=$work/linux
git clone -q --shared --no-checkout "$tree" "$clone"
"$bin" gen "${stack[@]}" -v "$version" --tree "$clone" --base v6.12 --branch bench -o "$work/setup" --json >"$work/setup.json" 2>"$work/setup.err" || {
	echo "bench-gen: kpatch gen --branch failed:" >&2; cat "$work/setup.err" >&2; exit 1; }
version=$(sed -n 's/^  "version": \([0-9]*\),$/\1/p' "$work/setup.json")
n=$(grep -c '"number":' "$work/setup.json")
# A stacked series' branch also holds its prerequisite's commits: git
# format-patch writes the last n, as kpatch does.
[ "$(git -C "$clone" rev-list --count v6.12..bench)" -ge "$n" ] || { echo "bench-gen: branch bench does not hold the $n commits of v$version" >&2; exit 1; }
[ ${#stack[@]} -gt 0 ] || [ "$(git -C "$clone" rev-list --count v6.12..bench)" = "$n" ] || { echo "bench-gen: branch bench does not hold the $n commits of v$version" >&2; exit 1; }
echo "bench-gen: ${stack[1]:+${stack[1]} }v$version, $n patches, $runs runs of each"

kp=("$bin" gen "${stack[@]}" -v "$version" --tree "$clone" --base v6.12 -o "$work/out-kpatch")
gt=(git -C "$clone" -c core.pager=cat format-patch -q --cover-letter --thread "-v$version" --base=v6.12 -o "$work/out-git" "bench~$n..bench")

# measure NAME CMD...: one run under /usr/bin/time -v, appends
# "wall cpu rss_kib" to $work/NAME. time -v gives the wall time in
# centiseconds only, so the wall time is taken around it in microseconds
# (the same fork of time is in both commands' figures).
measure() {
	local name=$1; shift
	local t0=$EPOCHREALTIME
	/usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null 2>"$work/err.txt" || {
		echo "bench-gen: $name failed:" >&2; cat "$work/err.txt" >&2; exit 1; }
	local t1=$EPOCHREALTIME
	awk -v out="$work/$name.times" -v t0="$t0" -v t1="$t1" '
		/User time/ {u=$NF} /System time/ {s=$NF} /Maximum resident/ {r=$NF}
		END {printf "%.6f %.4f %d\n", t1-t0, u+s, r >> out}' "$work/time.txt"
}

# One warm-up run of each (page cache), not counted.
"${kp[@]}" >/dev/null
"${gt[@]}" >/dev/null
for ((i = 0; i < runs; i++)); do
	measure kpatch "${kp[@]}"
	measure git "${gt[@]}"
done
[ "$(ls "$work/out-kpatch" | wc -l)" = $((n + 1)) ] && [ "$(ls "$work/out-git" | wc -l)" = $((n + 1)) ] ||
	{ echo "bench-gen: expected $((n + 1)) files from each" >&2; exit 1; }

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
stats() {
	local f=$work/$1.times
	printf '%s %s %s\n' "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)"
}
read -r kw kc kr <<<"$(stats kpatch)"
read -r gw gc gr <<<"$(stats git)"
printf '%d alternating runs each, medians (CPU = user+system, 10 ms resolution); %s\n' "$runs" "$(git --version)"
printf '%-22s %9s %9s %12s\n' command wall_ms cpu_ms peak_rss_mib
awk -v w="$kw" -v c="$kc" -v r="$kr" 'BEGIN {printf "%-22s %9.1f %9.1f %12.1f\n", "kpatch gen", w*1000, c*1000, r/1024}'
awk -v w="$gw" -v c="$gc" -v r="$gr" 'BEGIN {printf "%-22s %9.1f %9.1f %12.1f\n", "git format-patch", w*1000, c*1000, r/1024}'
awk -v kw="$kw" -v gw="$gw" -v kc="$kc" -v gc="$gc" -v kr="$kr" -v gr="$gr" \
	'BEGIN {printf "%-22s %9.2f %9.2f %12.2f\n", "kpatch/git", kw/gw, (gc>0?kc/gc:0), kr/gr}'
