package cpio

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

type entry struct {
	kind   string // "file", "dir", "link", "chr"
	name   string
	data   string
	perm   uint32
	target string
}

func build(t *testing.T, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, e := range entries {
		var err error
		switch e.kind {
		case "file":
			err = w.File(e.name, e.perm, []byte(e.data))
		case "dir":
			err = w.Dir(e.name, e.perm)
		case "link":
			err = w.Symlink(e.name, e.target)
		case "chr":
			err = w.CharDev(e.name, e.perm, 5, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestArchiveWithCpioTool(t *testing.T) {
	testenv.Tool(t, "cpio", "cpio")
	tests := []struct {
		name    string
		entries []entry
		list    []string // expected `cpio -t` output, in order
	}{
		{
			name:    "init only",
			entries: []entry{{kind: "file", name: "init", data: "#!/bin/sh\n", perm: 0o755}},
			list:    []string{"init"},
		},
		{
			name: "nested with implicit parents",
			entries: []entry{
				{kind: "file", name: "bin/x86_64/t64", data: strings.Repeat("A", 4097), perm: 0o755},
				{kind: "file", name: "bin/i386/t32", data: "odd", perm: 0o644},
				{kind: "dir", name: "proc", perm: 0o755},
				{kind: "link", name: "sbin/init", target: "/bin/x86_64/t64"},
				{kind: "chr", name: "dev/console", perm: 0o600},
			},
			list: []string{"bin", "bin/x86_64", "bin/x86_64/t64", "bin/i386", "bin/i386/t32", "proc", "sbin", "sbin/init", "dev", "dev/console"},
		},
		{
			name:    "empty archive",
			entries: nil,
			list:    nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arch := build(t, tc.entries)
			if again := build(t, tc.entries); !bytes.Equal(arch, again) {
				t.Fatal("archive is not reproducible")
			}
			if len(arch)%4 != 0 {
				t.Errorf("archive length %d not 4-aligned", len(arch))
			}
			cmd := exec.Command("cpio", "-t", "--quiet")
			cmd.Stdin = bytes.NewReader(arch)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("cpio -t: %v: %s", err, out)
			}
			got := strings.Fields(string(out))
			if strings.Join(got, " ") != strings.Join(tc.list, " ") {
				t.Errorf("cpio -t = %q, want %q", got, tc.list)
			}
			// Extract (without device nodes: they need privileges) and check contents.
			dir := t.TempDir()
			var files []entry
			for _, e := range tc.entries {
				if e.kind != "chr" {
					files = append(files, e)
				}
			}
			cmd = exec.Command("cpio", "-id", "--quiet", "--no-absolute-filenames")
			cmd.Dir = dir
			cmd.Stdin = bytes.NewReader(build(t, files))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("cpio -id: %v: %s", err, out)
			}
			for _, e := range files {
				p := filepath.Join(dir, e.name)
				switch e.kind {
				case "file":
					b, err := os.ReadFile(p)
					if err != nil || string(b) != e.data {
						t.Errorf("%s: got %d bytes, err %v; want %d bytes", e.name, len(b), err, len(e.data))
					}
					st, _ := os.Stat(p)
					if st != nil && uint32(st.Mode().Perm()) != e.perm {
						t.Errorf("%s: mode %o, want %o", e.name, st.Mode().Perm(), e.perm)
					}
				case "link":
					if tg, err := os.Readlink(p); err != nil || tg != e.target {
						t.Errorf("%s: link %q, %v; want %q", e.name, tg, err, e.target)
					}
				case "dir":
					if st, err := os.Stat(p); err != nil || !st.IsDir() {
						t.Errorf("%s: not a directory: %v", e.name, err)
					}
				}
			}
		})
	}
}

func TestHeaderFields(t *testing.T) {
	arch := build(t, []entry{{kind: "file", name: "a", data: "xy", perm: 0o644}})
	golden, err := os.ReadFile(filepath.Join("testdata", "one-file.hex"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(strings.Fields(string(golden)), "")
	var got strings.Builder
	for _, b := range arch {
		got.WriteString(strings.ToLower(string("0123456789abcdef"[b>>4]) + string("0123456789abcdef"[b&15])))
	}
	if got.String() != want {
		t.Errorf("archive bytes differ from testdata/one-file.hex:\n got %s\nwant %s", got.String(), want)
	}
}

func TestBadPaths(t *testing.T) {
	for _, name := range []string{"", "../x", "a/../b", "a//b", "./a"} {
		w := NewWriter(&bytes.Buffer{})
		if err := w.File(name, 0o644, nil); err == nil {
			t.Errorf("File(%q) accepted a bad path", name)
		}
	}
}
