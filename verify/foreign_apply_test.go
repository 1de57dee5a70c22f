package verify

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
)

// applyPair is a patch and a file of it (its path after the patch).
type applyPair struct {
	patch int
	path  string
}

// gitSeries is what the real git does with a series taken in order onto
// v6.12, keeping what applies: the hunks or files git apply --reject
// refuses (per patch and file: the number of hunks rejected, 1 for a file
// refused whole), and the patches git apply -R --check takes on the tree
// before them.
type gitSeries struct {
	refused map[applyPair]int
	reverse map[int]bool
	failed  map[int]bool // patches with something refused
}

// applyWithGit takes s's patches in order onto v6.12 of the Debian tree
// (dir) with the real git: each patch's mail as git am reads it (git
// mailinfo), git apply -R --check, then git apply --reject, in a scratch
// directory holding the files the series touches as v6.12 has them (read
// with git ls-tree and cat-file: the cached tree is not touched).
func applyWithGit(t *testing.T, dir string, s *Series) gitSeries {
	t.Helper()
	work := t.TempDir()
	pathSet := map[string]bool{}
	for _, p := range s.Patches {
		for _, gf := range p.diffs {
			for _, n := range []string{gf.OldName, gf.NewName} {
				if n != "" {
					pathSet[n] = true
				}
			}
		}
	}
	var paths []string
	for p := range pathSet {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ls := gittest.Run(t, dir, append([]string{"ls-tree", "-z", "v6.12", "--"}, paths...)...)
	type entry struct{ mode, id, path string }
	var ents []entry
	var ids []string
	for _, rec := range strings.Split(string(ls), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" || !pathSet[path] {
			continue
		}
		ents = append(ents, entry{f[0], f[2], path})
		ids = append(ids, f[2])
	}
	objs := gittest.CatFile(t, dir, ids)
	for _, e := range ents {
		dst := filepath.Join(work, e.path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if e.mode == "120000" {
			if err := os.Symlink(string(objs[e.id].Data), dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		perm := os.FileMode(0o644)
		if e.mode == "100755" {
			perm = 0o755
		}
		if err := os.WriteFile(dst, objs[e.id].Data, perm); err != nil {
			t.Fatal(err)
		}
	}
	env := append(gittest.Environ(work), "GIT_CEILING_DIRECTORIES="+filepath.Dir(work))
	git := func(stdin []byte, args ...string) (string, bool) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = work, env, bytes.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return out.String(), err == nil
	}
	res := gitSeries{refused: map[applyPair]int{}, reverse: map[int]bool{}, failed: map[int]bool{}}
	scratch := t.TempDir()
	for _, p := range s.Patches {
		msg, patch := filepath.Join(scratch, "msg"), filepath.Join(scratch, "patch")
		if out, ok := git([]byte(p.Mail), "mailinfo", msg, patch); !ok {
			t.Fatalf("%s: git mailinfo: %s", p.MailFile, out)
		}
		diff, err := os.ReadFile(patch)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := git(diff, "apply", "-R", "--check"); ok {
			res.reverse[p.Number] = true
		}
		out, ok := git(diff, "apply", "--reject", "--whitespace=nowarn")
		if !ok {
			res.failed[p.Number] = true
		}
		for path, n := range rejectedByGit(out) {
			res.refused[applyPair{p.Number, path}] += n
		}
		rejs, _ := filepath.Glob(filepath.Join(work, "**", "*.rej"))
		for _, r := range rejs {
			os.Remove(r)
		}
	}
	return res
}

// rejectedByGit reads what git apply --reject printed (it is verbose):
// a file refused whole (an error in its "Checking patch" section but the
// hunks' own) counts 1, a file written with rejected hunks their number
// ("Applying patch F with N rejects..."); a rename is named by its new
// name.
func rejectedByGit(out string) map[string]int {
	got := map[string]int{}
	name := func(s string) string {
		if _, after, ok := strings.Cut(s, " => "); ok {
			s = after
		}
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return s
	}
	section := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Checking patch ") && strings.HasSuffix(l, "..."):
			section = name(strings.TrimSuffix(strings.TrimPrefix(l, "Checking patch "), "..."))
		case strings.HasPrefix(l, "Applying patch ") && strings.Contains(l, " with "):
			section = ""
			i := strings.LastIndex(l, " with ")
			var n int
			if _, err := fmt.Sscanf(l[i:], " with %d reject", &n); err == nil {
				got[name(l[len("Applying patch "):i])] = n
			}
		case strings.HasPrefix(l, "Applied patch "):
			section = ""
		case section != "" && strings.HasPrefix(l, "error: ") && !strings.HasPrefix(l, "error: while searching for:") && !strings.HasPrefix(l, "error: patch failed: "):
			got[section] = 1 // refused whole
		}
	}
	return got
}

