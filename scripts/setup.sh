#!/usr/bin/env bash
# Installs what kpatch's tests and end-to-end run need on a bare Debian 12
# machine: Debian's kernel sources (linux-source-6.12), the kernel build
# tools, QEMU, gcc-multilib for -m32 test programs, gdb for the walker's
# tests, perl for get_maintainer.pl, git-email (and libmailtools-perl, which
# it needs but only recommends) for the test that hands the generated series
# to git send-email --dry-run, ccache and sparse for kpatch test --build
# (--cc 'ccache gcc', C=1), distcc and icecc (and iproute2) for the test
# that compiles through a real compiler farm on a private loopback
# (--cc distcc, --cc icecc), clang, lld and llvm (the clang
# configuration of kpatch test build, LLVM=1) and Debian's aarch64 cross
# gcc for its arm64 configuration (ARCH=um needs nothing beyond gcc),
# quilt (for the test that reads patches as quilt writes them),
# coccinelle (spatch, for kpatch verify --coccicheck) and the Go modules.
# Idempotent.
set -euo pipefail
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
pkgs=(git git-email libmailtools-perl tar make gcc binutils libc6-dev gcc-multilib flex bison bc mawk libelf-dev libssl-dev cpio xz-utils perl gdb ccache sparse coccinelle
      distcc icecc iproute2 quilt qemu-system-x86 linux-source-6.12 clang lld llvm
      binutils-aarch64-linux-gnu cpp-12-aarch64-linux-gnu)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	echo "setup: installing ${missing[*]}" >&2
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian's gcc-12-aarch64-linux-gnu conflicts with gcc-multilib (which the
# boot test's -m32 programs need), so its driver is unpacked beside the
# system instead of installed: /opt/kpatch/gcc-aarch64, reaching the
# cross cc1 of cpp-12-aarch64-linux-gnu and the cross binutils through
# links, and called as aarch64-linux-gnu-gcc from /usr/local/bin.
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	opt=/opt/kpatch/gcc-aarch64 lib=usr/lib/gcc-cross/aarch64-linux-gnu/12
	tmp=$(mktemp -d) && chmod 755 "$tmp"
	echo "setup: unpacking gcc-12-aarch64-linux-gnu into $opt" >&2
	(cd "$tmp" && { apt-get download -q gcc-12-aarch64-linux-gnu ||
		{ $SUDO apt-get update -q && apt-get download -q gcc-12-aarch64-linux-gnu; }; })
	$SUDO mkdir -p "$opt"
	$SUDO dpkg -x "$tmp"/gcc-12-aarch64-linux-gnu_*.deb "$opt"
	rm -rf "$tmp"
	for f in /"$lib"/*; do
		[ -e "$opt/$lib/${f##*/}" ] || $SUDO ln -s "$f" "$opt/$lib/"
	done
	$SUDO ln -sfn /usr/aarch64-linux-gnu "$opt/usr/aarch64-linux-gnu"
	$SUDO ln -sf "$opt/usr/bin/aarch64-linux-gnu-gcc-12" /usr/local/bin/aarch64-linux-gnu-gcc
fi
command -v go >/dev/null || { echo "setup: Go is not installed (need Go 1.26 in PATH)" >&2; exit 1; }
cd "$(dirname "$0")/.."
go mod download
