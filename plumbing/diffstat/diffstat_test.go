package diffstat

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.want (and canonicalize *.files) from the output of git")

// A testdata case is NAME.files, describing the input, and NAME.want, the
// text git prints for it. NAME.files starts with "width N"; every further
// line is one File as tab-separated fields: added, deleted, path (a Go
// string literal if it has unusual characters), then
// optional attributes: create=MODE, delete=MODE, mode=OLD:NEW, from=PATH
// (rename source), copy, sim=N and binary.

type specCase struct {
	name  string
	width int
	files []File
	want  string
}

func parseSpec(t *testing.T, name, text string) (int, []File) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "width ") {
		t.Fatalf("%s: first line must be \"width N\"", name)
	}
	width, err := strconv.Atoi(strings.TrimPrefix(lines[0], "width "))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var files []File
	for _, l := range lines[1:] {
		fields := strings.Split(l, "\t")
		if len(fields) < 3 {
			t.Fatalf("%s: bad line %q", name, l)
		}
		var f File
		f.Added, _ = strconv.Atoi(fields[0])
		f.Deleted, _ = strconv.Atoi(fields[1])
		f.Path = unquoteSpec(t, fields[2])
		for _, a := range fields[3:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "create":
				f.Created, f.Mode = true, v
			case "delete":
				f.Removed, f.Mode = true, v
			case "mode":
				f.OldMode, f.Mode, _ = strings.Cut(v, ":")
			case "from":
				f.OldPath = unquoteSpec(t, v)
			case "copy":
				f.Copied = true
			case "sim":
				f.Similarity, _ = strconv.Atoi(v)
			case "binary":
				f.Binary = true
			default:
				t.Fatalf("%s: unknown attribute %q", name, a)
			}
		}
		files = append(files, f)
	}
	return width, files
}

// quoteSpec writes paths with tabs, newlines or non-ASCII bytes as Go
// string literals, so that the spec stays one tab-separated line each.
func quoteSpec(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] >= 0x7f || p[i] == '"' {
			return strconv.Quote(p)
		}
	}
	return p
}

func unquoteSpec(t *testing.T, p string) string {
	if !strings.HasPrefix(p, `"`) {
		return p
	}
	u, err := strconv.Unquote(p)
	if err != nil {
		t.Fatalf("bad quoted path %s: %v", p, err)
	}
	return u
}

