#!/bin/sh
# scale.sh N DIR: a repository in DIR with branches old and new of N
# commits each on main, every commit toggling one line of f.c (so all
# diffs are one of two), and their mboxes DIR/old.mbox and DIR/new.mbox;
# then times git range-diff and, if KPATCH is set, "$KPATCH series diff"
# on the same input (whole process: elapsed time and peak memory).
set -eu
n=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
git init -q -b main .
python3 - "$n" <<'PY' | git fast-import --quiet
import sys
n = int(sys.argv[1])
base = "".join("line %d\n" % i for i in range(20))
t = 1700000000
def commit(ref, msg, content, frm=None):
    global t
    t += 1
    print("commit %s\nauthor H. Peter Anvin <hpa@example.com> %d +0000\ncommitter t <t@example.com> %d +0000" % (ref, t, t))
    print("data %d\n%s" % (len(msg), msg))
    if frm:
        print("from %s" % frm)
    print("M 100644 inline f.c\ndata %d\n%s" % (len(content), content))
    print()
commit("refs/heads/main", "base\n", base)
for side in ("old", "new"):
    for i in range(n):
        content = base + ("extra\n" if i % 2 == 0 else "")
        commit("refs/heads/" + side, "%s patch %d\n\nbody %d\n" % (side, i, i), content, "refs/heads/main" if i == 0 else None)
PY
git format-patch -q --stdout main..old > old.mbox
git format-patch -q --stdout main..new > new.mbox
echo "git range-diff, $n patches:"
/usr/bin/time -f "  %e s elapsed, %M KiB max RSS" git -c core.abbrev=12 range-diff --no-color main..old main..new > git.out
if [ -n "${KPATCH:-}" ]; then
	echo "kpatch series diff, $n patches:"
	/usr/bin/time -f "  %e s elapsed, %M KiB max RSS" "$KPATCH" series diff --tree . old.mbox new.mbox > kpatch.out
	if cmp -s git.out kpatch.out; then echo "  output equal to git's"; else echo "  output differs from git's"; fi
fi
