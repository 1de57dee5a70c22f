package gitapply_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/gittest"
	"kpatch/plumbing/gitapply"
)

// file is a file of a test tree.
type file struct {
	content []byte
	mode    uint32 // 0o100644, 0o100755, 0o120000
}

// mapTree is a gitapply.Tree held in memory.
type mapTree map[string]file

func (t mapTree) Mode(path string) uint32 { return t[path].mode }

func (t mapTree) ReadFile(path string) ([]byte, error) {
	f, ok := t[path]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return f.content, nil
}

// apply returns t with the changes written.
func (t mapTree) apply(changes []gitapply.Change) mapTree {
	out := mapTree{}
	for p, f := range t {
		out[p] = f
	}
	for _, c := range changes {
		if c.Remove {
			delete(out, c.Path)
		} else {
			out[c.Path] = file{c.Content, c.Mode}
		}
	}
	return out
}

// testCase is one generated case: the files before and after the change
// the patch is made of (in dir), and the tree the patch is applied to.
type testCase struct {
	dir         string // what its files' names start with: "c12"
	kind        string
	old, new    mapTree // what git diff compares
	target      mapTree // what git apply meets
	context     int     // git diff -U
	traditional bool    // the patch without git's headers, as quilt writes it
	tradNamed   bool    // and a new file named on both sides, not from /dev/null
	noData      bool    // a binary change without --binary: "Binary files ... differ"
}

// vocabulary are the lines the generated files are made of: a few that
// repeat (so that a hunk's context is found in more than one place) and
// odd ones (carriage returns, form feeds, trailing blanks, bytes that are
// not UTF-8).
var vocabulary = []string{"}\n", "\n", "\treturn 0;\n", "{\n", "\tint i;\n", "caf\xe9\n", "\f\n", "int f(void)\r\n", "trailing \n", "\t\n"}

func randomLine(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return vocabulary[r.IntN(len(vocabulary))]
	}
	return fmt.Sprintf("line %d\n", r.IntN(400))
}

func randomText(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = randomLine(r)
	}
	return out
}

// edit changes lines in one to four places: insertions, deletions,
// replacements, at the start and the end as anywhere.
func edit(r *rand.Rand, lines []string) []string {
	out := append([]string{}, lines...)
	for n := 1 + r.IntN(4); n > 0; n-- {
		at := 0
		switch r.IntN(5) {
		case 0:
		case 1:
			at = len(out)
		default:
			at = r.IntN(len(out) + 1)
		}
		del := 0
		if at < len(out) {
			del = r.IntN(min(3, len(out)-at) + 1)
		}
		ins := randomText(r, r.IntN(3))
		if del == 0 && len(ins) == 0 {
			ins = randomText(r, 1)
		}
		out = append(out[:at], append(ins, out[at+del:]...)...)
	}
	return out
}

// perturb makes the tree the patch meets differ from the one it was made
// on: lines inserted or removed away from or inside its hunks (offsets,
// failures), a line changed (a blank added: no fuzz), a stretch repeated
// (a context found twice).
func perturb(r *rand.Rand, lines []string) []string {
	out := append([]string{}, lines...)
	for n := r.IntN(4); n > 0; n-- {
		at := r.IntN(len(out) + 1)
		switch r.IntN(5) {
		case 0:
			out = append(out[:at], append(randomText(r, 1+r.IntN(12)), out[at:]...)...)
		case 1:
			if at < len(out) {
				k := 1 + r.IntN(min(8, len(out)-at))
				out = append(out[:at], out[at+k:]...)
			}
		case 2:
			if at < len(out) {
				out[at] = strings.TrimSuffix(out[at], "\n") + " \n"
			}
		default:
			if len(out) > 0 {
				i := r.IntN(len(out))
				j := min(len(out), i+2+r.IntN(8))
				seg := append([]string{}, out[i:j]...)
				out = append(out[:at], append(seg, out[at:]...)...)
			}
		}
	}
	return out
}

