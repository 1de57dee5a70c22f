package gitdb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kpatch/internal/gittest"
)

// repo makes a small repository with git: three commits on master (the
// middle one a merge), an annotated tag, a lightweight tag, a tag of a
// tree, a branch and a remote-tracking ref.
// Each call returns a new copy of one repository made once per test
// process (gittest.Template).
func repo(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	return gittest.Template(t, "gitdb repository", buildRepo)
}

func buildRepo(t testing.TB, dir string) {
	run := func(args ...string) string { return strings.TrimSpace(string(gittest.Run(t, dir, args...))) }
	run("init", "-q", "-b", "master")
	write := func(name, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README", "one\n")
	write("kernel/fork.c", "int fork;\n")
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	run("tag", "-a", "-m", "version 1", "v1")
	run("checkout", "-q", "-b", "side")
	write("side.c", "side\n")
	run("add", "-A")
	run("commit", "-q", "-m", "side")
	run("checkout", "-q", "master")
	write("README", "two\n")
	run("commit", "-q", "-am", "two")
	run("merge", "-q", "--no-ff", "-m", "merge side", "side")
	write("README", "three\n")
	run("commit", "-q", "-am", "three")
	run("tag", "light")
	run("tag", "-a", "-m", "a tree", "treetag", "HEAD^{tree}")
	run("update-ref", "refs/remotes/origin/master", "HEAD~1")
}

func TestMain(m *testing.M) {
	code := m.Run()
	gittest.RemoveTemplates()
	os.Exit(code)
}

// gitRevParse is what git says of rev: the commit, or "" when it refuses.
func gitRevParse(t *testing.T, dir, rev string) string {
	cmd := exec.Command("git", "rev-parse", "-q", "--verify", "--end-of-options", rev+"^{commit}")
	cmd.Dir = dir
	cmd.Env = gittest.Environ(dir)
	out, err := cmd.Output()
	if err != nil || bytes.HasPrefix(out, []byte("^")) {
		return "" // "^HEAD" is a negation, not a commit
	}
	return strings.TrimSpace(string(out))
}

// TestResolveCommitAsGit checks that ResolveCommit accepts what git
// rev-parse --verify REV^{commit} accepts, gives the same commit, and
// refuses what git refuses, in a repository and in a --shared clone of it.
// The reflog and message-search forms, which git accepts, are refused as
// unsupported (not misread).
func TestResolveCommitAsGit(t *testing.T) {
	dir := repo(t)
	head := gitRevParse(t, dir, "HEAD")
	v1 := gitRevParse(t, dir, "v1")
	treeID := strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", "HEAD^{tree}")))
	blobID := strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", "HEAD:README")))
	tagObj := strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", "v1")))
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, dir, "clone", "-q", "--shared", "--no-checkout", dir, clone)
	revs := []string{
		"HEAD", "@", "master", "side", "v1", "light", "refs/tags/v1", "tags/v1", "heads/master",
		"origin/master", "origin", "remotes/origin/master", "treetag", "treetag^{}", "treetag^{tree}",
		head, strings.ToUpper(head), head[:12], head[:4], v1[:7], strings.ToUpper(v1[:9]), head[:3],
		tagObj, tagObj[:10], treeID, treeID[:10], blobID, blobID[:10],
		"HEAD^", "HEAD^1", "HEAD^0", "HEAD^^", "HEAD~", "HEAD~2", "HEAD~3", "HEAD~9", "HEAD~1^2", "HEAD~1^3",
		"HEAD^2", "@^", "v1^{}", "v1^{commit}", "v1^{tag}", "v1~0^{tag}", "v1^0^{tag}", "v1~0", "light^{tag}", "v1^{object}", "v1^{tree}",
		"v1^{blob}", "HEAD^{tree}", "v1:README", "v1:no/such", "HEAD:", ":README", "v1^{nosuch}",
		"v1^{", "HEAD^x", "HEAD~x", "v1-3-g" + head[:7], "v1-3-g" + head[:3], "x-g" + blobID[:8],
		"HEAD..master", "^HEAD", "HEAD^!", "HEAD^@", "HEAD^-", "-x", "", "nosuch", "refs/heads",
		"master ", "mas ter", ":/three", "0000000000000000000000000000000000000000",
		"deadbeef", "ORIG_HEAD", "FETCH_HEAD", ".git", "../x", "v1.lock", "side/", "/side",
	}
	for _, where := range []struct{ name, dir string }{{"repository", dir}, {"shared clone", clone}} {
		gitDir := filepath.Join(where.dir, ".git")
		db, err := Open(gitDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, rev := range revs {
			want := gitRevParse(t, where.dir, rev)
			h, err := db.ResolveCommit(rev)
			got := ""
			if err == nil {
				got = h.String()
			}
			if got != want {
				t.Errorf("%s: %q: got %q (%v), git says %q", where.name, rev, got, err, want)
			}
			if err != nil && (strings.Contains(err.Error(), "\n") || errors.Is(err, ErrDamaged)) {
				t.Errorf("%s: %q: error %q: want one line, not damage", where.name, rev, err)
			}
		}
		for _, rev := range []string{"HEAD@{0}", "master@{1}", "@{-1}", "HEAD^{/one}", ":/one"} {
			if _, err := db.ResolveCommit(rev); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %q: %v, want ErrUnsupported", where.name, rev, err)
			}
		}
		db.Close()
	}
}

