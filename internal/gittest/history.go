package gittest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/plumbing/kerneltree"
)

// Cases is the -kpatch.cases flag shared by the differential tests: how
// many random cases to compare with the real tool. 0 means each test's
// default, a few hundred cases (a few seconds) under -short.
var Cases = flag.Int("kpatch.cases", 0, "random cases for the differential tests against git (0: the test's default)")

// Seed is the -kpatch.seed flag: the seed of the differential tests'
// random inputs, so that a failure can be replayed.
var Seed = flag.Uint64("kpatch.seed", 1, "seed of the differential tests' random inputs")

// CasesOr returns -kpatch.cases if set, else short under -short and long
// otherwise.
func CasesOr(short, long int) int {
	switch {
	case *Cases > 0:
		return *Cases
	case testing.Short():
		return short
	}
	return long
}

// FileState is a file of a generated commit.
type FileState struct {
	Content []byte
	Mode    string // "100644" or "100755"
}

// Commit is one generated commit: its id and the tree after it.
type Commit struct {
	ID      string
	Message string
	Author  string // "Name <address>"
	Files   map[string]FileState
}

// History is a generated repository: Base (the tree of the first commit)
// and the commits of each branch, oldest first.
type History struct {
	Dir      string
	Base     Commit
	Branches map[string][]Commit
}

// KernelSources returns n files of Debian 6.12's kernel tree chosen by r
// (C sources and headers, Kconfig and Makefiles, device trees, docs),
// keyed by their path in the tree. It skips the test when the tree is
// not available.
func KernelSources(t testing.TB, r *rand.Rand, n int) map[string][]byte {
	t.Helper()
	tree, err := kerneltree.Debian612(context.Background(), io.Discard)
	if err != nil {
		t.Skipf("no kernel tree: %v", err)
	}
	// Without -l: git would read the size of every one of the tree's
	// 86,000 blobs, where only the picked files' sizes matter.
	out, err := exec.Command("git", "-C", tree, "ls-tree", "-r", "v6.12").Output()
	if err != nil {
		t.Skipf("listing the kernel tree: %v", err)
	}
	var paths []string
	for _, l := range strings.Split(string(out), "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	files := map[string][]byte{}
	for len(files) < n && len(paths) > 0 {
		i := r.IntN(len(paths))
		p := paths[i]
		data, err := os.ReadFile(filepath.Join(tree, p))
		if err != nil || len(data) == 0 || len(data) >= 60000 {
			paths = append(paths[:i], paths[i+1:]...) // never a candidate again
			continue
		}
		files[p] = data
	}
	return files
}

// KernelBinaries returns the files of Debian 6.12's kernel tree git
// takes for binary (a NUL byte in their first 8000 bytes) among those of
// under 60 KB named as images, firmware and archives are, keyed by their
// path in the tree. It skips the test when the tree is not available.
func KernelBinaries(t testing.TB) map[string][]byte {
	t.Helper()
	tree, err := kerneltree.Debian612(context.Background(), io.Discard)
	if err != nil {
		t.Skipf("no kernel tree: %v", err)
	}
	out, err := exec.Command("git", "-C", tree, "ls-tree", "-r", "-l", "v6.12").Output()
	if err != nil {
		t.Skipf("listing the kernel tree: %v", err)
	}
	files := map[string][]byte{}
	for _, l := range strings.Split(string(out), "\n") {
		meta, path, ok := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" || len(f[3]) > 5 || !binaryName.MatchString(path) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tree, path))
		if err == nil && len(data) < 60000 && bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			files[path] = data
		}
	}
	if len(files) == 0 {
		t.Fatalf("no binary file in %s", tree)
	}
	return files
}

var binaryName = regexp.MustCompile(`\.(png|jpe?g|gif|ico|bmp|bin|fw|gz|xz|bz2|zst|der|ttf)$`)

// oddLines are lines random edits insert: bytes that are not UTF-8, form
// feeds, vertical tabs, carriage returns, trailing white space, long
// lines, function-like lines for hunk headers.
var oddLines = []string{
	"caf\xe9\n", "\f\n", "\v\n", "int f(void)\r\n", "\t\n", "trailing space \n",
	"static int caf\xe9_bad(void)\n", "int a\xc3\n", "/* \xef\xbf\xbe */\n",
	"struct s {\n", "};\n", "}\n", "\n", "#include <linux/x.h>\n",
	"static void " + strings.Repeat("very_long_name_", 8) + "(void)\n",
	"label:\n", "\treturn 0;\n", "\tif (x)\n", "\t\tgoto out;\n", "\f\t\v \n",
}

