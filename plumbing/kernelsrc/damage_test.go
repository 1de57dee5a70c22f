package kernelsrc

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// kernelFiles are the files of the synthetic kernel-like tree.
var kernelFiles = map[string]string{
	"MAINTAINERS":      "THE REST\nM:\tLinus Torvalds <torvalds@linux-foundation.org>\nF:\t*\n",
	"Kconfig":          "source \"arch/$(SRCARCH)/Kconfig\"\n",
	"Makefile":         "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\n",
	"kernel/fork.c":    "// SPDX-License-Identifier: GPL-2.0-only\nint fork;\n",
	"kernel/Makefile":  "obj-y = fork.o\n",
	"arch/x86/Kconfig": "config X86\n\tdef_bool y\n",
}

// SyntheticKernel makes a small git repository with the files every
// kernel tree has, tagged v1 (annotated); packed, it is repacked into one
// pack with no loose objects left.
func syntheticKernel(t *testing.T, packed bool) string {
	t.Helper()
	gittest.Require(t)
	name := "synthetic kernel, loose"
	if packed {
		name = "synthetic kernel, packed"
	}
	// Each call copies a repository git made once per test process.
	return filepath.Join(gittest.Template(t, name, func(t testing.TB, top string) {
		dir := filepath.Join(top, "linux")
		os.MkdirAll(dir, 0o755)
		gittest.Run(t, dir, "init", "-q", "-b", "master")
		for name, content := range kernelFiles {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", "Linux 1")
		gittest.Run(t, dir, "tag", "-a", "-m", "Linux 1", "v1")
		if packed {
			gittest.Run(t, dir, "repack", "-q", "-a", "-d")
			gittest.Run(t, dir, "prune-packed")
		}
	}), "linux")
}

func TestMain(m *testing.M) {
	code := m.Run()
	gittest.RemoveTemplates()
	os.Exit(code)
}

// snapshot summarises a directory, .git included (names, modes, sizes,
// times and contents), to prove that reading it changed nothing.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		st, err := os.Lstat(n)
		if err != nil {
			continue
		}
		fmt.Fprintf(h, "%s %v %d %d\n", n, st.Mode(), st.Size(), st.ModTime().UnixNano())
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(n)
			h.Write(b)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func revParse(t *testing.T, dir, rev string) string {
	t.Helper()
	return strings.TrimSpace(string(gittest.Run(t, dir, "rev-parse", rev)))
}

// looseFile is the file of a loose object.
func looseFile(dir, id string) string {
	return filepath.Join(dir, ".git", "objects", id[:2], id[2:])
}

func onePack(t *testing.T, dir, ext string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/pack-*."+ext))
	if len(m) != 1 {
		t.Fatalf("want one .%s, have %v", ext, m)
	}
	return m[0]
}

// DamageCase is one way a repository can be damaged, made on a throwaway
// copy.
type damageCase struct {
	name   string
	packed bool
	shared bool // damage a --shared clone of the repository instead
	// damage breaks dir (the clone when shared; src is what it borrows
	// from) and returns the words the error must contain.
	damage func(t *testing.T, dir, src string) []string
	// read: the damage shows only when the file is read, not at Open.
	read string
}

func damageCases() []damageCase {
	return []damageCase{
		{name: "pack without its .idx", packed: true, damage: func(t *testing.T, dir, _ string) []string {
			idx := onePack(t, dir, "idx")
			os.Remove(idx)
			return []string{"refs/tags/v1: object ", strings.TrimSuffix(filepath.Base(idx), ".idx") + ".pack has no index"}
		}},
		{name: "truncated pack", packed: true, damage: func(t *testing.T, dir, _ string) []string {
			p := onePack(t, dir, "pack")
			st, _ := os.Stat(p)
			os.Chmod(p, 0o644)
			if err := os.Truncate(p, st.Size()-30); err != nil {
				t.Fatal(err)
			}
			return []string{filepath.Base(p), "truncated"}
		}},
		{name: "truncated pack index", packed: true, damage: func(t *testing.T, dir, _ string) []string {
			p := onePack(t, dir, "idx")
			os.Chmod(p, 0o644)
			if err := os.Truncate(p, 500); err != nil {
				t.Fatal(err)
			}
			return []string{filepath.Base(p), "pack index"}
		}},
		{name: "corrupt loose commit", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1^{commit}")
			f := looseFile(dir, id)
			os.Chmod(f, 0o644)
			os.WriteFile(f, []byte("this is not zlib data"), 0o444)
			return []string{"object " + id, "zlib"}
		}},
		{name: "corrupt commit in a pack", packed: true, damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1^{commit}")
			off := packOffset(t, dir, id)
			p := onePack(t, dir, "pack")
			os.Chmod(p, 0o644)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// Past the object's header, into its deflated data.
			if _, err := f.WriteAt([]byte{0xff, 0xff, 0xff, 0xff}, off+6); err != nil {
				t.Fatal(err)
			}
			return []string{"object " + id, filepath.Base(p)}
		}},
		{name: "commit that is not a commit", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1^{commit}")
			f := looseFile(dir, id)
			os.Chmod(f, 0o644)
			os.WriteFile(f, zlibOf("commit 5\x00junk\n"), 0o444)
			return []string{"object " + id, "hash mismatch"}
		}},
		{name: "tag pointing to a missing commit", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1^{commit}")
			os.Remove(looseFile(dir, id))
			return []string{"points to object " + id + ", which is missing"}
		}},
		{name: "missing top tree", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1^{tree}")
			os.Remove(looseFile(dir, id))
			return []string{"tree " + id, "is missing"}
		}},
		{name: "missing subtree", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1:kernel")
			os.Remove(looseFile(dir, id))
			return []string{"tree " + id + " (kernel/ at v1) is missing"}
		}},
		{name: "missing blob", read: "MAINTAINERS", damage: func(t *testing.T, dir, _ string) []string {
			id := revParse(t, dir, "v1:MAINTAINERS")
			os.Remove(looseFile(dir, id))
			return []string{"blob " + id + " (MAINTAINERS at v1) is missing"}
		}},
		{name: "broken reference", damage: func(t *testing.T, dir, _ string) []string {
			os.WriteFile(filepath.Join(dir, ".git/refs/tags/v1"), []byte("garbage\n"), 0o644)
			return []string{"reference refs/tags/v1", "not an object id"}
		}},
		{name: "packed-refs with a 2 MB line", damage: func(t *testing.T, dir, _ string) []string {
			gittest.Run(t, dir, "pack-refs", "--all")
			f := filepath.Join(dir, ".git/packed-refs")
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			head, rest, _ := strings.Cut(string(b), "\n") // the "# pack-refs" line first
			os.WriteFile(f, []byte(head+"\n"+strings.Repeat("x", 2<<20)+"\n"+rest), 0o644)
			return []string{"packed-refs:2: not \"<id> <name>\""}
		}},
		{name: "alternates naming a missing directory", shared: true, packed: true, damage: func(t *testing.T, dir, _ string) []string {
			os.WriteFile(filepath.Join(dir, ".git/objects/info/alternates"), []byte("/nonexistent/objects\n"), 0o644)
			return []string{"alternates names /nonexistent/objects"}
		}},
		{name: "unreadable alternates", shared: true, packed: true, damage: func(t *testing.T, dir, _ string) []string {
			alt := filepath.Join(dir, ".git/objects/info/alternates")
			os.Remove(alt)
			os.Mkdir(alt, 0o755) // a directory where the file should be
			return []string{alt}
		}},
		{name: "pack of the alternate without its .idx", shared: true, packed: true, damage: func(t *testing.T, _, src string) []string {
			idx := onePack(t, src, "idx")
			os.Remove(idx)
			return []string{"has no index"}
		}},
	}
}

