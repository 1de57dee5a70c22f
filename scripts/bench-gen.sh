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
# A binary built with cgo loads libc at every start (net's resolver):
# about 5 ms of each run, not kpatch's work.
if command -v go >/dev/null && go version -m "$bin" 2>/dev/null | grep -q 'CGO_ENABLED=1'; then
	echo "bench-gen: $bin was built with CGO_ENABLED=1; build it with CGO_ENABLED=0 (as the scripts do)" >&2; exit 1
fi
# Neither command reads the user's or the system's git configuration
# (diff.algorithm, color, hooks, a pager, fsmonitor change what they do).
printf '[user]\n\tname = bench\n\temail = bench@localhost\n' >"$work/gitconfig"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$work/gitconfig
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
# The branch's objects, written loose by gen --branch, in one pack as
# a clone or a fetch would leave them; the base's are the cached tree's
# (kpatch tree writes them as one pack without deltas).
git -C "$clone" repack -q -d
echo "bench-gen: ${stack[1]:+${stack[1]} }v$version, $n patches, $runs runs of each"
# What differs between machines and moves the figures: the cores and
# their clock, the load, and how the cached tree stores its objects (a
# tree made by an older kpatch, or repacked by git gc, holds deltas that
# git format-patch resolves for every base file it diffs).
maint=$(git -C "$tree" cat-file --batch-check='%(deltabase)' <<<"v6.12:MAINTAINERS")
case $maint in 0000000000000000000000000000000000000000) maint=whole ;; *) maint="a delta" ;; esac
echo "bench-gen: $(nproc) cores ($(awk -F': ' '/^model name/ {m=$2} /^cpu MHz/ {f=$2} END {printf "%s, %.0f MHz", m, f}' /proc/cpuinfo)), load $(cut -d' ' -f1-3 /proc/loadavg); cached tree: $(git -C "$tree" count-objects -v | awk '/^count:/ {l=$2} /^packs:/ {p=$2} END {print l " loose objects, " p " pack(s)"}'), MAINTAINERS stored $maint"

# Two cores, whatever the machine has: kpatch's runtime sizes its
# garbage collector's workers and its scheduler by the cores it may use
# (GOMAXPROCS), so on a larger machine it spends more CPU for the same
# work, and the figures would not compare with this file's.
pin=()
if [ "$(nproc)" -gt 2 ] && command -v taskset >/dev/null; then
	pin=(taskset -c 0,1)
	echo "bench-gen: both commands pinned to cores 0 and 1 of $(nproc)"
fi
kp=("${pin[@]}" "$bin" gen "${stack[@]}" -v "$version" --tree "$clone" --base v6.12 -o "$work/out-kpatch")
gt=("${pin[@]}" git -C "$clone" -c core.pager=cat format-patch -q --cover-letter --thread "-v$version" --base=v6.12 -o "$work/out-git" "bench~$n..bench")

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
