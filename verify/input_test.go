package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"kpatch/kernelsrc"
	"kpatch/series"
)

// key identifies a finding independently of where its mail was read from:
// code findings by file and line, message findings by their message.
type key struct {
	ID, Message, File string
	Patch, Line       int
}

func keys(s *Series, fs []Finding) map[key]int {
	out := map[key]int{}
	for _, f := range fs {
		k := key{ID: f.ID, Message: f.Message, Patch: f.Patch}
		if p := s.Patch(f.Patch); p == nil || f.File != p.MailFile {
			k.File, k.Line = f.File, f.Line
		}
		out[k]++
	}
	return out
}

// TestMailInputs reads v11 as kpatch gen writes it, as an mbox and as a
// directory of .patch files, with the base tree: the contents rebuilt from
// the mail equal the generator's after every patch, and the findings are
// the same.
func TestMailInputs(t *testing.T) {
	dir := t.TempDir()
	g, err := series.Generate(context.Background(), series.Options{Tree: debianTree(t), Base: "v6.12", Version: 11})
	if err != nil {
		t.Fatal(err)
	}
	msgs := g.Messages()
	if _, err := series.WriteDir(filepath.Join(dir, "out"), msgs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v11.mbox"), []byte(series.Mbox(msgs)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := v11Generated(t)
	wantKeys := keys(want, Run(want, Options{}))
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"out", "v11.mbox"} {
		t.Run(in, func(t *testing.T) {
			s, err := ReadMail(filepath.Join(dir, in), tree)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Patches) != 14 || s.Sender != g.Revision.From {
				t.Fatalf("%d patches, sender %q; want 14 and %q", len(s.Patches), s.Sender, g.Revision.From)
			}
			for i, p := range s.Patches {
				wp := want.Patches[i]
				if p.Number != i+1 || p.Subject != wp.Subject || p.Author != wp.Author || p.Log != wp.Log || p.Changelog != wp.Changelog {
					t.Errorf("patch %d: header or message differs from the generated one", i+1)
				}
				for j, f := range p.Files {
					wf := wp.Files[j]
					if f.Path != wf.Path || !f.Known || !bytes.Equal(f.New, wf.New) {
						t.Errorf("patch %d: %s: rebuilt content differs from the generator's (known %v)", p.Number, f.Path, f.Known)
					}
				}
			}
			got := keys(s, Run(s, Options{}))
			for k, n := range wantKeys {
				if got[k] != n {
					t.Errorf("generated has %d of %+v, %s has %d", n, k, in, got[k])
				}
			}
			for k, n := range got {
				if wantKeys[k] == 0 {
					t.Errorf("%s has %d of %+v, generated none", in, n, k)
				}
			}
		})
	}
}

// TestSeedWithoutTree: the seed read without a tree rebuilds every file the
// series creates (and none it edits), with the hashes the thread names.
func TestSeedWithoutTree(t *testing.T) {
	s := seed(t)
	if len(s.Patches) != 14 || s.Sender != "Steven Rostedt" {
		t.Fatalf("%d patches, sender %q", len(s.Patches), s.Sender)
	}
	created, edited := 0, 0
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if f.Known {
				created++
			}
			if !f.Created && p.Number == 13 && f.Known {
				t.Errorf("patch 13: %s known without a tree", f.Path)
			}
			if !f.Known {
				edited++
			}
		}
	}
	if created != 39 || edited == 0 {
		t.Errorf("%d created-file versions known (want 39, as oracle rebuilds), %d unknown", created, edited)
	}
}