// Generate builds, with r, a repository in a new temporary directory:
// a base commit holding sources (with the kernel's .gitattributes, so
// that git picks the kernel's hunk-header drivers), then for each branch
// n commits of random edits: lines inserted, deleted or replaced (with
// lines of other files and odd bytes), files created, deleted, renamed,
// made executable or not, ends without a final newline. It runs one git
// fast-import and checks main out.
func Generate(t testing.TB, r *rand.Rand, sources map[string][]byte, branches []string, n int) *History {
	t.Helper()
	return generate(t, r, sources, branches, n, nil)
}

// commitPlan is a commit to generate: the seed of its edits, its message
// and author.
type commitPlan struct {
	seed            uint64
	message, author string
}

// GenerateSeries is Generate for two versions of a patch series of
// about n patches, branches "old" and "new": the new version repeats the
// old one's edits (the same diff while the tree is the same, a similar
// one after a change) with some patches dropped, changed, inserted,
// reworded, moved or given another author.
func GenerateSeries(t testing.TB, r *rand.Rand, sources map[string][]byte, n int) *History {
	t.Helper()
	var old, new []commitPlan
	for i := 0; i < n; i++ {
		p := commitPlan{seed: r.Uint64(), message: fmt.Sprintf("subsystem: change %d\n\n%s\n", i, randomWords(r)), author: randomAuthor(r)}
		old = append(old, p)
		switch k := r.IntN(20); {
		case k < 12:
			new = append(new, p)
		case k < 13: // dropped
		case k < 15: // changed
			q := p
			q.seed = r.Uint64()
			new = append(new, q)
		case k < 16: // a patch inserted after it
			new = append(new, p, commitPlan{seed: r.Uint64(), message: fmt.Sprintf("subsystem: new change %d\n\n%s\n", i, randomWords(r)), author: randomAuthor(r)})
		case k < 18: // reworded
			q := p
			q.message = strings.Replace(p.message, "\n\n", "\n\nReworded: ", 1)
			new = append(new, q)
		case k < 19: // another author
			q := p
			q.author = randomAuthor(r)
			new = append(new, q)
		default: // swapped with the previous one
			new = append(new, p)
			if m := len(new); m >= 2 {
				new[m-1], new[m-2] = new[m-2], new[m-1]
			}
		}
	}
	return generate(t, r, sources, []string{"old", "new"}, 0, map[string][]commitPlan{"old": old, "new": new})
}

// GenerateMessages is Generate for one branch, "one", of n commits whose
// messages are written as people write them and git commit would not
// store them (git fast-import keeps a message as given): see Message.
func GenerateMessages(t testing.TB, r *rand.Rand, sources map[string][]byte, n int) *History {
	t.Helper()
	var plan []commitPlan
	for i := 0; i < n; i++ {
		plan = append(plan, commitPlan{seed: r.Uint64(), message: Message(r, i), author: randomAuthor(r)})
	}
	return generate(t, r, sources, []string{"one"}, 0, map[string][]commitPlan{"one": plan})
}

// Message returns the commit message of change i as people write them,
// for the tests of what git am records from a mail: a title (sometimes
// over two lines, with trailing white space), sometimes nothing else;
// a body that may start with blank lines and with lines git mailinfo
// takes for in-body headers (From, Subject, Date in any case, folded,
// repeated, "[PATCH] title", ">From " separators) or only nearly does;
// lines with trailing spaces, tabs and carriage returns, runs of blank
// lines and lines of white space, blank lines at the end.
func Message(r *rand.Rand, i int) string {
	var b strings.Builder
	ws := func() string { return []string{"", "", " ", "\t", "  \t", " \r"}[r.IntN(6)] }
	fmt.Fprintf(&b, "%s: change %d %s%s\n", words[r.IntN(len(words))], i, randomWords(r), ws())
	if r.IntN(8) == 0 {
		b.WriteString(randomWords(r) + ws() + "\n") // a title of two lines
	}
	if r.IntN(5) == 0 {
		return b.String() + []string{"", "\n", "\n\n", " \n"}[r.IntN(4)] // no body
	}
	b.WriteString("\n")
	for k := r.IntN(3); k > 0; k-- {
		b.WriteString([]string{"\n", " \n", "\t\n"}[r.IntN(3)])
	}
	if r.IntN(2) == 0 {
		for k := 1 + r.IntN(3); k > 0; k-- {
			b.WriteString(inBodyHeaders[r.IntN(len(inBodyHeaders))] + "\n")
		}
		b.WriteString([]string{"\n", "\n\n", ""}[r.IntN(3)])
	}
	for k := 1 + r.IntN(4); k > 0; k-- {
		for l := 1 + r.IntN(3); l > 0; l-- {
			b.WriteString(randomWords(r) + ws() + "\n")
		}
		b.WriteString([]string{"\n", "\n", "\n\n\n", " \n\t\n", "\n \n"}[r.IntN(5)])
	}
	fmt.Fprintf(&b, "Signed-off-by: %s%s\n", randomAuthor(r), ws())
	b.WriteString([]string{"", "", "\n", "\n\n", " \n"}[r.IntN(5)])
	return b.String()
}