// looseObject writes an object as git does and returns its id.
func looseObject(t *testing.T, objects, typ string, content []byte) Hash {
	t.Helper()
	raw := append([]byte(fmt.Sprintf("%s %d\x00", typ, len(content))), content...)
	h := Hash(sha1.Sum(raw))
	hx := h.String()
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	os.MkdirAll(filepath.Join(objects, hx[:2]), 0o755)
	if err := os.WriteFile(filepath.Join(objects, hx[:2], hx[2:]), b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestAmbiguousShortIDs makes objects whose ids share their first 4 hex
// digits (commits with commits, a blob with a commit) and checks that
// abbreviations resolve, or are refused, as git does, also through a
// --shared clone (where all the objects are the alternate's).
func TestAmbiguousShortIDs(t *testing.T) {
	dir := repo(t)
	objects := filepath.Join(dir, ".git", "objects")
	tree := strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", "HEAD^{tree}")))
	head := strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", "HEAD")))
	// Two commits sharing a 4-digit prefix: hash candidates in memory,
	// write only the pair.
	commit := func(i int) []byte {
		return []byte(fmt.Sprintf("tree %s\nparent %s\nauthor t <t@example.com> 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\n\nc%d\n", tree, head, i))
	}
	id := func(typ string, c []byte) string {
		return fmt.Sprintf("%x", sha1.Sum(append([]byte(fmt.Sprintf("%s %d\x00", typ, len(c))), c...)))
	}
	seen := map[string]int{}
	var c1, c2 Hash
	for i := 0; ; i++ {
		p := id("commit", commit(i))[:4]
		if j, ok := seen[p]; ok {
			c1 = looseObject(t, objects, "commit", commit(j))
			c2 = looseObject(t, objects, "commit", commit(i))
			break
		}
		seen[p] = i
	}
	// A blob sharing its first 4 digits with c1 only (git then takes the
	// commit), and one sharing 5 with c2 (found by trying contents).
	var blob Hash
	for i := 0; ; i++ {
		c := []byte(fmt.Sprintf("blob %d\n", i))
		hx := id("blob", c)
		if hx[:4] == c1.String()[:4] && hx[:5] != c2.String()[:5] {
			blob = looseObject(t, objects, "blob", c)
			break
		}
	}
	clone := filepath.Join(t.TempDir(), "clone")
	gittest.Run(t, dir, "clone", "-q", "--shared", "--no-checkout", dir, clone)
	revs := []string{c1.String()[:4], c1.String()[:12], c2.String()[:12], blob.String()[:4], blob.String()[:12]}
	for i := 5; i <= 8; i++ {
		revs = append(revs, c1.String()[:i], blob.String()[:i])
	}
	for _, d := range []string{dir, clone} {
		db, err := Open(filepath.Join(d, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		for _, rev := range revs {
			want := gitRevParse(t, d, rev)
			h, err := db.ResolveCommit(rev)
			got := ""
			if err == nil {
				got = h.String()
			}
			if got != want {
				t.Errorf("%s: %q: got %q (%v), git says %q", d, rev, got, err, want)
			}
		}
		if _, err := db.ResolveCommit(c1.String()[:4]); !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), c2.String()[:12]) {
			t.Errorf("%s: two commits: %v, want ErrAmbiguous naming both", d, err)
		}
		db.Close()
	}
}

// TestReadPacked reads every object of a repository packed with deltas
// (offset deltas, then reference deltas) and compares it with git
// cat-file, also through a --shared clone.
func TestReadPacked(t *testing.T) {
	dir := repo(t)
	// Versions of a growing file and of a directory, so that the pack
	// holds deltas of blobs and of trees.
	// One git fast-import makes the 30 commits on master.
	var text, stream strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&text, "line %d of a file that grows a little with every commit\n", i)
		msg := fmt.Sprint("grow ", i)
		fmt.Fprintf(&stream, "commit refs/heads/master\ncommitter t <t@example.com> %d +0000\ndata %d\n%s\n", 1700000000+i, len(msg), msg)
		if i == 0 {
			stream.WriteString("from refs/heads/master^0\n")
		}
		fmt.Fprintf(&stream, "M 100644 inline grow.txt\ndata %d\n%s\n", text.Len(), text.String())
		fmt.Fprintf(&stream, "M 100644 inline f%02d\ndata 2\nx\n\n", i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(string(gittest.Run(t, dir, "rev-list", "--count", "master~30..master"))); n != "30" {
		t.Fatalf("%s commits on master, want 30", n)
	}
	for _, ofs := range []string{"true", "false"} {
		gittest.Run(t, dir, "-c", "repack.useDeltaBaseOffset="+ofs, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=50")
		verify := string(gittest.Run(t, dir, "verify-pack", "-v", filepath.Join(dir, ".git/objects/pack", packName(t, dir))))
		if !strings.Contains(verify, "chain length = 2") {
			t.Fatalf("the pack has no delta chains:\n%s", verify)
		}
		list := strings.Fields(string(gittest.Run(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")))
		clone := filepath.Join(t.TempDir(), "clone")
		gittest.Run(t, dir, "clone", "-q", "--shared", "--no-checkout", dir, clone)
		for _, d := range []string{dir, clone} {
			db, err := Open(filepath.Join(d, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			want := gittest.CatFile(t, d, list)
			for _, hx := range list {
				h, _ := ParseHash(hx)
				typ, data, err := db.Read(h)
				if err != nil {
					t.Fatalf("delta base offset %s: %s: %v", ofs, hx, err)
				}
				if w, ok := want[hx]; !ok || typ.String() != w.Type || !bytes.Equal(data, w.Data) {
					t.Errorf("delta base offset %s: %s: got %s of %d bytes, git %s of %d", ofs, hx, typ, len(data), w.Type, len(w.Data))
				}
			}
			// Read inflates without holding the DB's lock: the same
			// objects read at once by several goroutines, while another
			// resolves revisions (which reads under the lock).
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range list {
						hx := list[(i+g*7)%len(list)]
						h, _ := ParseHash(hx)
						typ, data, err := db.Read(h)
						if w := want[hx]; err != nil || typ.String() != w.Type || !bytes.Equal(data, w.Data) {
							errs <- fmt.Errorf("concurrent read of %s: %s of %d bytes, %v", hx, typ, len(data), err)
							return
						}
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 30; i++ {
					if _, err := db.ResolveCommit(fmt.Sprintf("HEAD~%d", i)); err != nil {
						errs <- err
						return
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("delta base offset %s: %v", ofs, err)
			}
			db.Close()
		}
	}
}

func packName(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/pack-*.idx"))
	if len(m) != 1 {
		t.Fatalf("want one pack, have %v", m)
	}
	return filepath.Base(m[0])
}

// TestWrite writes a blob, a tree and a commit as loose objects and a new
// branch, then checks with git that they read back, that the repository
// is sound, that an existing branch (loose or packed) is refused, and that
// a held lock is reported.
func TestWrite(t *testing.T) {
	dir := repo(t)
	db, err := Open(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blob, err := db.WriteObject(Blob, []byte("new file\n"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "hash-object", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("new file\n")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != blob.String() {
		t.Fatalf("blob %s, git hash-object %s (%v)", blob, out, err)
	}
	tree, err := db.WriteObject(Tree, append([]byte("100644 new\x00"), blob[:]...))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := db.Ref("HEAD")
	commit, err := db.WriteObject(Commit, []byte("tree "+tree.String()+"\nparent "+head.String()+
		"\nauthor t <t@example.com> 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\n\nnew\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRef("refs/heads/new", commit); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(gittest.Run(t, dir, "show", "new:new"))); got != "new file" {
		t.Errorf("git show new:new = %q", got)
	}
	gittest.Run(t, dir, "fsck", "--strict")
	if err := db.CreateRef("refs/heads/new", commit); !errors.Is(err, ErrRefExists) {
		t.Errorf("an existing branch: %v", err)
	}
	gittest.Run(t, dir, "pack-refs", "--all")
	if err := db.CreateRef("refs/heads/side", commit); !errors.Is(err, ErrRefExists) {
		t.Errorf("an existing packed branch: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ".git/refs/heads/locked.lock"), nil, 0o644)
	if err := db.CreateRef("refs/heads/locked", commit); err == nil || !strings.Contains(err.Error(), "locked.lock exists") {
		t.Errorf("a held lock: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git/refs/heads/locked")); err == nil {
		t.Error("the ref was written despite the lock")
	}
}
