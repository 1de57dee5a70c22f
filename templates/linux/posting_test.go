package linux_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/oracle"
	"kpatch/spec"
	"kpatch/templates/linux"
)

// TestMatchesPosting renders the created files of v12, v15 and v16 at the
// steps whose blob ids the posted mails name in their index lines
// (testdata/vN-blobs.txt) and compares them: the templates reproduce the
// posting byte for byte where it is known. (v13 and v14 are compared at
// every patch with their posted code by series.TestPostedRevisions.)
func TestMatchesPosting(t *testing.T) {
	for _, v := range []int{12, 15, 16} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) { matchesPosting(t, v) })
	}
}

func matchesPosting(t *testing.T, v int) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(v)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fmt.Sprintf("testdata/v%d-blobs.txt", v))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var step int
		var path, want string
		if _, err := fmt.Sscan(l, &step, &path, &want); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		n++
		t.Run(strconv.Itoa(step)+"/"+path, func(t *testing.T) {
			b, ok, err := r.Render(path, step)
			if err != nil || !ok {
				t.Fatalf("render: %v (exists %v)", err, ok)
			}
			if got := oracle.BlobHash(b); !strings.HasPrefix(got, want) {
				t.Errorf("blob %s, the posting has %s:\n%s", got[:12], want, b)
			}
		})
	}
	if n < 5 {
		t.Fatalf("only %d blob ids in testdata", n)
	}
}

// TestV12Shape checks what v12 changed in its shape against v11: the USED
// bit patch right after "Clear unwind_mask", the segment-base patch gone,
// 14 patches, the base, and a "Changes since v11" note exactly on the
// patches whose content changed.
func TestV12Shape(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(12)
	if err != nil {
		t.Fatal(err)
	}
	if r.Base != "v6.16-rc4" || len(r.Patches) != 14 {
		t.Fatalf("v12 is on %s with %d patches, want v6.16-rc4 with 14", r.Base, len(r.Patches))
	}
	var ids []string
	for _, p := range r.Patches {
		ids = append(ids, p.ID)
	}
	want := "user-api fp compat-fp faultable cache deferred nmi-safe bitmask srcu clear-mask used-bit task-exit x86-fp x86-compat-fp"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("v12 patches:\n got %s\nwant %s", got, want)
	}
	changed := map[string]bool{"deferred": true, "clear-mask": true, "x86-compat-fp": true}
	for _, p := range r.Patches {
		has := strings.HasPrefix(p.Changelog, "Changes since v11: ")
		if has != changed[p.ID] {
			t.Errorf("patch %d (%s): changelog %q, want a v11 note: %v", p.Number, p.ID, p.Changelog, changed[p.ID])
		}
	}
	if !strings.Contains(r.Cover, "Changes since v11: https://lore.kernel.org/") {
		t.Error("the cover letter has no link line to v11")
	}
	// The self-test case v12 adds (the USED bit's fix), in its facts.
	v11, _ := s.Revision(11)
	for _, tc := range []struct {
		r    *spec.Revision
		want string
	}{{v11, ""}, {r, "faultable_sync"}} {
		f, err := tc.r.Facts("selftest", len(tc.r.Patches))
		if err != nil {
			t.Fatal(err)
		}
		if f["extra-cases"] != tc.want {
			t.Errorf("v%d extra-cases %q, want %q", tc.r.Version, f["extra-cases"], tc.want)
		}
	}
}

// TestV16Trailers compares the last paragraph of every v16 commit message
// whose posting was read (testdata/v16-trailers.txt) with what the spec
// renders: the Reviewed-by tags v16 gathered and 03/10's doubled sign-off
// are as posted.
func TestV16Trailers(t *testing.T) {
	s, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Revision(16)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/v16-trailers.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		n, line, ok := strings.Cut(l, ": ")
		num, err := strconv.Atoi(n)
		if !ok || err != nil {
			t.Fatalf("testdata/v16-trailers.txt: bad line %q", l)
		}
		want[num] = append(want[num], line)
	}
	if len(want) < 8 {
		t.Fatalf("only %d patches in testdata", len(want))
	}
	for num, lines := range want {
		if num < 1 || num > len(r.Patches) {
			t.Fatalf("v16 has no patch %d", num)
		}
		paras := strings.Split(strings.TrimRight(r.Patches[num-1].Log, "\n"), "\n\n")
		got := strings.Split(paras[len(paras)-1], "\n")
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("v16 patch %d (%s) ends with\n%s\nposted:\n%s", num, r.Patches[num-1].ID, strings.Join(got, "\n"), strings.Join(lines, "\n"))
		}
	}
}