// inBodyHeaders are lines Message may start a body with: what git
// mailinfo takes for in-body headers, and lines that nearly are. (No
// From: without an address: git am refuses the patch then.)
var inBodyHeaders = []string{
	"From: Real Author <real@example.org>", "from: Lower Case <lower@example.org>", "FROM: Jos\u00e9 Caf\u00e9 <jose@example.org>",
	"From: =?UTF-8?q?Encoded=20N=C3=A4me?= <enc@example.org>", "From: \"Quoted, Name\" <quoted@example.org>",
	"From:NoSpace <nospace@example.org>", "From: Folded\n Name <folded@example.org>", " an indented line",
	"Subject: an in-body subject", "subject: [PATCH v2 3/4] a prefixed in-body subject",
	"Subject: a subject\n\tfolded over a second line", "Date: Tue, 2 Jan 2024 11:00:00 +0100", "date: Wed, 3 Jan 2024 12:30:00 -0500",
	"[PATCH] an old-style title line", ">From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001",
	">From someone else", "Reported-by: Not A Header <nah@example.org>", "From the body on, not a header",
	"Sender: Not Read <sender@example.org>",
}

func generate(t testing.TB, r *rand.Rand, sources map[string][]byte, branches []string, n int, pair map[string][]commitPlan) *History {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	Run(t, dir, "init", "-q", "-b", "main")
	base := map[string]FileState{".gitattributes": {Content: []byte("*.[ch] diff=cpp\n*.dts diff=dts\n*.dts[io] diff=dts\n*.rs diff=rust\n"), Mode: "100644"}}
	var pool [][]byte // lines to insert
	var names []string
	for p := range sources {
		names = append(names, p)
	}
	sort.Strings(names) // the pool's order must not depend on map order
	for _, p := range names {
		c := sources[p]
		base[p] = FileState{Content: c, Mode: "100644"}
		pool = append(pool, bytes.SplitAfter(c, []byte("\n"))...)
	}
	var stream bytes.Buffer
	mark := 0
	when := 1700000000
	emit := func(ref, author, msg string, parent string, before, after map[string]FileState) int {
		mark++
		when++
		fmt.Fprintf(&stream, "commit %s\nmark :%d\nauthor %s %d +0000\ncommitter C O Mitter <c@example.com> %d +0000\ndata %d\n%s\n",
			ref, mark, author, when, when, len(msg), msg)
		if parent != "" {
			fmt.Fprintf(&stream, "from %s\n", parent)
		}
		for _, p := range sortedPaths(before) {
			if _, ok := after[p]; !ok {
				fmt.Fprintf(&stream, "D %s\n", quotePath(p))
			}
		}
		for _, p := range sortedPaths(after) {
			f := after[p]
			if old, ok := before[p]; ok && old.Mode == f.Mode && bytes.Equal(old.Content, f.Content) {
				continue
			}
			fmt.Fprintf(&stream, "M %s inline %s\ndata %d\n", f.Mode, quotePath(p), len(f.Content))
			stream.Write(f.Content)
			stream.WriteString("\n")
		}
		stream.WriteString("\n")
		return mark
	}
	h := &History{Dir: dir, Base: Commit{Message: "base\n", Author: "A U Thor <a@example.com>", Files: base}, Branches: map[string][]Commit{}}
	baseMark := emit("refs/heads/main", h.Base.Author, h.Base.Message, "", nil, base)
	marks := map[string][]int{}
	for _, b := range branches {
		var plan []commitPlan
		if pair != nil {
			plan = pair[b]
		} else {
			for i := 0; i < n; i++ {
				plan = append(plan, commitPlan{seed: r.Uint64(), message: fmt.Sprintf("%s: change %d\n\n%s\n", b, i, randomWords(r)), author: randomAuthor(r)})
			}
		}
		state := base
		for i, cp := range plan {
			next := Edit(rand.New(rand.NewPCG(cp.seed, 3)), state, pool)
			c := Commit{Message: cp.message, Author: cp.author, Files: next}
			parent := ""
			if i == 0 {
				parent = fmt.Sprintf(":%d", baseMark)
			}
			marks[b] = append(marks[b], emit("refs/heads/"+b, c.Author, c.Message, parent, state, next))
			h.Branches[b] = append(h.Branches[b], c)
			state = next
		}
	}
	marksFile := filepath.Join(dir, ".git", "marks")
	cmd := exec.Command("git", "fast-import", "--quiet", "--export-marks="+marksFile)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, Environ(dir), &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	// git reads .gitattributes from the work tree: check the base out.
	Run(t, dir, "checkout", "-q", "-f", "main")
	ids := map[int]string{}
	data, err := os.ReadFile(marksFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m int
		var id string
		fmt.Sscanf(l, ":%d %s", &m, &id)
		ids[m] = id
	}
	h.Base.ID = ids[baseMark]
	for b, ms := range marks {
		for i, m := range ms {
			h.Branches[b][i].ID = ids[m]
		}
	}
	return h
}

