#!/bin/sh
# Writes v2_x_two_changes.mbx here: the first two commits of gitSeries
# (gitam_test.go) as git format-patch --thread --cover-letter -v2 writes
# them, then as b4 am (Debian's b4 0.12.0, offline) makes them ready for
# git am. (b4 0.12.0 fails on the third commit's folded subject: "Header
# values may not contain linefeed".)
set -e
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C \
	GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
cd "$tmp" && git init -q -b master r && cd r
printf 'int a;\n' > a.c && git add a.c && git commit -q -m base && git tag base
printf 'int a;\nint b;\n' > a.c && git commit -q -a --author 'Jöhn Dœ <john@example.org>' \
	-m "$(printf 'x: add b\n\nThe first change.\n\nSigned-off-by: Jöhn Dœ <john@example.org>')"
printf 'int a;\nint b;\nint c;\n' > a.c && git commit -q -a --author 'Ada Lovelace <ada@example.org>' \
	-m "$(printf 'x: add c\n\nFrom the body on, a line that starts like an mbox separator.\n\nSigned-off-by: Ada Lovelace <ada@example.org>')"
printf 'int a;\nint c;\n' > a.c && git commit -q -a --author 'Ada Lovelace <ada@example.org>' \
	-m "$(printf 'x: a subject long enough that git format-patch folds it over two header lines\n\nRemove b.\n\nSigned-off-by: Ada Lovelace <ada@example.org>')"
printf '#define NEW 1\n' > new.h && git add new.h && git commit -q --author 'Ada Lovelace <ada@example.org>' \
	-m "$(printf 'x: add new.h\n\nSigned-off-by: Ada Lovelace <ada@example.org>')"
git format-patch --stdout --pretty=mboxrd --thread --cover-letter -v2 base..master~2 | sed 's/\*\*\* SUBJECT HERE \*\*\*/x: two changes/' > ../thread.mbox
mkdir ../b4 && b4 --offline-mode am --no-add-trailers -m ../thread.mbox -o ../b4 
cp ../b4/*.mbx "$out/v2_x_two_changes.mbx"