// join makes file content of lines, without its last newline when noEOL.
func join(lines []string, noEOL bool) []byte {
	s := strings.Join(lines, "")
	if noEOL {
		s = strings.TrimSuffix(s, "\n")
	}
	return []byte(s)
}

var binaryOld = []byte("\x00\x01binary\x00data\x7f\xfe\n")

// generate makes n cases, each in its own files: c0-f.c, c0-g.c, c1-f.c,
// ... (one directory: creating hundreds costs more than the test).
func generate(r *rand.Rand, n int) []*testCase {
	var cases []*testCase
	for i := 0; i < n; i++ {
		c := &testCase{dir: fmt.Sprintf("c%d", i), old: mapTree{}, new: mapTree{}, target: mapTree{}, context: 3}
		switch r.IntN(8) {
		case 1:
			c.context = 1
		case 2:
			c.context = 0
		}
		p := c.dir + "-f.c"
		q := c.dir + "-g.c"
		reg := uint32(0o100644)
		switch k := r.IntN(20); {
		case k < 11: // an edit, on a tree that may differ
			c.kind = "edit"
			o := randomText(r, 1+r.IntN(50))
			e := edit(r, o)
			oEOL, eEOL := r.IntN(6) == 0, r.IntN(6) == 0
			c.old[p], c.new[p] = file{join(o, oEOL), reg}, file{join(e, eEOL), reg}
			switch r.IntN(6) {
			case 0:
				c.kind = "edit, already applied"
				c.target[p] = c.new[p]
			default:
				c.target[p] = file{join(perturb(r, o), oEOL != (r.IntN(8) == 0)), reg}
			}
			if r.IntN(3) == 0 { // a second file, unchanged or changed
				o2 := randomText(r, 5+r.IntN(20))
				e2 := edit(r, o2)
				c.old[q], c.new[q] = file{join(o2, false), reg}, file{join(e2, false), reg}
				c.target[q] = file{join(perturb(r, o2), false), reg}
			}
			c.traditional = r.IntN(6) == 0
		case k < 13: // a creation
			c.kind = "create"
			c.new[p] = file{join(randomText(r, 1+r.IntN(10)), r.IntN(5) == 0), reg}
			switch r.IntN(3) {
			case 0:
				c.kind = "create an existing file"
				c.target[p] = file{join(randomText(r, 3), false), reg}
			case 1:
				c.kind = "create, already applied"
				c.target[p] = c.new[p]
			}
			c.traditional, c.tradNamed = r.IntN(4) == 0, r.IntN(2) == 0
		case k < 15: // a deletion
			c.kind = "delete"
			o := randomText(r, r.IntN(12))
			c.old[p] = file{join(o, false), reg}
			switch r.IntN(4) {
			case 0:
				c.kind = "delete a missing file"
			case 1:
				c.kind = "delete a different file"
				c.target[p] = file{join(perturb(r, append(o, "extra\n")), false), reg}
			default:
				c.target[p] = c.old[p]
			}
		case k < 17: // a rename, perhaps with changes
			c.kind = "rename"
			o := randomText(r, 10+r.IntN(20))
			e := o
			if r.IntN(2) == 0 {
				e = append(append([]string{}, o...), "renamed\n")
			}
			c.old[p], c.new[q] = file{join(o, false), reg}, file{join(e, false), reg}
			switch r.IntN(4) {
			case 0:
				c.kind = "rename a missing file"
			case 1:
				c.kind = "rename onto an existing file"
				c.target[p], c.target[q] = c.old[p], file{[]byte("other\n"), reg}
			case 2:
				c.kind = "rename, already applied"
				c.target[q] = c.new[q]
			default:
				c.target[p] = c.old[p]
			}
		case k < 19: // a mode change, perhaps with changes
			c.kind = "mode"
			o := randomText(r, 1+r.IntN(20))
			e := o
			if r.IntN(3) == 0 {
				e = edit(r, o)
			}
			c.old[p], c.new[p] = file{join(o, false), reg}, file{join(e, false), 0o100755}
			switch r.IntN(4) {
			case 0:
				c.kind = "mode of a missing file"
			case 1:
				c.kind = "mode, already applied"
				c.target[p] = c.new[p]
			default:
				c.target[p] = c.old[p]
			}
		default: // binary
			c.kind = "binary"
			nb := append(append([]byte{}, binaryOld...), byte(r.IntN(256)))
			c.old[p], c.new[p] = file{binaryOld, reg}, file{nb, reg}
			switch r.IntN(4) {
			case 0:
				c.kind = "binary on other content"
				c.target[p] = file{[]byte("\x00other\n"), reg}
			case 1:
				c.kind = "binary without data"
				c.target[p], c.noData = c.old[p], true
			default:
				c.target[p] = c.old[p]
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// fixedCases are the situations random cases meet too rarely: a context
// found at the same distance before and after where the header puts it
// (git looks after first), a hunk at the first line meeting a file with a
// line more on top (it must match there), one without trailing context
// meeting a file with a line more at the end (it must match at the end),
// a final line without a newline edited on a tree whose last line has one.
func fixedCases() []*testCase {
	lines := func(prefix string, from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("%s%d\n", prefix, i))
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	reg := uint32(0o100644)
	one := func(name string, context int, o, e, t []byte) *testCase {
		c := &testCase{dir: name, kind: "fixed", old: mapTree{}, new: mapTree{}, target: mapTree{}, context: context}
		p := name + "-f.c"
		c.old[p], c.new[p], c.target[p] = file{o, reg}, file{e, reg}, file{t, reg}
		return c
	}
	u := lines("u", 1, 20)
	changed := cat(u[:9], []string{"changed\n"}, u[10:])
	pre := u[8:11] // u9 u10 u11: the hunk's old lines with -U1, at line 9
	twice := cat(lines("x", 1, 6), pre, lines("y", 1, 1), pre, lines("z", 1, 5))
	return []*testCase{
		one("twice", 1, join(u, false), join(changed, false), join(twice, false)),
		one("start", 3, join(u, false), join(cat([]string{"new\n"}, u[1:]), false), join(cat([]string{"top\n"}, u), false)),
		one("end", 3, join(u, false), join(cat(u, []string{"new\n"}), false), join(cat(u, []string{"bottom\n"}), false)),
		one("noeol", 3, join(u, true), join(cat(u[:19], []string{"last\n"}), true), join(u, false)),
		one("noeol2", 3, join(u, false), join(cat(u, []string{"more\n"}), true), join(u, true)),
	}
}

// writeTree writes the files of t under dir.
func writeTree(t *testing.T, dir string, tr mapTree) {
	t.Helper()
	for p, f := range tr {
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		perm := os.FileMode(0o644)
		if f.mode == 0o100755 {
			perm = 0o755
		}
		if err := os.WriteFile(dst, f.content, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dst, perm); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree reads the files under dir (but .git and .rej files) back.
func readTree(t *testing.T, dir string) mapTree {
	t.Helper()
	out := mapTree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".rej") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := uint32(0o100644)
		if info.Mode()&0o100 != 0 {
			mode = 0o100755
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = file{b, mode}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// makePatches writes every case's old and new trees in a repository and
// returns each case's patch as git diff writes it.
func makePatches(t *testing.T, cases []*testCase) map[string]string {
	t.Helper()
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	old := mapTree{}
	for _, c := range cases {
		for p, f := range c.old {
			old[p] = f
		}
	}
	writeTree(t, repo, old)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "old")
	for _, c := range cases {
		for p := range c.old {
			if _, ok := c.new[p]; !ok {
				os.Remove(filepath.Join(repo, p))
			}
		}
		writeTree(t, repo, c.new)
	}
	gittest.Run(t, repo, "add", "-A")
	out := map[string]string{}
	groups := map[string][]string{} // diff options -> case directories
	for _, c := range cases {
		opts := fmt.Sprintf("-U%d --binary", c.context)
		if c.noData {
			opts = "-U3"
		}
		groups[opts] = append(groups[opts], c.dir)
	}
	for opts, dirs := range groups {
		args := append([]string{"diff", "--cached", "-M", "--no-color"}, strings.Fields(opts)...)
		args = append(args, "--")
		for _, d := range dirs {
			args = append(args, d+"-*")
		}
		diff := string(gittest.Run(t, repo, args...))
		for _, chunk := range splitDiff(diff) {
			dir := chunkDir(chunk)
			out[dir] += chunk
		}
	}
	for _, c := range cases {
		if c.traditional {
			out[c.dir] = traditional(out[c.dir], c.tradNamed)
		}
	}
	return out
}

// splitDiff splits a diff into its files.
func splitDiff(diff string) []string {
	var out []string
	for diff != "" {
		i := strings.Index(diff[1:], "\ndiff --git ")
		if i < 0 {
			out = append(out, diff)
			break
		}
		out = append(out, diff[:i+2])
		diff = diff[i+2:]
	}
	return out
}

// chunkDir returns the case of a file's diff.
func chunkDir(chunk string) string {
	rest := strings.TrimPrefix(chunk, "diff --git a/")
	dir, _, _ := strings.Cut(rest, "-")
	return dir
}

// traditional turns a git diff into the form quilt writes: no "diff --git",
// "index" or mode lines; a new file keeps "--- /dev/null" or, half the
// time, names itself on both sides (git then decides it creates the file
// because it is not there).
func traditional(diff string, named bool) string {
	var b strings.Builder
	lines := strings.SplitAfter(diff, "\n")
	for i, l := range lines {
		if named && l == "--- /dev/null\n" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ b/") {
			l = "--- a/" + strings.TrimPrefix(lines[i+1], "+++ b/")
		}
		switch {
		case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "new file mode "),
			strings.HasPrefix(l, "deleted file mode "):
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// runGit runs git apply in dir on patch and returns its exit status and
// standard error, line by line.
func runGit(t *testing.T, dir, patch string, args ...string) (int, []string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"apply"}, args...)...)
	cmd.Dir, cmd.Env = dir, gittest.Environ(dir)
	cmd.Stdin = strings.NewReader(patch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
}

// parse reads a patch as package mail does: go-gitdiff, and for a diff
// without git's headers the first directory (a/, b/) cut from its names.
func parse(t *testing.T, patch string) []*gitdiff.File {
	t.Helper()
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		t.Fatalf("parsing the patch: %v\n%s", err, patch)
	}
	for _, f := range files {
		if f.OldMode == 0 && f.NewMode == 0 && !f.IsRename && !f.IsCopy && !f.IsBinary {
			f.OldName, f.NewName = stripFirst(f.OldName), stripFirst(f.NewName)
		}
	}
	return files
}

func stripFirst(name string) string {
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

// diffLines says where two line lists first differ.
func diffLines(want, got []string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-3)
	return fmt.Sprintf("first difference at line %d\ngit:\n  %s\ngitapply:\n  %s", i+1,
		strings.Join(want[from:min(len(want), i+4)], "\n  "), strings.Join(got[from:min(len(got), i+4)], "\n  "))
}

// TestApplyDifferential compares Apply with the real git apply on
// generated patches (edits, creations, deletions, renames, mode changes,
// binary changes, diffs without git's headers, -U0 to -U3) applied to
// trees that differ from the ones they were made on (lines inserted and
// removed: offsets forward and back; a context changed: a hunk that fails;
// a stretch repeated: a context that matches twice; the change already
// there; a final newline added or removed): what git prints (--reject,
// which is verbose: the hunks placed at an offset, those rejected), its
// exit status and the files it leaves, in the working tree and with
// --index; git apply --check -v without --reject; and git apply -R --check
// -v (whether the tree already has the change).
func TestApplyDifferential(t *testing.T) {
	gittest.Require(t)
	r := rand.New(rand.NewPCG(*gittest.Seed, 27))
	cases := append(fixedCases(), generate(r, gittest.CasesOr(300, 3000))...)
	patches := makePatches(t, cases)
	// The diffs without git's headers first: after one of git's without a
	// hunk (a mode change), a "--- " line would continue its header.
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].traditional && !cases[j].traditional })
	var all strings.Builder
	target := mapTree{}
	for _, c := range cases {
		all.WriteString(patches[c.dir])
		for p, f := range c.target {
			target[p] = f
		}
	}
	patch := all.String()
	files := parse(t, patch)
	// The working tree git apply reads, and one in a repository whose
	// index has the same files (for --index); the checks change nothing.
	work, index := t.TempDir(), t.TempDir()
	writeTree(t, work, target)
	writeTree(t, index, target)
	gittest.Run(t, index, "init", "-q")
	gittest.Run(t, index, "add", "-A")
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.kind]++
	}
	t.Logf("%d cases: %v", len(cases), kinds)

	// Already applied, case by case (it is a verdict on a whole patch):
	// git apply --check fails and git apply -R --check takes it.
	t.Run("already applied", func(t *testing.T) {
		n, seen := 0, 0
		for _, c := range cases {
			if n >= 40 || !strings.Contains(c.kind, "already") && c.kind != "edit" {
				continue
			}
			n++
			fwd, _ := runGit(t, work, patches[c.dir], "--check")
			rev, _ := runGit(t, work, patches[c.dir], "-R", "--check")
			want := fwd != 0 && rev == 0
			res := gitapply.Apply(c.target, parse(t, patches[c.dir]), gitapply.Options{Check: true})
			if res.AlreadyApplied != want {
				t.Errorf("%s (%s): git apply --check exits %d, -R --check %d; AlreadyApplied %v", c.dir, c.kind, fwd, rev, res.AlreadyApplied)
			}
			if want {
				seen++
			}
		}
		if seen == 0 {
			t.Error("no case already applied")
		}
	})

	for _, run := range []struct {
		name string
		args []string
		opt  gitapply.Options
	}{
		{"git apply -R --check -v", []string{"-R", "--check", "-v"}, gitapply.Options{Reverse: true, Check: true}},
		{"git apply --check -v", []string{"--check", "-v"}, gitapply.Options{Check: true}},
		{"git apply --index --check -v", []string{"--index", "--check", "-v"}, gitapply.Options{Check: true, Index: true}},
		{"git apply --reject", []string{"--reject", "--whitespace=nowarn"}, gitapply.Options{Reject: true}},
		{"git apply --index --reject", []string{"--index", "--reject", "--whitespace=nowarn"}, gitapply.Options{Reject: true, Index: true}},
	} {
		t.Run(run.name, func(t *testing.T) {
			dir := work
			if run.opt.Index {
				dir = index
			}
			code, stderr := runGit(t, dir, patch, run.args...)
			if run.opt.Reject {
				// what the cases must have met, in git's words
				text := strings.Join(stderr, "\n")
				wants := []string{"(offset -", "(offset 1 line)", "lines).", "Rejected hunk #", "Hunk #2 applied cleanly.",
					"already exists in working directory", "No such file or directory", "removal patch leaves file contents",
					"without full index line", "which does not match the current contents", "Applied patch", "=>"}
				if run.opt.Index {
					wants = []string{"already exists in index", "does not exist in index"}
				}
				for _, want := range wants {
					if !strings.Contains(text, want) {
						t.Errorf("no case where git says %q", want)
					}
				}
			}
			res := gitapply.Apply(target, files, run.opt)
			if got := res.Log(true); strings.Join(got, "\n") != strings.Join(stderr, "\n") {
				t.Errorf("messages differ: %s", diffLines(stderr, got))
			}
			if (code == 0) != res.OK() {
				t.Errorf("git exits %d, OK() = %v", code, res.OK())
			}
			checkLines(t, res, run.opt.Reverse)
			if run.opt.Check {
				return
			}
			want, got := readTree(t, dir), target.apply(res.Changes())
			var paths []string
			for p := range want {
				paths = append(paths, p)
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					paths = append(paths, p)
				}
			}
			sort.Strings(paths)
			for _, p := range paths {
				w, wok := want[p]
				g, gok := got[p]
				if wok != gok || !bytes.Equal(w.content, g.content) || w.mode != g.mode {
					t.Errorf("%s: git leaves %v %o %q, gitapply %v %o %q", p, wok, w.mode, w.content, gok, g.mode, g.content)
				}
			}
		})
	}
}

