package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// fakeGitKernel is fakeKernel committed to a new git repository and tagged
// v6.12 (annotated); packed, it is one pack with no loose objects. Each
// call returns a new copy, free to damage, of a repository git made once
// per test process (gittest.Template; one of each kind).
func fakeGitKernel(t *testing.T, packed bool) string {
	t.Helper()
	gittest.Require(t)
	src := debianTree(t)
	name := "fake git kernel, loose"
	if packed {
		name = "fake git kernel, packed"
	}
	return gittest.Template(t, name, func(t testing.TB, dir string) {
		if err := writeFakeKernel(dir, src, nil); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, dir, "init", "-q", "-b", "master")
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", "Linux 6.12 (the files the series reads)")
		gittest.Run(t, dir, "tag", "-a", "-m", "Linux 6.12", "v6.12")
		if packed {
			gittest.Run(t, dir, "repack", "-q", "-a", "-d")
			gittest.Run(t, dir, "prune-packed")
		}
	})
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(string(gittest.Run(t, dir, args...)))
}

func objectFile(dir, id string) string { return filepath.Join(dir, ".git/objects", id[:2], id[2:]) }

func packFile(t *testing.T, dir, ext string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/pack-*."+ext))
	if len(m) != 1 {
		t.Fatalf("want one .%s, have %v", ext, m)
	}
	return m[0]
}

// TestGenRefusesBadRepositoriesAndRevisions runs kpatch gen on throwaway
// repositories damaged in the ways git fsck reports, and with --base forms
// git rev-parse --verify REV^{commit} refuses: exit 1, one line naming the
// damage or the revision, no output directory, the tree and its refs as
// they were.
func TestGenRefusesBadRepositoriesAndRevisions(t *testing.T) {
	good := fakeGitKernel(t, false)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-v", "12", "--tree", good, "--base", "v6.12", "-o", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr); code != 0 {
		t.Fatalf("the undamaged repository: exit %d: %s", code, stderr.String())
	}
	tests := []struct {
		name   string
		packed bool
		base   string
		// damage breaks dir and returns what the error must say.
		damage func(t *testing.T, dir string) []string
	}{
		{"pack without its .idx", true, "v6.12", func(t *testing.T, dir string) []string {
			idx := packFile(t, dir, "idx")
			os.Remove(idx)
			return []string{"repository is damaged or unreadable", "has no index", "git fsck"}
		}},
		{"truncated pack", true, "v6.12", func(t *testing.T, dir string) []string {
			p := packFile(t, dir, "pack")
			st, _ := os.Stat(p)
			os.Chmod(p, 0o644)
			os.Truncate(p, st.Size()/2)
			return []string{"repository is damaged or unreadable", filepath.Base(p), "truncated"}
		}},
		{"corrupt commit", false, "v6.12", func(t *testing.T, dir string) []string {
			id := gitOut(t, dir, "rev-parse", "v6.12^{commit}")
			f := objectFile(dir, id)
			os.Chmod(f, 0o644)
			os.WriteFile(f, []byte("garbage"), 0o444)
			return []string{"repository is damaged or unreadable", "object " + id}
		}},
		{"missing tree", false, "v6.12", func(t *testing.T, dir string) []string {
			id := gitOut(t, dir, "rev-parse", "v6.12:kernel")
			os.Remove(objectFile(dir, id))
			return []string{"repository is damaged or unreadable", "tree " + id + " (kernel/ at v6.12) is missing"}
		}},
		{"missing blob", false, "v6.12", func(t *testing.T, dir string) []string {
			id := gitOut(t, dir, "rev-parse", "v6.12:MAINTAINERS")
			os.Remove(objectFile(dir, id))
			return []string{"repository is damaged or unreadable", "blob " + id + " (MAINTAINERS at v6.12) is missing"}
		}},
		{"unreadable alternates", false, "v6.12", func(t *testing.T, dir string) []string {
			alt := filepath.Join(dir, ".git/objects/info/alternates")
			os.MkdirAll(alt, 0o755)
			return []string{"repository is damaged or unreadable", alt}
		}},
		{"a path of a commit", false, "v6.12:no/such", nil},
		{"a blob", false, "v6.12^{blob}", nil},
		{"a tree", false, "v6.12^{tree}", nil},
		{"a file of a tree", false, "v6.12:MAINTAINERS", nil},
		{"a range", false, "v6.12..master", nil},
		{"a message search", false, "v6.12^{/Linux}", nil},
		{"a reflog entry", false, "master@{1}", nil},
		{"no such parent", false, "v6.12^2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fakeGitKernel(t, tt.packed)
			want := []string{`"` + tt.base + `"`, "--base"}
			if tt.damage != nil {
				want = tt.damage(t, dir)
			}
			before := fingerprint(t, dir) // .git's refs, HEAD and index included
			out := filepath.Join(t.TempDir(), "outgoing")
			var stdout, stderr bytes.Buffer
			code := run([]string{"gen", "-v", "12", "--tree", dir, "--base", tt.base, "-o", out}, &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "kpatch gen: ") {
				t.Errorf("want one line starting with \"kpatch gen: \", got %q", msg)
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			for _, bad := range []string{"unknown revision", "not a Linux kernel tree", "file does not exist"} {
				if tt.damage != nil && strings.Contains(msg, bad) {
					t.Errorf("damage reported as %q: %s", bad, msg)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("output directory %s was created", out)
			}
			if fingerprint(t, dir) != before {
				t.Errorf("the tree or its refs changed")
			}
		})
	}
}

// TestGenShortIDThroughAlternates: a short commit id works in a --shared
// clone of the Debian tree as in the tree itself, and gives the same
// series as the tag.
func TestGenShortIDThroughAlternates(t *testing.T) {
	tree := debianTree(t)
	short := gitOut(t, tree, "rev-parse", "--short=12", "v6.12^{commit}")
	clone := filepath.Join(t.TempDir(), "linux")
	gittest.Run(t, tree, "clone", "-q", "--shared", "--no-checkout", tree, clone)
	gen := func(dir, base string) map[string]string {
		out := filepath.Join(t.TempDir(), "outgoing")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"gen", "-v", "12", "--tree", dir, "--base", base, "-o", out}, &stdout, &stderr); code != 0 {
			t.Fatalf("gen --tree %s --base %s: exit %d: %s", dir, base, code, stderr.String())
		}
		files := map[string]string{}
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(out, e.Name()))
			files[e.Name()] = string(b)
		}
		return files
	}
	refs := gitOut(t, clone, "for-each-ref")
	byTag := gen(tree, "v6.12")
	for _, dir := range []string{tree, clone} {
		got := gen(dir, short)
		if len(got) != 15 {
			t.Fatalf("%s: %d files", dir, len(got))
		}
		for name, content := range byTag {
			if got[name] != content {
				t.Errorf("%s --base %s: %s differs from --base v6.12", dir, short, name)
			}
		}
	}
	if gitOut(t, clone, "for-each-ref") != refs {
		t.Error("the clone's refs changed")
	}
}