// verifySeries is what verify says of the same series: PATCH_APPLY per
// patch and file, and PATCH_ALREADY_APPLIED per patch.
func verifySeries(t *testing.T, s *Series) (map[applyPair]int, map[int]bool) {
	t.Helper()
	refused := map[applyPair]int{}
	for _, p := range s.Patches {
		for _, r := range p.refused {
			refused[applyPair{p.Number, r.path}]++
		}
	}
	fs := Run(s, Options{Ignore: nonApplyRules()})
	pa := only(fs, "PATCH_APPLY")
	// one finding per refused patch and file, and one per mail git am
	// would stop at that verify cannot read (left out, as git am --skip)
	if want := countAll(refused) + len(s.unreadable); len(pa) != want {
		t.Errorf("%s: %d PATCH_APPLY findings for %d refusals and %d unreadable mails", s.Source, len(pa), countAll(refused), len(s.unreadable))
	}
	for _, f := range pa { // a hunk's finding is at its header in the mail
		_, hdr, ok := strings.Cut(f.Message, " (@@ ")
		if !strings.HasPrefix(f.Message, "hunk ") || !ok {
			continue
		}
		hdr = "@@ " + hdr[:strings.Index(hdr, " @@)")+3]
		if line, _ := textAt(s, f); !strings.HasPrefix(line, hdr) {
			t.Errorf("patch %d %s: line %q, not the hunk %s", f.Patch, f.Where(), line, hdr)
		}
	}
	already := map[int]bool{}
	for _, f := range only(fs, "PATCH_ALREADY_APPLIED") {
		already[f.Patch] = true
	}
	return refused, already
}

// nonApplyRules are the rules but PATCH_APPLY and PATCH_ALREADY_APPLIED.
func nonApplyRules() []string {
	var out []string
	for _, r := range Rules() {
		if r.ID != "PATCH_APPLY" && r.ID != "PATCH_ALREADY_APPLIED" {
			out = append(out, r.ID)
		}
	}
	return out
}

func countAll(m map[applyPair]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// foreignApplyRow is a line of docs/verify.md's table: for one series,
// its patches, the patch/file pairs git refuses and verify reports (with
// the hunks counted), and the patches already applied.
type foreignApplyRow struct {
	name                      string
	patches                   int
	gitPairs, gitHunks        int
	verifyPairs, verifyHunks  int
	gitAlready, verifyAlready int
}

// compareForeignApply reads each series with ReadMail against the Debian
// tree, has the real git take it onto v6.12 (applyWithGit), and checks
// that verify's PATCH_APPLY is exactly where git refuses (the same
// patches, files and number of hunks) and PATCH_ALREADY_APPLIED exactly
// on the patches that do not apply and that git apply -R --check takes.
func compareForeignApply(t *testing.T, names map[string]bool) []foreignApplyRow {
	gittest.Require(t)
	dir := debianTree(t)
	tree, err := kernelsrc.Open(dir, "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []foreignApplyRow
	for _, fs := range testenv.ForeignSeries(t) {
		if names != nil && !names[fs.Name] {
			continue
		}
		t.Run(fs.Name, func(t *testing.T) {
			s, err := ReadMail(fs.Path, tree)
			if err != nil {
				t.Fatal(err)
			}
			g := applyWithGit(t, dir, s)
			refused, already := verifySeries(t, s)
			var keys []applyPair
			seen := map[applyPair]bool{}
			for k := range g.refused {
				keys, seen[k] = append(keys, k), true
			}
			for k := range refused {
				if !seen[k] {
					keys = append(keys, k)
				}
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].patch != keys[j].patch {
					return keys[i].patch < keys[j].patch
				}
				return keys[i].path < keys[j].path
			})
			for _, k := range keys {
				if g.refused[k] != refused[k] {
					t.Errorf("patch %d %s: git refuses %d (hunks, or 1 for the file), verify %d", k.patch, k.path, g.refused[k], refused[k])
				}
			}
			row := foreignApplyRow{name: fs.Name, patches: len(s.Patches), gitPairs: len(g.refused), gitHunks: countAll(g.refused),
				verifyPairs: len(refused), verifyHunks: countAll(refused)}
			for _, p := range s.Patches {
				want := g.failed[p.Number] && g.reverse[p.Number]
				if want {
					row.gitAlready++
				}
				if already[p.Number] {
					row.verifyAlready++
				}
				if want != already[p.Number] {
					t.Errorf("patch %d: git apply fails %v, -R --check takes it %v; verify says already applied: %v", p.Number, g.failed[p.Number], g.reverse[p.Number], already[p.Number])
				}
				if g.reverse[p.Number] && !g.failed[p.Number] {
					t.Logf("patch %d applies forwards and backwards", p.Number)
				}
			}
			rows = append(rows, row)
		})
	}
	return rows
}