// TestApplyDeathDifferential: a deletion whose hunk git rejects on an
// empty file leaves nothing, so git apply --reject does not refuse it but
// dies writing it ("fatal: internal error", exit 128), after the removals
// and the files before it; Apply says and leaves the same.
func TestApplyDeathDifferential(t *testing.T) {
	gittest.Require(t)
	reg := uint32(0o100644)
	cases := []*testCase{
		{dir: "a", old: mapTree{"a-f.c": {[]byte("x\n"), reg}}, new: mapTree{"a-f.c": {[]byte("y\n"), reg}}, target: mapTree{"a-f.c": {[]byte("x\n"), reg}}, context: 3},
		{dir: "b", old: mapTree{"b-f.c": {[]byte("one\ntwo\n"), reg}}, new: mapTree{}, target: mapTree{"b-f.c": {nil, reg}}, context: 3},
		{dir: "c", old: mapTree{"c-f.c": {[]byte("x\n"), reg}}, new: mapTree{"c-f.c": {[]byte("z\n"), reg}}, target: mapTree{"c-f.c": {[]byte("x\n"), reg}}, context: 3},
	}
	patches := makePatches(t, cases)
	patch := patches["a"] + patches["b"] + patches["c"]
	target := mapTree{}
	for _, c := range cases {
		for p, f := range c.target {
			target[p] = f
		}
	}
	dir := t.TempDir()
	writeTree(t, dir, target)
	code, stderr := runGit(t, dir, patch, "--reject", "--whitespace=nowarn")
	res := gitapply.Apply(target, parse(t, patch), gitapply.Options{Reject: true})
	if got := res.Log(true); code != 128 || strings.Join(got, "\n") != strings.Join(stderr, "\n") || res.OK() {
		t.Errorf("git exits %d; OK %v; messages: %s", code, res.OK(), diffLines(stderr, got))
	}
	want, got := readTree(t, dir), target.apply(res.Changes())
	for _, p := range []string{"a-f.c", "b-f.c", "c-f.c"} {
		if w, g := want[p], got[p]; !bytes.Equal(w.content, g.content) || w.mode != g.mode {
			t.Errorf("%s: git leaves %q, Apply %q", p, w.content, g.content)
		}
	}
}

