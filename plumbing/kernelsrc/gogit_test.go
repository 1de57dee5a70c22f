package kernelsrc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"kpatch/internal/gittest"
)

// TestAgreesWithGoGit reads trees with kpatch's reader and with go-git,
// an independent implementation, and requires the same commit, the same
// entries (names, modes, ids) and the same file contents: on a repository
// whose history makes deltas (loose, then repacked with deep delta chains,
// then through a --shared clone's alternates), and on the directories of
// the Debian 6.12 tree that the series edits.
func TestAgreesWithGoGit(t *testing.T) {
	gittest.Require(t)
	hist := deltaHistory(t)
	shared := filepath.Join(t.TempDir(), "shared")
	gittest.Run(t, "", "clone", "-q", "--shared", "--no-checkout", hist, shared)
	packed := filepath.Join(t.TempDir(), "packed")
	gittest.Run(t, "", "clone", "-q", "--no-local", "--no-checkout", hist, packed)
	gittest.Run(t, packed, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=250")
	for _, tc := range []struct {
		name, dir string
		revs      []string
		dirs      []string // "" is the whole tree
	}{
		{"loose", hist, []string{"v1", "v2", "master", "master~3"}, []string{""}},
		{"packed with deltas", packed, []string{"v1", "v2", "origin/master", "origin/master~3"}, []string{""}},
		{"shared clone", shared, []string{"v1", "v2", "origin/master~1"}, []string{""}},
		{"Debian 6.12", debianTree(t), []string{"v6.12"}, []string{"kernel/events", "kernel/exit.c", "kernel/fork.c", "arch/x86/kernel", "arch/x86/events", "include/linux/sched.h", "MAINTAINERS", "arch/Kconfig"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := openGoGit(t, tc.dir)
			for _, rev := range tc.revs {
				tr, err := OpenGit(tc.dir, rev)
				if err != nil {
					t.Fatalf("%s: %v", rev, err)
				}
				h, err := repo.ResolveRevision(plumbing.Revision(rev))
				if err != nil {
					t.Fatalf("go-git %s: %v", rev, err)
				}
				if tr.Commit.String() != h.String() {
					t.Fatalf("%s: kpatch resolves %s, go-git %s", rev, tr.Commit, h)
				}
				c, err := repo.CommitObject(*h)
				if err != nil {
					t.Fatal(err)
				}
				root, err := c.Tree()
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, d := range tc.dirs {
					n += compareTrees(t, tr, root, d)
				}
				if n == 0 {
					t.Fatalf("%s: compared no file", rev)
				}
			}
		})
	}
}

// openGoGit opens dir with go-git, following objects/info/alternates
// (go-git reads them only when given a file system to resolve them in).
func openGoGit(t *testing.T, dir string) *git.Repository {
	t.Helper()
	st := filesystem.NewStorageWithOptions(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRUDefault(),
		filesystem.Options{AlternatesFS: osfs.New("/", osfs.WithBoundOS())})
	repo, err := git.Open(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// compareTrees compares path (a directory or a file; "" the top) of tr
// with go-git's tree and returns the number of files compared.
func compareTrees(t *testing.T, tr *Tree, root *object.Tree, path string) int {
	t.Helper()
	if path != "" && !tr.IsDir(path) {
		f, err := root.File(path)
		if err != nil {
			t.Fatalf("go-git %s: %v", path, err)
		}
		compareFile(t, tr, f, path)
		return 1
	}
	sub := root
	if path != "" {
		var err error
		if sub, err = root.Tree(path); err != nil {
			t.Fatalf("go-git %s: %v", path, err)
		}
	}
	ents, err := tr.Entries(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(sub.Entries) {
		t.Fatalf("%s/: kpatch lists %d entries, go-git %d", path, len(ents), len(sub.Entries))
	}
	n := 0
	for i, e := range ents {
		g := sub.Entries[i]
		if e.Name != g.Name || e.Mode != uint32(g.Mode) || e.Hash.String() != g.Hash.String() {
			t.Fatalf("%s/ entry %d: kpatch %s %o %s, go-git %s %o %s", path, i, e.Name, e.Mode, e.Hash, g.Name, uint32(g.Mode), g.Hash)
		}
		p := strings.TrimPrefix(path+"/"+e.Name, "/")
		if e.IsDir() {
			n += compareTrees(t, tr, root, p)
			continue
		}
		f, err := root.File(p)
		if err != nil {
			t.Fatalf("go-git %s: %v", p, err)
		}
		compareFile(t, tr, f, p)
		n++
	}
	return n
}

func compareFile(t *testing.T, tr *Tree, f *object.File, path string) {
	t.Helper()
	r, err := f.Reader()
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.ReadFile(path)
	if err != nil {
		t.Fatalf("kpatch %s: %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: kpatch reads %d bytes, go-git %d, and they differ", path, len(got), len(want))
	}
}

// deltaHistory makes a kernel-like repository with a history of small
// edits to large files (so that a repack stores deltas), a file that is
// renamed and one that is removed, tags v1 and v2.
func deltaHistory(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "linux")
	gittest.Run(t, "", "init", "-q", "-b", "master", dir)
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range kernelFiles {
		write(name, content)
	}
	var big strings.Builder
	for i := 0; i < 4000; i++ {
		fmt.Fprintf(&big, "int line_%d(void) { return %d; }\n", i, i*7)
	}
	for step := 0; step < 8; step++ {
		text := strings.Replace(big.String(), fmt.Sprintf("line_%d(", step*300), fmt.Sprintf("changed_%d(", step), 1)
		write("kernel/big.c", text)
		write(fmt.Sprintf("drivers/d%d/Kconfig", step), fmt.Sprintf("config D%d\n\tbool\n", step))
		switch step {
		case 3:
			gittest.Run(t, dir, "add", "-A")
			gittest.Run(t, dir, "mv", "drivers/d0", "drivers/renamed")
		case 5:
			gittest.Run(t, dir, "add", "-A")
			gittest.Run(t, dir, "rm", "-q", "-r", "drivers/d1")
		}
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", fmt.Sprintf("step %d", step))
		switch step {
		case 2:
			gittest.Run(t, dir, "tag", "-a", "-m", "Linux 1", "v1")
		case 6:
			gittest.Run(t, dir, "tag", "v2")
		}
	}
	return dir
}

// TestRefNamesAgreeWithGoGit lists the references of a repository with
// loose and packed ones (and one that is both) with kpatch's reader and
// with go-git, and checks BranchConflict on names git refuses beside them.
func TestRefNamesAgreeWithGoGit(t *testing.T) {
	gittest.Require(t)
	dir := deltaHistory(t)
	gittest.Run(t, dir, "branch", "topic")
	gittest.Run(t, dir, "branch", "fix/one")
	gittest.Run(t, dir, "pack-refs", "--all")
	gittest.Run(t, dir, "branch", "fix/two")
	gittest.Run(t, dir, "branch", "-f", "topic", "master~1") // loose over packed
	tr, err := OpenGit(dir, "v2")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.db.RefNames()
	if err != nil {
		t.Fatal(err)
	}
	refs, err := openGoGit(t, dir).References()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	refs.ForEach(func(r *plumbing.Reference) error {
		if n := r.Name().String(); strings.HasPrefix(n, "refs/") {
			want = append(want, n)
		}
		return nil
	})
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("kpatch lists %q, go-git %q", got, want)
	}
	for _, tc := range []struct{ name, conflict string }{
		{"topic/v11", "refs/heads/topic"},
		{"fix", "refs/heads/fix/one"},
		{"fix/two/x", "refs/heads/fix/two"},
		{"fix/three", ""},
		{"new", ""},
	} {
		c, err := tr.BranchConflict(tc.name)
		if err != nil || c != tc.conflict {
			t.Errorf("BranchConflict(%q) = %q, %v; want %q", tc.name, c, err, tc.conflict)
		}
	}
}
