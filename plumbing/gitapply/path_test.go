package gitapply_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/gitapply"
)

// TestPathsDifferential: a patch creating each of these paths is refused
// ("invalid path '...'", nothing applied) exactly where the real git
// apply refuses it, with git's messages: "..", ".", ".git" in any case and
// in NTFS's spellings, absolute paths, and names that look like them but
// are fine (.gitignore, ..b, git~2); .gitmodules as a symlink only. (A
// name with "//" in it, as an absolute path's "a//etc/passwd", does not
// parse: go-gitdiff refuses the header, so package mail refuses the mail;
// an absolute path comes from "rename to", whose name keeps its start.)
func TestPathsDifferential(t *testing.T) {
	gittest.Require(t)
	cases := []struct {
		path string
		mode string
	}{
		{"../../outside.c", "100644"},
		{"drivers/../../x.c", "100644"},
		{"./x.c", "100644"},
		{"a/./x.c", "100644"},
		{"/nonexistent/kpatch.c", "rename"}, // from "rename to": the names of git diff lose their a/ and b/
		{"../x.c", "rename"},
		{".git/hooks/post-checkout", "rename"},
		{".git/config", "100644"},
		{"a/.git/hooks/pre-commit", "100644"},
		{".GIT/x", "100644"},
		{".Git", "100644"},
		{"a/.git. /x", "100644"},
		{"git~1/x", "100644"},
		{"a/GIT~1", "100644"},
		{".git:stream", "100644"},
		{"a\\.git", "100644"},
		{".gitmodules", "120000"},
		{".gitmodules", "100644"},
		{"a/.GitModules", "120000"},
		{"gitmod~1", "120000"},
		{".gitignore", "100644"},
		{"a/..b/c", "100644"},
		{"a/...", "100644"},
		{"git~2/x", "100644"},
		{".github/workflows/x.yml", "100644"},
		{"drivers/net/x.c", "100644"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			dir := t.TempDir() // no repository: git apply would meet its .git/config
			patch, tree := creation(c.path, c.mode), mapTree{}
			if c.mode == "rename" {
				patch = fmt.Sprintf("diff --git a/x.c b/%s\nsimilarity index 100%%\nrename from x.c\nrename to %s\n", strings.TrimPrefix(c.path, "/"), c.path)
				tree["x.c"] = file{[]byte("x\n"), 0o100644}
				writeTree(t, dir, tree)
				c.mode = "100644"
			}
			code, stderr := runGit(t, dir, patch, "--check", "-v")
			files := parse(t, patch)
			res := gitapply.Apply(tree, files, gitapply.Options{Check: true})
			if got := res.Log(true); strings.Join(got, "\n") != strings.Join(stderr, "\n") {
				t.Errorf("messages differ: %s", diffLines(stderr, got))
			}
			refused := strings.Contains(strings.Join(stderr, "\n"), "invalid path")
			if (code == 0) != res.OK() || refused != (res.Err != nil) {
				t.Errorf("git exits %d %v; OK %v, Err %v", code, stderr, res.OK(), res.Err)
			}
			mode, _ := strconv.ParseUint(c.mode, 8, 32)
			if valid := gitapply.ValidPath(files[0].NewName, uint32(mode)); valid == refused {
				t.Errorf("ValidPath(%q) = %v; git refuses it: %v", files[0].NewName, valid, refused)
			}
		})
	}
}

// creation is a patch that creates path as git diff writes it (its names
// quoted as git quotes them).
func creation(path, mode string) string {
	q := func(prefix string) string {
		name := prefix + path
		if strings.ContainsAny(name, "\\\"\t\n") || strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r >= 0x7f }) >= 0 {
			return strconv.Quote(name)
		}
		return name
	}
	return fmt.Sprintf("diff --git %s %s\nnew file mode %s\nindex 0000000..587be6b\n--- /dev/null\n+++ %s\n@@ -0,0 +1 @@\n+x\n",
		q("a/"), q("b/"), mode, q("b/"))
}