// checkLines checks the line numbers Apply gives for the hunks it applied:
// OldLines point at the hunk's old lines in the file it met, NewLines at
// its new lines in the result. (Not on a file without a final newline:
// lines added after its last line join it, in git as here.)
func checkLines(t *testing.T, res *gitapply.Result, reverse bool) {
	t.Helper()
	for _, f := range res.Files {
		if f.Err != nil || f.Binary || !f.Checked || len(f.Old) > 0 && f.Old[len(f.Old)-1] != '\n' {
			continue
		}
		old, result := strings.SplitAfter(string(f.Old), "\n"), strings.SplitAfter(string(f.Content), "\n")
		for k, h := range f.Hunks {
			if !h.Applied {
				continue
			}
			var pre, post []string
			for _, l := range f.Diff.TextFragments[k].Lines {
				if l.Old() != reverse || l.Op == gitdiff.OpContext {
					pre = append(pre, l.Line)
				}
				if l.New() != reverse || l.Op == gitdiff.OpContext {
					post = append(post, l.Line)
				}
			}
			if len(h.OldLines) != len(pre) || len(h.NewLines) != len(post) {
				t.Errorf("%s hunk %d: %d old and %d new line numbers for %d and %d lines", f.NewName, k+1, len(h.OldLines), len(h.NewLines), len(pre), len(post))
				continue
			}
			for i, n := range h.OldLines {
				if n < 1 || n > len(old) || !strings.HasPrefix(old[n-1], pre[i]) {
					t.Errorf("%s hunk %d: old line %d is not %q", f.NewName, k+1, n, pre[i])
				}
			}
			for i, n := range h.NewLines {
				if n < 1 || n > len(result) || !strings.HasPrefix(result[n-1], post[i]) {
					t.Errorf("%s hunk %d: new line %d is not %q", f.NewName, k+1, n, post[i])
				}
			}
		}
	}
}