// TestForeignApplyFew: PATCH_APPLY and PATCH_ALREADY_APPLIED equal to the
// real git's verdicts on a few real series (patches refused whole and by
// hunk, hunks placed at offsets, a quilt series); TestForeignApply takes
// them all.
func TestForeignApplyFew(t *testing.T) {
	compareForeignApply(t, map[string]bool{"futex2": true, "hh-btrfs": true, "openwrt-quilt": true, "single-kbuild": true})
}

// TestForeignApply: on every series of ../shared/foreign-series, verify's
// PATCH_APPLY is exactly where the real git, taking the series in order
// onto v6.12 and keeping what applies, refuses a patch and file, and
// PATCH_ALREADY_APPLIED exactly where git apply -R --check takes a patch
// that does not apply; docs/verify.md's table of the results is the one
// this test computes (-update-docs rewrites it).
func TestForeignApply(t *testing.T) {
	testenv.Full(t, "runs git on every patch of fifteen series")
	rows := compareForeignApply(t, nil)
	if t.Failed() {
		return
	}
	var b strings.Builder
	b.WriteString("| series | patches | patch/file pairs git refuses (hunks) | PATCH_APPLY (hunks) | already applied: git | PATCH_ALREADY_APPLIED |\n|---|---|---|---|---|---|\n")
	var tot foreignApplyRow
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d (%d) | %d (%d) | %d | %d |\n", r.name, r.patches, r.gitPairs, r.gitHunks, r.verifyPairs, r.verifyHunks, r.gitAlready, r.verifyAlready)
		tot.patches += r.patches
		tot.gitPairs, tot.gitHunks = tot.gitPairs+r.gitPairs, tot.gitHunks+r.gitHunks
		tot.verifyPairs, tot.verifyHunks = tot.verifyPairs+r.verifyPairs, tot.verifyHunks+r.verifyHunks
		tot.gitAlready, tot.verifyAlready = tot.gitAlready+r.gitAlready, tot.verifyAlready+r.verifyAlready
	}
	fmt.Fprintf(&b, "| **all** | %d | %d (%d) | %d (%d) | %d | %d |\n", tot.patches, tot.gitPairs, tot.gitHunks, tot.verifyPairs, tot.verifyHunks, tot.gitAlready, tot.verifyAlready)
	checkDocsSection(t, "foreign-apply", b.String())
}

// checkDocsSection checks that docs/verify.md holds want between the
// markers "<!-- name:begin -->" and "<!-- name:end -->", or rewrites it
// there with -update-docs.
func checkDocsSection(t *testing.T, name, want string) {
	t.Helper()
	b, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+":begin -->\n", "<!-- "+name+":end -->"
	i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", docsPath, begin, end)
	}
	if string(b[i+len(begin):j]) == want {
		return
	}
	if !*updateDocs {
		t.Fatalf("%s: the %s table is out of date (go test ./verify -run %s -update-docs):\n%s", docsPath, name, t.Name(), want)
	}
	out := append(append(append([]byte{}, b[:i+len(begin)]...), want...), b[j:]...)
	if err := os.WriteFile(docsPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
