package verify

import (
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestDefineCommentOverLines: a #define whose comment goes on over the
// next lines (6.12's fs/jfs/jfs_logmgr.c: "#define lbmFREE 0x0010
// /* return to freelist" ...) is valid C. verify keeps a file's
// preprocessor lines and blanks the code a patch does not touch, and
// blanked the comment's end: the comment ran on into the code kept, and
// the function the patch touches (lmNextPage()) "could not be parsed",
// its checks not run. The whole comment is kept with its directive.
func TestDefineCommentOverLines(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"fs/jfs/jfs_logmgr.c", "fs/nilfs2/segment.c"} {
		t.Run(path, func(t *testing.T) {
			s := treeMail(t, tree, "fs: touch it", "Touch it.", []string{path}, func(files map[string]string) {
				i := strings.Index(files[path], "\n\treturn 0;\n}\n")
				if i < 0 {
					t.Fatal("no \"return 0;\" to touch")
				}
				files[path] = files[path][:i] + "\n\tbarrier();" + files[path][i:]
			})
			for _, f := range only(Run(s, Options{}), "C_EVAL") {
				if f.File == path {
					t.Errorf("%s", f.Message)
				}
			}
		})
	}
}
