package diffstat

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// filesFromGit builds the File list of the diff between two commits from
// git's raw and numstat output (one git diff printing both), in git's
// order, so that Format can be checked against git's own rendering of the
// same diff.
func filesFromGit(t testing.TB, dir string, diffArgs ...string) []File {
	t.Helper()
	out := runGit(t, dir, append([]string{"diff", "--raw", "--numstat", "-z", "--no-abbrev"}, diffArgs...)...)
	return parseRawNumstat(t, dir, out)
}

// filesFromLog is filesFromGit for many commits, each against its parent,
// with one git log: commit id -> File list.
func filesFromLog(t testing.TB, dir string, ids []string, diffArgs ...string) map[string][]File {
	t.Helper()
	files := map[string][]File{}
	for id, out := range gittest.LogDiffs(t, dir, ids, append([]string{"--raw", "--numstat", "-z", "--no-abbrev"}, diffArgs...)...) {
		files[id] = parseRawNumstat(t, dir, out)
	}
	return files
}

// parseRawNumstat reads git's --raw --numstat -z output: the raw entries
// (":" then the modes, blob ids and status, then one or two paths), then
// the numstat entries in the same order.
func parseRawNumstat(t testing.TB, dir, out string) []File {
	t.Helper()
	fields := strings.Split(out, "\x00")
	var blobs [][2]string // old and new blob ids, for binary sizes
	var files []File
	i := 0
	for i+1 < len(fields) && strings.HasPrefix(fields[i], ":") {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 {
			t.Fatalf("cannot parse raw line %q", fields[i])
		}
		f := File{Path: fields[i+1]}
		blobs = append(blobs, [2]string{meta[2], meta[3]})
		i += 2
		status := meta[4]
		switch status[0] {
		case 'R', 'C':
			f.OldPath, f.Path = f.Path, fields[i]
			i++
			f.Copied = status[0] == 'C'
			f.Similarity, _ = strconv.Atoi(status[1:])
			f.Mode, f.OldMode = meta[1], meta[0]
		case 'A':
			f.Created, f.Mode = true, meta[1]
		case 'D':
			f.Removed, f.Mode = true, meta[0]
		default:
			f.Mode, f.OldMode = meta[1], meta[0]
		}
		files = append(files, f)
	}
	// numstat: "added\tdeleted\tpath" or, for renames and copies,
	// "added\tdeleted\t" followed by two path fields.
	num := fields[i:]
	k := 0
	for j := 0; j+1 < len(num) && k < len(files); k++ {
		parts := strings.SplitN(num[j], "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("cannot parse numstat field %q", num[j])
		}
		j++
		if parts[2] == "" {
			j += 2
		}
		if parts[0] == "-" {
			// Binary: git shows the blob sizes in bytes.
			// Unchanged contents (a mode change) count as 0 -> 0.
			files[k].Binary = true
			if blobs[k][0] != blobs[k][1] {
				files[k].Deleted = blobSize(t, dir, blobs[k][0])
				files[k].Added = blobSize(t, dir, blobs[k][1])
			}
			continue
		}
		files[k].Added, _ = strconv.Atoi(parts[0])
		files[k].Deleted, _ = strconv.Atoi(parts[1])
	}
	if k != len(files) {
		t.Fatalf("numstat has %d entries, raw %d", k, len(files))
	}
	return files
}

func blobSize(t testing.TB, dir, id string) int {
	if strings.Trim(id, "0") == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(runGit(t, dir, "cat-file", "-s", id)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// randomTree describes the contents of a commit: path -> content and
// path -> executable bit.
type randomTree struct {
	content map[string][]byte
	exec    map[string]bool
}

var pathParts = []string{
	"kernel", "mm", "include", "linux", "arch", "x86", "drivers", "net", "ethernet",
	"a_really_quite_long_directory_name_for_testing", "unwind", "sched", "fs", "tools",
	"testing", "selftests", "Documentation", "core-api", "x",
}

var fileNames = []string{
	"core.c", "Makefile", "Kconfig", "user.c", "deferred.c", "unwind_user_types.h",
	"a.h", "very_long_file_name_that_keeps_going_and_going_and_going.c", "README",
	"with space.txt", "t\u00e9st.c", "quote\".c", "tab\there.c", "back\\slash.c",
}

func randomPath(r *rand.Rand) string {
	var parts []string
	for i := r.IntN(6); i > 0; i-- {
		parts = append(parts, pathParts[r.IntN(len(pathParts))])
	}
	return strings.Join(append(parts, fileNames[r.IntN(len(fileNames))]), "/")
}

func randomContent(r *rand.Rand, lines int) []byte {
	var b bytes.Buffer
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "line %d %d\n", i, r.IntN(1000000))
	}
	return b.Bytes()
}

