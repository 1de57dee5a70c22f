package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// TestSeriesImportRefusals: series import refuses input that is not a
// series in one line that names the file once, the cause and one thing
// to do, exits 2 and creates nothing.
func TestSeriesImportRefusals(t *testing.T) {
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	for i, text := range []string{"int a;\n", "int a;\nint b;\n", "int a;\nint b;\nint c;\n"} {
		if err := os.WriteFile(filepath.Join(repo, "a.c"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", "a.c")
		gittest.Run(t, repo, "commit", "-q", "-m", []string{"base", "x: add b", "x: add c"}[i])
	}
	posted := filepath.Join(t.TempDir(), "posted")
	gittest.Run(t, repo, "format-patch", "-q", "-o", posted, "HEAD~2")
	patches, _ := filepath.Glob(filepath.Join(posted, "*.patch"))
	if len(patches) != 2 {
		t.Fatalf("format-patch wrote %v", patches)
	}
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, err := os.ReadFile(patches[0])
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	second, err := os.ReadFile(patches[1])
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(tmp, "outside"), 0o755)
	write("outside/0001.patch", strings.ReplaceAll(string(first), "a.c", "../../outside.c"))
	write("outside/0002.patch", string(second))
	outside := filepath.Join(tmp, "outside")
	// The same two patches posted as v2 and as v3, mixed.
	v2, v3 := filepath.Join(t.TempDir(), "v2"), filepath.Join(t.TempDir(), "v3")
	gittest.Run(t, repo, "format-patch", "-q", "-v2", "-o", v2, "HEAD~2")
	gittest.Run(t, repo, "format-patch", "-q", "-v3", "--cover-letter", "-o", v3, "HEAD~2")
	read := func(dir, prefix string) string {
		names, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
		if len(names) != 1 {
			t.Fatalf("no %s in %s", prefix, dir)
		}
		b, err := os.ReadFile(names[0])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mixed := write("mixed.mbox", read(v2, "v2-0001-")+read(v3, "v3-0002-"))
	mixedCover := write("mixed-cover.mbox", read(v3, "v3-0000-")+read(v2, "v2-0001-")+read(v2, "v2-0002-"))
	for _, tc := range []struct {
		name, path, cause string
	}{
		{"corrupt hunk", write("corrupt.patch", strings.Replace(string(first), "\n@@ -1 +1,2 @@", "\n@@ --1 +1,2 @@", 1)), "corrupt hunk header"},
		{"a patch missing", patches[1], "patch 1 of 2 is missing"},
		{"not mail", write("notes.txt", "just some notes\n"), "not an mbox, a mail or a saved thread"},
		{"no patches", empty, "no patches found"},
		{"no such file", filepath.Join(tmp, "nothing.mbox"), "no such file or directory"},
		// git am says "invalid path '../../outside.c'" and applies nothing.
		{"a path outside the tree", outside, "invalid path '../../outside.c'"},
		// [PATCH v2 1/2] and [PATCH v3 2/2] were imported as one series,
		// v3 in the summary and v2 in the file names.
		{"revisions mixed", mixed, "patch 2 of 2 is of v3, patch 1 of 2 (line 1) of v2"},
		{"a cover letter of another revision", mixedCover, "the cover letter is of v3, patch 1 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "imported")
			var stdout, stderr bytes.Buffer
			code := run([]string{"series", "import", tc.path, "-o", out}, &stdout, &stderr)
			msg := stderr.String()
			if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.cause) {
				t.Errorf("exit %d, %q; want 2 and one line saying %q", code, msg, tc.cause)
			}
			if n := strings.Count(msg, tc.path); n != 1 {
				t.Errorf("%q names %s %d times, want once", msg, tc.path, n)
			}
			if n := strings.Count(msg, ": give ") + strings.Count(msg, ": convert "); n != 1 {
				t.Errorf("%q gives %d pieces of advice, want one", msg, n)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}
