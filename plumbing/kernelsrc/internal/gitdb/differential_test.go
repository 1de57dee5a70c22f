package gitdb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// gitBatch runs git cat-file with the given options on input and
// returns its output.
func gitBatch(t *testing.T, dir, input string, options ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", append([]string{"cat-file"}, options...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file %s: %v", options, err)
	}
	return out
}

// TestDifferential reads every object of random histories of real kernel
// files with Read and resolves random revision expressions (full,
// abbreviated and upper-case ids, branches and tags with ~N, ^N, ^{...})
// with ResolveCommit, and compares with git cat-file --batch; the
// repository is read as git fast-import packed it, repacked with deep
// delta chains, and with every object loose. -kpatch.cases=N sets the
// number of commits.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(*gittest.Seed, 13))
	commits := gittest.CasesOr(60, 600)
	h := gittest.Generate(t, r, gittest.KernelSources(t, r, 10), []string{"one", "two"}, commits/2)
	dir := h.Dir
	var ids []string
	var light strings.Builder // lightweight tags, in one git update-ref
	for _, b := range []string{"one", "two"} {
		for i, c := range h.Branches[b] {
			ids = append(ids, c.ID)
			switch i % 7 {
			case 3:
				fmt.Fprintf(&light, "create refs/tags/light-%s-%d %s\n", b, i, c.ID)
			case 5: // loose tag objects beside the pack
				gittest.Run(t, dir, "tag", "-a", "-m", "tag", fmt.Sprintf("v%s.%d", b, i), c.ID)
			}
		}
	}
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(light.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-ref --stdin: %v\n%s", err, out)
	}
	refs := strings.Fields(string(gittest.Run(t, dir, "for-each-ref", "--format=%(refname:short)")))
	var revs []string
	for n := 0; n < 4*commits; n++ {
		var rev string
		switch r.IntN(4) {
		case 0:
			rev = ids[r.IntN(len(ids))]
			rev = rev[:4+r.IntN(37)]
			if r.IntN(4) == 0 {
				rev = strings.ToUpper(rev)
			}
		default:
			rev = refs[r.IntN(len(refs))]
		}
		for k := r.IntN(3); k > 0; k-- {
			rev += []string{"~", "^", "^0", "^1", "^2", "^{}", "^{commit}", "^{tag}", "^{tree}", "~" + strconv.Itoa(r.IntN(8))}[r.IntN(10)]
		}
		revs = append(revs, rev)
	}

	loose := filepath.Join(t.TempDir(), "loose")
	gittest.Run(t, "", "init", "-q", loose)
	check := func(t *testing.T, gitDir string, withRevs bool) {
		db, err := Open(gitDir)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		out := bufio.NewReader(bytes.NewReader(gitBatch(t, dir, string(gitBatch(t, dir, "", "--batch-all-objects", "--batch-check=%(objectname)")), "--batch")))
		objects := 0
		for {
			header, err := out.ReadString('\n')
			if err != nil {
				break
			}
			f := strings.Fields(header)
			size, _ := strconv.Atoi(f[2])
			content := make([]byte, size+1)
			if _, err := io.ReadFull(out, content); err != nil {
				t.Fatal(err)
			}
			content = content[:size]
			id, _ := ParseHash(f[0])
			typ, data, err := db.Read(id)
			objects++
			if err != nil || typ.String() != f[1] || !bytes.Equal(data, content) {
				t.Errorf("seed %d: object %s: %v %s, %d bytes; git: %s, %d bytes", *gittest.Seed, f[0], err, typ, len(data), f[1], size)
			}
		}
		if objects < commits {
			t.Errorf("only %d objects compared", objects)
		}
		if !withRevs {
			t.Logf("%d objects compared with git cat-file", objects)
			return
		}
		var in strings.Builder
		for _, rev := range revs {
			in.WriteString(rev + "^{commit}\n")
		}
		lines := strings.Split(strings.TrimSuffix(string(gitBatch(t, dir, in.String(), "--batch-check")), "\n"), "\n")
		for i, rev := range revs {
			want := ""
			if f := strings.Fields(lines[i]); len(f) == 3 && f[1] == "commit" {
				want = f[0]
			}
			got := ""
			if h, err := db.ResolveCommit(rev); err == nil {
				got = h.String()
			}
			if got != want {
				t.Errorf("seed %d: %q: got %q, git %q (%s)", *gittest.Seed, rev, got, want, lines[i])
			}
		}
		t.Logf("%d objects and %d revisions compared with git cat-file", objects, len(revs))
	}
	t.Run("fast-import pack", func(t *testing.T) { check(t, filepath.Join(dir, ".git"), true) })
	gittest.Run(t, dir, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=50")
	t.Run("repacked", func(t *testing.T) { check(t, filepath.Join(dir, ".git"), true) })
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "unpack-objects", "-q")
		cmd.Dir, cmd.Env, cmd.Stdin = loose, gittest.Environ(loose), f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git unpack-objects: %v\n%s", err, out)
		}
		f.Close()
	}
	t.Run("loose", func(t *testing.T) { check(t, filepath.Join(loose, ".git"), false) })
}