func zlibOf(s string) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// packOffset is the offset of object id in the repository's one pack.
func packOffset(t *testing.T, dir, id string) int64 {
	t.Helper()
	out := gittest.Run(t, dir, "verify-pack", "-v", onePack(t, dir, "idx"))
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == id {
			var off int64
			fmt.Sscan(f[4], &off)
			return off
		}
	}
	t.Fatalf("%s not in the pack", id)
	return 0
}

// TestDamage damages throwaway copies of a small repository in every way
// git fsck reports and checks that kpatch says the repository is damaged,
// in one line naming the object or file, and leaves it as it was.
func TestDamage(t *testing.T) {
	for _, tc := range damageCases() {
		t.Run(tc.name, func(t *testing.T) {
			src := syntheticKernel(t, tc.packed)
			dir := src
			if tc.shared {
				dir = filepath.Join(t.TempDir(), "clone")
				gittest.Run(t, src, "clone", "-q", "--shared", src, dir)
			}
			want := tc.damage(t, dir, src)
			before := snapshot(t, dir)
			beforeSrc := snapshot(t, src)
			tr, err := Open(dir, "v1", false)
			if tc.read != "" {
				if err != nil {
					t.Fatalf("Open: %v (the damage should show only when %s is read)", err, tc.read)
				}
				_, err = tr.ReadFile(tc.read)
			}
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("got %v, want ErrDamaged", err)
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, dir+": repository is damaged or unreadable: ") || !strings.Contains(msg, "git fsck") {
				t.Errorf("message %q: want one line %q... naming the cause and advising git fsck", msg, dir+": repository is damaged or unreadable: ")
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if errors.Is(err, ErrUnknownRev) || errors.Is(err, ErrNotKernel) || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("damage reported as something else: %v", err)
			}
			if snapshot(t, dir) != before || snapshot(t, src) != beforeSrc {
				t.Error("reading the repository changed it")
			}
			// git agrees that the repository is damaged.
			cmd := exec.Command("git", "fsck", "--no-dangling")
			cmd.Dir = dir
			cmd.Env = gittest.Environ(dir)
			if out, err := cmd.CombinedOutput(); err == nil && !strings.Contains(string(out), "error") {
				t.Errorf("git fsck finds nothing wrong:\n%s", out)
			}
		})
	}
}