func formatSpec(width int, files []File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "width %d\n", width)
	for _, f := range files {
		fmt.Fprintf(&b, "%d\t%d\t%s", f.Added, f.Deleted, quoteSpec(f.Path))
		switch {
		case f.Created:
			fmt.Fprintf(&b, "\tcreate=%s", f.Mode)
		case f.Removed:
			fmt.Fprintf(&b, "\tdelete=%s", f.Mode)
		case f.OldMode != "" && f.OldMode != f.Mode:
			fmt.Fprintf(&b, "\tmode=%s:%s", f.OldMode, f.Mode)
		}
		if f.OldPath != "" {
			fmt.Fprintf(&b, "\tfrom=%s\tsim=%d", quoteSpec(f.OldPath), f.Similarity)
			if f.Copied {
				b.WriteString("\tcopy")
			}
		}
		if f.Binary {
			b.WriteString("\tbinary")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func loadSpecs(t *testing.T) []specCase {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*.files"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var cases []specCase
	for _, n := range names {
		text, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		c := specCase{name: strings.TrimSuffix(filepath.Base(n), ".files")}
		c.width, c.files = parseSpec(t, c.name, string(text))
		if want, err := os.ReadFile(strings.TrimSuffix(n, ".files") + ".want"); err == nil {
			c.want = string(want)
		} else if !*update {
			t.Fatalf("%s: %v (run go test -update to create it with git)", c.name, err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatal("no testdata")
	}
	return cases
}

// specTrees returns the trees of a commit and its child whose diff has
// exactly the changes described by files. Line counts are realised with
// disjoint old and new lines; renames and copies keep 60 common lines so
// that git detects them.
func specTrees(files []File) gittest.Pair {
	content := func(prefix string, n int, binary bool) []byte {
		if binary {
			return bytes.Repeat([]byte{0}, n)
		}
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%s line %d\n", prefix, i)
		}
		return b.Bytes()
	}
	state := func(data []byte, mode string) gittest.FileState {
		if mode != "100755" {
			mode = "100644"
		}
		return gittest.FileState{Content: data, Mode: mode}
	}
	common := func(f File) []byte {
		if f.OldPath == "" {
			return nil
		}
		return content("common "+f.OldPath, 60, false)
	}
	// Old tree.
	old := map[string]gittest.FileState{}
	for _, f := range files {
		if f.Created {
			continue
		}
		src := f.Path
		if f.OldPath != "" {
			src = f.OldPath
		}
		data := append(common(f), content("old "+src, f.Deleted, f.Binary)...)
		if f.Binary && f.Added == 0 && f.Deleted == 0 {
			data = []byte{0, 1, 2, 3}
		}
		mode := f.OldMode
		if f.Removed {
			mode = f.Mode
		}
		old[src] = state(data, mode)
	}
	// New tree: the old one, changed.
	new := map[string]gittest.FileState{}
	for p, fs := range old {
		new[p] = fs
	}
	for _, f := range files {
		if f.OldPath != "" && !f.Copied {
			delete(new, f.OldPath)
		}
		if f.Removed {
			delete(new, f.Path)
			continue
		}
		data := append(common(f), content("new "+f.Path, f.Added, f.Binary)...)
		if f.Binary && f.Added == 0 && f.Deleted == 0 {
			data = []byte{0, 1, 2, 3}
		}
		new[f.Path] = state(data, f.Mode)
	}
	return gittest.Pair{Old: old, New: new}
}

// TestTestdata formats every testdata case and compares with the stored
// output of git.
func TestTestdata(t *testing.T) {
	cases := loadSpecs(t)
	if *update {
		requireGit(t)
		for i, c := range cases {
			dir, _ := gittest.ImportPairs(t, []gittest.Pair{specTrees(c.files)})
			files := filesFromGit(t, dir, "-C", "--find-copies-harder", "main~1", "main")
			want := runGit(t, dir, "diff", "-C", "--find-copies-harder", "--stat="+strconv.Itoa(c.width), "--summary", "main~1", "main")
			base := filepath.Join("testdata", c.name)
			if err := os.WriteFile(base+".files", []byte(formatSpec(c.width, files)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(base+".want", []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			cases[i].files, cases[i].want = files, want
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Format(c.files, c.width); got != c.want {
				t.Errorf("Format differs from git\n--- git\n%s--- diffstat\n%s", c.want, got)
			}
		})
	}
}

// TestTestdataAgainstGit rebuilds each testdata case as a commit and its
// parent and checks the stored output against a live git (all cases are
// commits of one repository, shown by one git log per width).
func TestTestdataAgainstGit(t *testing.T) {
	requireGit(t)
	cases := loadSpecs(t)
	var pairs []gittest.Pair
	for _, c := range cases {
		pairs = append(pairs, specTrees(c.files))
	}
	dir, ids := gittest.ImportPairs(t, pairs)
	stats := map[int]map[string]string{}
	for _, c := range cases {
		if stats[c.width] == nil {
			stats[c.width] = gittest.LogDiffs(t, dir, ids, "-C", "--find-copies-harder", "--stat="+strconv.Itoa(c.width), "--summary")
		}
	}
	for i, c := range cases {
		want := stats[c.width][ids[i]]
		if want != c.want {
			t.Errorf("%s: stored output is stale\n--- git\n%s--- stored\n%s", c.name, want, c.want)
		}
		if got := Format(c.files, c.width); got != want {
			t.Errorf("%s: Format differs from git\n--- git\n%s--- diffstat\n%s", c.name, want, got)
		}
	}
}

func TestEmpty(t *testing.T) {
	if got := Format(nil, 72); got != "" {
		t.Errorf("Format(nil) = %q", got)
	}
}

func TestSummaryLine(t *testing.T) {
	tests := []struct {
		files []File
		want  string
	}{
		{[]File{{Added: 1}}, " 1 file changed, 1 insertion(+)\n"},
		{[]File{{Deleted: 1}}, " 1 file changed, 1 deletion(-)\n"},
		{[]File{{Added: 1, Deleted: 1}}, " 1 file changed, 1 insertion(+), 1 deletion(-)\n"},
		{[]File{{}}, " 1 file changed, 0 insertions(+), 0 deletions(-)\n"},
		{[]File{{Added: 2}, {Deleted: 3}}, " 2 files changed, 2 insertions(+), 3 deletions(-)\n"},
		{[]File{{Added: 20, Binary: true}}, " 1 file changed, 0 insertions(+), 0 deletions(-)\n"},
		{nil, " 0 files changed\n"},
	}
	for _, tt := range tests {
		if got := SummaryLine(tt.files); got != tt.want {
			t.Errorf("SummaryLine(%+v) = %q, want %q", tt.files, got, tt.want)
		}
	}
}

func TestRenameName(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"a.c", "b.c", "a.c => b.c"},
		{"dir/a.c", "dir/b.c", "dir/{a.c => b.c}"},
		{"a/file.c", "b/file.c", "{a => b}/file.c"},
		{"a/x/file.c", "a/y/file.c", "a/{x => y}/file.c"},
		{"a/file.c", "a/sub/file.c", "a/{ => sub}/file.c"},
		{"a/sub/file.c", "a/file.c", "a/{sub => }/file.c"},
		{"kernel/unwind/user.c", "kernel/unwind/deferred.c", "kernel/unwind/{user.c => deferred.c}"},
		{"x", "y/x", "x => y/x"},
		{"tab\there", "b", `"tab\there" => b`},
	}
	for _, tt := range tests {
		if got := RenameName(tt.a, tt.b); got != tt.want {
			t.Errorf("RenameName(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestQuote(t *testing.T) {
	tests := map[string]string{
		"plain/path.c":   "plain/path.c",
		"with space":     "with space",
		"tab\there":      `"tab\there"`,
		`quote"`:         `"quote\""`,
		`back\slash`:     `"back\\slash"`,
		"t\u00e9st":      `"t\303\251st"`,
		"nl\nx":          `"nl\nx"`,
		"bell\a\x01\x7f": `"bell\a\001\177"`,
	}
	for in, want := range tests {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}