// Edit returns a copy of state with random edits; it changes something.
func Edit(r *rand.Rand, state map[string]FileState, pool [][]byte) map[string]FileState {
	for {
		next := editOnce(r, state, pool)
		if !sameFiles(state, next) {
			return next
		}
	}
}

func sameFiles(a, b map[string]FileState) bool {
	if len(a) != len(b) {
		return false
	}
	for p, f := range a {
		g, ok := b[p]
		if !ok || f.Mode != g.Mode || !bytes.Equal(f.Content, g.Content) {
			return false
		}
	}
	return true
}

func editOnce(r *rand.Rand, state map[string]FileState, pool [][]byte) map[string]FileState {
	next := make(map[string]FileState, len(state))
	for p, f := range state {
		next[p] = f
	}
	paths := sortedPaths(next)
	line := func() []byte {
		if len(pool) > 0 && r.IntN(3) > 0 {
			return pool[r.IntN(len(pool))]
		}
		return []byte(oddLines[r.IntN(len(oddLines))])
	}
	for k := 1 + r.IntN(3); k > 0; k-- {
		p := paths[r.IntN(len(paths))]
		f, ok := next[p]
		if !ok || p == ".gitattributes" {
			continue // renamed or deleted by an earlier edit
		}
		switch op := r.IntN(20); {
		case op < 13: // edit lines
			lines := bytes.SplitAfter(f.Content, []byte("\n"))
			for e := 1 + r.IntN(4); e > 0; e-- {
				at := r.IntN(len(lines) + 1)
				switch r.IntN(3) {
				case 0:
					lines = append(lines[:at], append([][]byte{line()}, lines[at:]...)...)
				case 1:
					if at < len(lines) {
						lines = append(lines[:at], lines[min(len(lines), at+1+r.IntN(5)):]...)
					}
				case 2:
					if at < len(lines) {
						lines[at] = line()
					}
				}
			}
			f.Content = bytes.Join(lines, nil)
			next[p] = f
		case op < 14: // no final newline, or one again
			if bytes.HasSuffix(f.Content, []byte("\n")) {
				f.Content = bytes.TrimSuffix(f.Content, []byte("\n"))
			} else {
				f.Content = append(append([]byte{}, f.Content...), '\n')
			}
			next[p] = f
		case op < 16: // mode change
			if f.Mode == "100644" {
				f.Mode = "100755"
			} else {
				f.Mode = "100644"
			}
			next[p] = f
		case op < 18: // rename, sometimes with an edit
			delete(next, p)
			np := filepath.Join(filepath.Dir(p), "renamed_"+filepath.Base(p))
			if r.IntN(2) == 0 {
				f.Content = append(append([]byte{}, f.Content...), line()...)
			}
			next[np] = f
		case op < 19: // new file
			var c []byte
			for i := r.IntN(30); i >= 0; i-- {
				c = append(c, line()...)
			}
			next[fmt.Sprintf("new/file%d.c", r.IntN(1000))] = FileState{Content: c, Mode: "100644"}
		default: // delete
			if len(next) > 2 {
				delete(next, p)
			}
		}
	}
	return next
}

var words = []string{"fix", "the", "unwinder", "for", "compat", "tasks", "and", "make", "it", "faster", "caf\u00e9", "x86"}

func randomWords(r *rand.Rand) string {
	var w []string
	for i := 3 + r.IntN(12); i > 0; i-- {
		w = append(w, words[r.IntN(len(words))])
	}
	return strings.Join(w, " ")
}