// Under is gitapply.DirTree's.
func (t mapTree) Under(dir string) []string {
	var out []string
	for p := range t {
		if strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestApplyDirFileDifferential: a file to create under a path that is a
// file, or where a directory of files is, passes git apply's checks and
// makes it die writing it ("unable to write file 'a.c/x.c' mode 100644:
// Not a directory", "Directory not empty"), exit 128, after the removals
// and the files before it; where the patch removes that file, or every
// file of that directory, it applies. Apply says and leaves the same, in
// the working tree, with --index (as git am applies) and with --reject.
func TestApplyDirFileDifferential(t *testing.T) {
	gittest.Require(t)
	reg := uint32(0o100644)
	target := mapTree{"a.c": {[]byte("a\n"), reg}, "z.c": {[]byte("y\n"), reg}, "d/f.c": {[]byte("x\n"), reg}, "s/sub/h.c": {[]byte("h\n"), reg}}
	names, err := filepath.Glob(filepath.Join("testdata", "dirfile", "*.patch"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	died := map[string]bool{}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range []struct {
			args []string
			opt  gitapply.Options
		}{
			{[]string{"-v"}, gitapply.Options{}},
			{[]string{"-v", "--index"}, gitapply.Options{Index: true}},
			{[]string{"--reject"}, gitapply.Options{Reject: true}},
			{[]string{"--check", "-v"}, gitapply.Options{Check: true}},
		} {
			t.Run(filepath.Base(name)+" "+strings.Join(run.args, " "), func(t *testing.T) {
				dir := t.TempDir()
				writeTree(t, dir, target)
				if run.opt.Index {
					gittest.Run(t, dir, "init", "-q")
					gittest.Run(t, dir, "add", "-A")
				}
				code, stderr := runGit(t, dir, string(data), run.args...)
				res := gitapply.Apply(target, parse(t, string(data)), run.opt)
				if got := res.Log(true); strings.Join(got, "\n") != strings.Join(stderr, "\n") {
					t.Errorf("messages differ: %s", diffLines(stderr, got))
				}
				if (code == 0) != res.OK() {
					t.Errorf("git exits %d, OK() = %v", code, res.OK())
				}
				if code == 128 {
					died[strings.Join(stderr, "\n")] = true
					if res.Fatal == nil || res.Fatal.Err == nil || !strings.Contains(strings.Join(stderr, "\n"), strings.Join(res.Fatal.Errors(), "\n")) {
						t.Errorf("git dies (%q), Apply's Fatal file %+v does not say so", stderr, res.Fatal)
					}
				}
				want, got := readTree(t, dir), target.apply(res.Changes())
				if run.opt.Check {
					got = target
				}
				for p := range got {
					if _, ok := want[p]; !ok {
						t.Errorf("%s: git leaves none, Apply %q", p, got[p].content)
					}
				}
				for p, w := range want {
					if g, ok := got[p]; !ok || !bytes.Equal(w.content, g.content) || w.mode != g.mode {
						t.Errorf("%s: git leaves %o %q, Apply %v %o %q", p, w.mode, w.content, ok, g.mode, g.content)
					}
				}
			})
		}
	}
	text := fmt.Sprint(died)
	for _, want := range []string{"Not a directory", "Directory not empty"} {
		if !strings.Contains(text, want) {
			t.Errorf("no case where git dies with %q", want)
		}
	}
}