// editContent deletes and inserts random lines.
func editContent(r *rand.Rand, data []byte, maxChange int) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for k := r.IntN(4) + 1; k > 0; k-- {
		pos := r.IntN(len(lines) + 1)
		if r.IntN(2) == 0 && len(lines) > 0 {
			end := min(pos+r.IntN(maxChange+1), len(lines))
			lines = append(lines[:pos:pos], lines[end:]...)
		} else {
			var ins []string
			for i := r.IntN(maxChange + 1); i > 0; i-- {
				ins = append(ins, fmt.Sprintf("new %d\n", r.IntN(1000000)))
			}
			lines = append(lines[:pos:pos], append(ins, lines[pos:]...)...)
		}
	}
	return []byte(strings.Join(lines, ""))
}

// fileStates is tree as the files of a commit.
func (tree randomTree) fileStates() map[string]gittest.FileState {
	m := map[string]gittest.FileState{}
	for p, data := range tree.content {
		mode := "100644"
		if tree.exec[p] {
			mode = "100755"
		}
		m[p] = gittest.FileState{Content: data, Mode: mode}
	}
	return m
}

// randomScenario returns a random tree and a random change of it.
func randomScenario(r *rand.Rand) gittest.Pair {
	before := randomTree{content: map[string][]byte{}, exec: map[string]bool{}}
	scale := []int{3, 20, 200, 2000}[r.IntN(4)]
	for i := r.IntN(12) + 1; i > 0; i-- {
		p := randomPath(r)
		before.content[p] = randomContent(r, r.IntN(scale)+1)
		before.exec[p] = r.IntN(8) == 0
	}
	if r.IntN(6) == 0 {
		before.content["bin/blob.bin"] = append([]byte{0, 1, 2}, randomContent(r, r.IntN(50))...)
	}
	// Paths must not be both a file and a directory.
	for p := range before.content {
		for q := range before.content {
			if strings.HasPrefix(q, p+"/") {
				delete(before.content, p)
			}
		}
	}

	after := randomTree{content: map[string][]byte{}, exec: map[string]bool{}}
	for _, p := range sortedKeys(before.content) {
		data := before.content[p]
		after.exec[p] = before.exec[p]
		switch k := r.IntN(10); {
		case k == 0:
			// removed
		case k == 1:
			after.content[p] = data // unchanged
		case k == 2:
			after.content[p] = data
			after.exec[p] = !after.exec[p] // mode change only
		case k == 3 && strings.HasSuffix(p, ".bin"):
			after.content[p] = append([]byte{0}, randomContent(r, r.IntN(80))...)
		default:
			after.content[p] = editContent(r, data, []int{1, 5, 50, 500}[r.IntN(4)])
			if r.IntN(10) == 0 {
				after.exec[p] = !after.exec[p]
			}
		}
	}
	for i := r.IntN(4); i > 0; i-- {
		p := randomPath(r)
		if _, ok := after.content[p]; !ok {
			if r.IntN(8) == 0 {
				after.content[p] = nil // empty new file
			} else {
				after.content[p] = randomContent(r, r.IntN(scale)+1)
			}
			after.exec[p] = r.IntN(8) == 0
		}
	}
	if r.IntN(8) == 0 {
		after.content["bin/new.bin"] = []byte{0, 0, 0}
	}
	// Renames: move a file, possibly editing it a little.
	for _, p := range sortedKeys(after.content) {
		data := after.content[p]
		if r.IntN(6) == 0 && len(data) > 0 && !strings.HasSuffix(p, ".bin") {
			np := randomPath(r) + ".moved"
			if _, ok := after.content[np]; !ok {
				delete(after.content, p)
				if r.IntN(2) == 0 {
					data = editContent(r, data, 1)
				}
				after.content[np] = data
				after.exec[np] = after.exec[p]
			}
			break
		}
	}
	for p := range after.content {
		for q := range after.content {
			if strings.HasPrefix(q, p+"/") {
				delete(after.content, p)
			}
		}
	}
	return gittest.Pair{Old: before.fileStates(), New: after.fileStates()}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestFormatAgainstGit renders random diffs (long and quoted names,
// created, deleted, renamed, binary and mode-changed files, changes from
// 0 to thousands of lines) at many widths and compares with git's --stat=WIDTH
// --summary of the same diff. All scenarios are commits of one repository,
// so that one git log prints them all at a width. -kpatch.cases=N sets the
// number of scenarios, -kpatch.seed the seed.
func TestFormatAgainstGit(t *testing.T) {
	requireGit(t)
	r := rand.New(rand.NewPCG(2023+*gittest.Seed, 1))
	scenarios := gittest.CasesOr(5, 60)
	widths := []int{72, 80, 20, 30, 40, 50, 60, 100, 120, 200}
	var pairs []gittest.Pair
	for s := 0; s < scenarios; s++ {
		pairs = append(pairs, randomScenario(r))
	}
	dir, ids := gittest.ImportPairs(t, pairs)
	compared := 0
	kinds := map[string]int{}
	for _, renames := range []string{"--no-renames", "-M"} {
		files := filesFromLog(t, dir, ids, renames)
		stats := map[int]map[string]string{}
		for _, w := range widths {
			stats[w] = gittest.LogDiffs(t, dir, ids, renames, "--stat="+strconv.Itoa(w), "--summary")
		}
		for s, id := range ids {
			if len(files[id]) == 0 {
				continue
			}
			for _, f := range files[id] {
				switch {
				case f.OldPath != "":
					kinds["renamed"]++
				case f.Created:
					kinds["created"]++
				case f.Removed:
					kinds["removed"]++
				case f.OldMode != f.Mode:
					kinds["mode change"]++
				}
				if f.Binary {
					kinds["binary"]++
				}
				if f.Path != Quote(f.Path) {
					kinds["quoted"]++
				}
			}
			for _, w := range widths {
				want := stats[w][id]
				got := Format(files[id], w)
				if got != want {
					t.Fatalf("scenario %d, %s, width %d: differs from git\n--- git\n%s--- diffstat\n%s\nfiles: %+v", s, renames, w, want, got, files[id])
				}
				compared++
			}
		}
	}
	// format-patch's own default width and layout.
	files := filesFromLog(t, dir, ids)
	patches := formatPatches(t, dir, ids)
	for s, id := range ids {
		if len(files[id]) > 0 {
			want := statBlock(t, patches[id])
			if got := Format(files[id], MailWidth); got != want {
				t.Fatalf("scenario %d, format-patch: differs from git\n--- git\n%s--- diffstat\n%s", s, want, got)
			}
			compared++
		}
	}
	t.Logf("%d diffstats compared with git; files seen: %v", compared, kinds)
}

// formatPatches runs one git format-patch over the commits ids (each
// against its parent) and returns each commit's mail.
func formatPatches(t testing.TB, dir string, ids []string) map[string]string {
	t.Helper()
	args := []string{"format-patch", "--stdout", "--no-walk"}
	out := runGit(t, dir, append(args, ids...)...)
	type at struct {
		id  string
		pos int
	}
	var starts []at
	for _, id := range ids {
		i := strings.Index(out, "From "+id+" Mon Sep 17 00:00:00 2001\n")
		if i < 0 {
			t.Fatalf("git format-patch wrote no mail for %s", id)
		}
		starts = append(starts, at{id, i})
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].pos < starts[j].pos })
	mails := map[string]string{}
	for i, s := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1].pos
		}
		mails[s.id] = out[s.pos:end]
	}
	for _, id := range ids {
		if _, ok := mails[id]; !ok {
			t.Fatalf("git format-patch wrote no mail for %s", id)
		}
	}
	return mails
}

// statBlock extracts the diffstat of a git format-patch mail: the lines
// between the "---" separator and the blank line before the first diff.
func statBlock(t testing.TB, patch string) string {
	t.Helper()
	i := strings.Index(patch, "\n---\n")
	if i < 0 {
		t.Fatalf("no --- separator in\n%s", patch)
	}
	rest := patch[i+len("\n---\n"):]
	j := strings.Index(rest, "\n\ndiff --git ")
	if j < 0 {
		t.Fatalf("no diff after the stat in\n%s", patch)
	}
	return rest[:j+1]
}

func requireGit(t testing.TB) { gittest.Require(t) }

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return string(gittest.Run(t, dir, args...))
}