var authors = []string{
	"A U Thor <a@example.com>", "H. Peter Anvin <hpa@example.com>", "Paul E. McKenney <paulmck@example.com>",
	"Shawn O. Pearce <spearce@example.com>", "Jos\u00e9 Caf\u00e9 <jose@example.com>", "O'Brien <ob@example.com>",
}

func randomAuthor(r *rand.Rand) string { return authors[r.IntN(len(authors))] }

func sortedPaths(m map[string]FileState) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// quotePath quotes a path for git fast-import when it needs it.
func quotePath(p string) string {
	if !strings.ContainsAny(p, "\" \n\\") {
		return p
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(p) + `"`
}

// Pair is a change to compare with git: the exact trees before and after.
type Pair struct {
	Old, New map[string]FileState
}

// ImportPairs builds, in a new temporary directory, a repository holding
// for each pair a commit with exactly the files of Old and, as its child,
// one with exactly the files of New, all in one git fast-import (no work
// tree is checked out). It returns the repository and the ids of the New
// commits: the diff of commit ids[i] against its parent is pair i's change,
// so one `git log --no-walk=unsorted ids...` shows every pair's diff, as
// `git diff` of two commits holding the pair's trees would.
func ImportPairs(t testing.TB, pairs []Pair) (dir string, ids []string) {
	t.Helper()
	Require(t)
	dir = t.TempDir()
	Run(t, dir, "init", "-q", "-b", "main")
	var stream bytes.Buffer
	when := 1700000000
	commit := func(mark int, msg string, files map[string]FileState) {
		when++
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\nauthor A U Thor <a@example.com> %d +0000\ncommitter C O Mitter <c@example.com> %d +0000\ndata %d\n%s\n",
			mark, when, when, len(msg), msg)
		if mark > 1 {
			fmt.Fprintf(&stream, "from :%d\n", mark-1)
		}
		stream.WriteString("deleteall\n")
		for _, p := range sortedPaths(files) {
			f := files[p]
			fmt.Fprintf(&stream, "M %s inline %s\ndata %d\n", f.Mode, quotePath(p), len(f.Content))
			stream.Write(f.Content)
			stream.WriteString("\n")
		}
		stream.WriteString("\n")
	}
	for i, p := range pairs {
		commit(2*i+1, fmt.Sprintf("old %d\n", i), p.Old)
		commit(2*i+2, fmt.Sprintf("new %d\n", i), p.New)
	}
	marksFile := filepath.Join(dir, ".git", "marks")
	cmd := exec.Command("git", "fast-import", "--quiet", "--export-marks="+marksFile)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, Environ(dir), &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	data, err := os.ReadFile(marksFile)
	if err != nil {
		t.Fatal(err)
	}
	byMark := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m int
		var id string
		fmt.Sscanf(l, ":%d %s", &m, &id)
		byMark[m] = id
	}
	for i := range pairs {
		id := byMark[2*i+2]
		if id == "" {
			t.Fatalf("git fast-import gave no id to pair %d", i)
		}
		ids = append(ids, id)
	}
	return dir, ids
}

// LogDiffs runs `git log --no-walk=unsorted` on the commits ids with the
// diff options args (such as "--stat=72", "--summary", "-M") and returns
// what git prints for each commit after its header: the diff against its
// parent, as `git diff ARGS PARENT COMMIT` prints it. One git process
// serves any number of commits.
func LogDiffs(t testing.TB, dir string, ids []string, args ...string) map[string]string {
	t.Helper()
	if len(ids) == 0 {
		return map[string]string{}
	}
	full := append([]string{"log", "--no-walk=unsorted", "--no-color", "--format=%x01%H"}, args...)
	out := string(Run(t, dir, append(full, ids...)...))
	nul := false
	for _, a := range args {
		nul = nul || a == "-z"
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	diffs := map[string]string{}
	for _, chunk := range strings.Split(out, "\x01")[1:] {
		// The header is the id and a newline (with -z: NUL, newline);
		// without -z a blank line separates it from a diff that follows.
		id, rest, _ := strings.Cut(chunk, "\n")
		if nul {
			id = strings.TrimSuffix(id, "\x00")
		} else {
			rest = strings.TrimPrefix(rest, "\n")
		}
		if !want[id] {
			t.Fatalf("git log: cannot parse the header of %q (a \\x01 in a path?)", chunk)
		}
		diffs[id] = rest
	}
	if len(diffs) != len(ids) {
		t.Fatalf("git log printed %d commits, want %d", len(diffs), len(ids))
	}
	return diffs
}
