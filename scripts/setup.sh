#!/usr/bin/env bash
# Installs what kpatch's tests and end-to-end run need on a bare Debian 12
# machine: Debian's kernel sources (linux-source-6.12, and 6.1, whose
# merged code with 6.12's is verify's merged-code corpus), the kernel build
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
# --linux-source 7.3|7.2 (or KPATCH_LINUX_SOURCE): see below.
want_src=${KPATCH_LINUX_SOURCE:-}
while [ $# -gt 0 ]; do
	case $1 in
	--linux-source) want_src="$want_src ${2:?--linux-source needs a version: 7.3 or 7.2}"; shift 2 ;;
	--linux-source=*) want_src="$want_src ${1#*=}"; shift ;;
	*) echo "setup: unknown argument $1 (known: --linux-source 7.3|7.2)" >&2; exit 2 ;;
	esac
done
for v in $want_src; do
	case $v in
	7.3|7.2) ;;
	*) echo "setup: --linux-source $v: Debian ships 7.3 (trixie-backports) and 7.2 (sid)" >&2; exit 2 ;;
	esac
done
# Debian's Go images put Go in /usr/local/go; make sure it is found.
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
pkgs=(git git-email libmailtools-perl tar make gcc binutils libc6-dev gcc-multilib flex bison bc mawk libelf-dev libssl-dev cpio xz-utils perl gdb ccache sparse coccinelle busybox-static
      distcc icecc iproute2 quilt qemu-system-x86 linux-source-6.12 linux-source-6.1 clang lld llvm
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
# Debian's newer kernels as shipped, for kpatch test qemu --kernel debian-7.3
# (and debian-7.2), only when asked: scripts/setup.sh --linux-source 7.3, or
# KPATCH_LINUX_SOURCE="7.3 7.2". linux-source-7.3 comes from trixie-backports,
# linux-source-7.2 from sid. Both suites are pinned at 50, below the 100 of
# installed versions, so that apt never upgrades an installed package from
# them and installs from them only a package no other suite has
# (apt-get -s upgrade lists nothing of theirs). Only main, only this
# architecture.
src_pkgs=()
for v in $want_src; do
	dpkg-query -W -f='${Status}' "linux-source-$v" 2>/dev/null | grep -q "install ok installed" ||
		src_pkgs+=("linux-source-$v")
done
if [ ${#src_pkgs[@]} -gt 0 ]; then
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	list=/etc/apt/sources.list.d/kpatch-linux-source.sources
	pin=/etc/apt/preferences.d/kpatch-linux-source
	arch=$(dpkg --print-architecture)
	sources="# kpatch: Debian's linux-source-7.3 (trixie-backports) and -7.2 (sid), pinned in $pin
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports sid
Components: main
Architectures: $arch
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
	prefs="# kpatch: take nothing from these suites unless named (scripts/setup.sh)
Package: *
Pin: release n=trixie-backports
Pin-Priority: 50

Package: *
Pin: release n=sid
Pin-Priority: 50"
	changed=
	if [ "$(cat "$list" 2>/dev/null)" != "$sources" ]; then
		printf '%s\n' "$sources" | $SUDO tee "$list" >/dev/null
		changed=1
	fi
	if [ "$(cat "$pin" 2>/dev/null)" != "$prefs" ]; then
		printf '%s\n' "$prefs" | $SUDO tee "$pin" >/dev/null
		changed=1
	fi
	if [ -n "$changed" ] || ! apt-cache show "${src_pkgs[0]}" >/dev/null 2>&1; then
		$SUDO apt-get update -q
	fi
	echo "setup: installing ${src_pkgs[*]}" >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${src_pkgs[@]}"
fi
command -v go >/dev/null || { echo "setup: Go is not installed (need Go 1.26 in PATH)" >&2; exit 1; }
cd "$(dirname "$0")/.."
go mod download
