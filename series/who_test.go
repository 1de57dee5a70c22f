package series_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
)

// roleLine is "user@host (role)": an address as its bare mailbox.
func roleLine(addr, role string) string {
	if i := strings.LastIndexByte(addr, '<'); i >= 0 {
		addr = strings.TrimSuffix(addr[i+1:], ">")
	}
	return strings.ToLower(strings.TrimSpace(addr)) + " (" + role + ")"
}

// isRole reports whether a reason of Who is a MAINTAINERS role.
func isRole(why string) bool {
	for _, p := range []string{"maintainer:", "reviewer:", "supporter:", "odd fixer:", "orphan minder:", "obsolete minder:", "open list", "moderated list", "in file"} {
		if strings.HasPrefix(why, p) {
			return true
		}
	}
	return false
}

// TestWhoIsGetMaintainer: for every message of v16 and of the x86 series
// generated on Debian 6.12, the recipients Who gives a MAINTAINERS role
// are those the tree's own scripts/get_maintainer.pl --rolestats names for
// the files the message changes, with the same roles, on the MAINTAINERS
// and .mailmap the series leaves; with SetAutoCc(false) there are none.
func TestWhoIsGetMaintainer(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed")
	}
	dir := debianTree(t)
	ctx := context.Background()
	script, err := exec.Command("git", "-C", dir, "show", "v6.12:scripts/get_maintainer.pl").Output()
	if err != nil {
		t.Fatal(err)
	}
	// Sections of equal rank come in Perl's hash order, which is random:
	// break ties by position as package maintainers does.
	const sortLine = "sort {$hash{$b} <=> $hash{$a}} keys %hash"
	if !bytes.Contains(script, []byte(sortLine)) {
		t.Fatalf("get_maintainer.pl has no %q", sortLine)
	}
	script = bytes.Replace(script, []byte(sortLine), []byte("sort {$hash{$b} <=> $hash{$a} || $a <=> $b} keys %hash"), 1)
	mailmap, _ := exec.Command("git", "-C", dir, "show", "v6.12:.mailmap").Output()
	for _, stack := range []string{"", "x86"} {
		t.Run("stack="+stack, func(t *testing.T) {
			o := seriestest.Options{Tree: dir, Base: "v6.12", Stack: stack}
			s, err := seriestest.Generate(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			full, err := seriestest.Generate(ctx, seriestest.Options{Tree: dir, Base: "v6.12", Stack: stack, WithPrerequisite: true})
			if err != nil {
				t.Fatal(err)
			}
			tree := t.TempDir()
			os.WriteFile(filepath.Join(tree, "get_maintainer.pl"), script, 0o644)
			os.WriteFile(filepath.Join(tree, ".mailmap"), mailmap, 0o644)
			for p, data := range full.FinalFiles() {
				f := filepath.Join(tree, p)
				os.MkdirAll(filepath.Dir(f), 0o755)
				os.WriteFile(f, data, 0o644)
			}
			msgs := seriestest.Messages(t, s)
			who := s.Who(msgs, s.Revision.From)
			var all []string
			for _, p := range s.Patches {
				for _, f := range p.Files {
					if !slices.Contains(all, f.Path) {
						all = append(all, f.Path)
					}
				}
			}
			for i, w := range who {
				paths := all
				if i > 0 {
					paths = nil
					for _, f := range s.Patches[i-1].Files {
						paths = append(paths, f.Path)
					}
				}
				var got []string
				for _, r := range w.Recipients {
					for _, why := range r.Why {
						if isRole(why) {
							got = append(got, roleLine(r.Address, why))
						}
					}
				}
				cmd := exec.Command("perl", append([]string{"get_maintainer.pl", "--no-tree", "--mpath", "MAINTAINERS", "--no-git", "--no-git-fallback", "--rolestats", "-f"}, paths...)...)
				cmd.Dir = tree
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("get_maintainer.pl %q: %v", paths, err)
				}
				var want []string
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					from := strings.LastIndex(l, ">") + 1
					j := strings.Index(l[from:], " (")
					want = append(want, roleLine(l[:from+j], strings.TrimSuffix(l[from+j+2:], ")")))
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s:\nkpatch:\n%s\nget_maintainer.pl --rolestats:\n%s", w.File, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			// --no-auto-cc: no recipient from MAINTAINERS, the series' own stay.
			s2, err := seriestest.Generate(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			s2.SetAutoCc(false)
			msgs2 := seriestest.Messages(t, s2)
			for _, w := range s2.Who(msgs2, s2.Revision.From) {
				n := 0
				for _, r := range w.Recipients {
					n++
					for _, why := range r.Why {
						if isRole(why) {
							t.Errorf("%s: %s (%s) without MAINTAINERS", w.File, r.Address, why)
						}
					}
				}
				if n == 0 {
					t.Errorf("%s: no recipient left", w.File)
				}
			}
			if !strings.Contains(msgs2[1].Text, "\nTo: linux-kernel@vger.kernel.org") {
				t.Errorf("without MAINTAINERS, the series' To: is gone:\n%s", msgs2[1].Text[:800])
			}
		})
	}
}

// TestSuppressClasses: git send-email's classes, body expanded; cc and
// all, which would drop the Cc: header, are refused, as are unknown ones.
func TestSuppressClasses(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"author", "self"}, []string{"author", "self"}, ""},
		{[]string{"body"}, []string{"bodycc", "misc-by", "sob"}, ""},
		{[]string{"cc"}, nil, "would drop the Cc: header"},
		{[]string{"all"}, nil, "would drop the Cc: header"},
		{[]string{"sobs"}, nil, `"sobs": not one of git send-email's classes`},
	} {
		m, err := series.SuppressClasses(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		var got []string
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, %v", tc.in, got, err)
		}
	}
}
