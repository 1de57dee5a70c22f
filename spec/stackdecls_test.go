package spec_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"kpatch/spec"
)

// TestStackedDeclarations: a stacked series declares the patches no
// revision of the main one has in its own folder (NAME-vN/<id>.patch, the
// name may hold dots, x86-6.19-v1), and a declaration may give the author
// date of its commit; a bad date and an id declared in both places are
// refused, naming the file.
func TestStackedDeclarations(t *testing.T) {
	hdr := "Version: 1\nBase: v1.0\nSubject: s\nFrom: A <a@example.org>\nDate: Mon, 30 Jun 2025 20:53:21 -0400\n"
	base := func() fstest.MapFS {
		return fstest.MapFS{
			"files/f.c.tmpl":   {Data: []byte("{{created \"a\"}}\nf\n{{if since \"n\"}}\nn\n{{end}}\n")},
			"v1/series":        {Data: []byte(hdr + "\ncover\n")},
			"v1/order":         {Data: []byte("a\n")},
			"v1/a.patch":       {Data: []byte("Author: A <a@example.org>\nSubject: A\n\nMessage.\n")},
			"x-1.2-v1/series":  {Data: []byte(hdr + "Prerequisite: v1\n\ncover\n")},
			"x-1.2-v1/order":   {Data: []byte("n\n")},
			"x-1.2-v1/n.patch": {Data: []byte("Author: B <b@example.org>\nDate: Wed, 5 Nov 2025 11:00:14 +0100\nSubject: N\n\nMessage.\n")},
		}
	}
	tests := []struct {
		name    string
		change  func(fstest.MapFS)
		wantErr string
	}{
		{name: "declared in the stacked folder", change: func(fstest.MapFS) {}},
		{name: "bad date", change: func(m fstest.MapFS) {
			m["x-1.2-v1/n.patch"] = &fstest.MapFile{Data: []byte("Author: B <b@example.org>\nDate: 5/11/2025\nSubject: N\n\nMessage.\n")}
		}, wantErr: `x-1.2-v1/n.patch:2: Date "5/11/2025"`},
		{name: "declared twice", change: func(m fstest.MapFS) {
			m["v1/n.patch"] = &fstest.MapFile{Data: []byte("Author: B <b@example.org>\nSubject: N\n\nMessage.\n")}
		}, wantErr: `patch "n" is declared twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.change(m)
			sp, err := spec.Load(m)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, spec.ErrInvalid) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := sp.Stack("x-1.2", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Patches) != 2 || r.Own != 1 {
				t.Fatalf("%d patches, own from %d", len(r.Patches), r.Own)
			}
			n := r.Patches[1]
			want := time.Date(2025, 11, 5, 11, 0, 14, 0, time.FixedZone("", 3600))
			if n.ID != "n" || n.Author != "B <b@example.org>" || !n.Date.Equal(want) {
				t.Errorf("patch %s by %s dated %v, want n by B dated %v", n.ID, n.Author, n.Date, want)
			}
			if _, off := n.Date.Zone(); off != 3600 {
				t.Errorf("zone offset %d, want +0100 kept", off)
			}
			if !r.Patches[0].Date.IsZero() {
				t.Errorf("a declaration without Date: has %v", r.Patches[0].Date)
			}
			c, ok, err := r.Render("f.c", 2)
			if err != nil || !ok || string(c) != "f\nn\n" {
				t.Errorf("f.c after n: %q %v %v", c, ok, err)
			}
		})
	}
}