// TestUndamaged checks the synthetic repository reads, and that a bad
// revision is not reported as damage.
func TestUndamaged(t *testing.T) {
	for _, packed := range []bool{false, true} {
		dir := syntheticKernel(t, packed)
		tr, err := Open(dir, "v1", false)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range kernelFiles {
			if b, err := tr.ReadFile(name); err != nil || string(b) != content {
				t.Errorf("packed %v: %s: %q, %v", packed, name, b, err)
			}
		}
		if tr.Commit.String() != revParse(t, dir, "v1^{commit}") {
			t.Errorf("commit %s", tr.Commit)
		}
		if tr.Mode("kernel/fork.c") != "100644" || !tr.IsDir("arch/x86") || tr.IsDir("Kconfig") || tr.Err() != nil {
			t.Errorf("Mode, IsDir or Err wrong (%v)", tr.Err())
		}
		for _, rev := range []string{"v2", "v1:Kconfig", "v1^{tree}", "v1^{blob}", "v1:no/such"} {
			_, err := Open(dir, rev, false)
			if !errors.Is(err, ErrUnknownRev) || errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: %v, want a one-line ErrUnknownRev", rev, err)
			}
		}
	}
}

// TestUnsupportedFormat: a SHA-256 repository is refused as such, not as
// damaged or as lacking the revision.
func TestUnsupportedFormat(t *testing.T) {
	gittest.Require(t)
	dir := filepath.Join(t.TempDir(), "linux")
	gittest.Run(t, t.TempDir(), "init", "-q", "--object-format=sha256", dir)
	_, err := Open(dir, "v1", false)
	if err == nil || errors.Is(err, ErrDamaged) || errors.Is(err, ErrUnknownRev) || !strings.Contains(err.Error(), "sha256 object ids") {
		t.Errorf("got %v, want a refusal naming sha256", err)
	}
}
