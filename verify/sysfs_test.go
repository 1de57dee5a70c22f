package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/testenv"
	"kpatch/plumbing/kernelsrc"
)

// creationSeries makes, with the real git, a series of one patch per file
// that creates it with the content given (in the order of paths),
// formats it with git format-patch and reads the mails as posted.
func creationSeries(t *testing.T, paths []string, content map[string][]byte) *Series {
	t.Helper()
	gittest.Require(t)
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	gittest.Run(t, repo, "commit", "-q", "--allow-empty", "-m", "base")
	for _, p := range paths {
		dst := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, content[p], 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, repo, "add", p)
		gittest.Run(t, repo, "commit", "-q", "-m", fmt.Sprintf("drivers: add %s\n\nAs Linux 6.12 has it.\n\nSigned-off-by: t <t@example.com>", filepath.Base(p)))
	}
	out := filepath.Join(t.TempDir(), "out")
	gittest.Run(t, repo, "format-patch", "-q", "-n", "-o", out, fmt.Sprintf("-%d", len(paths)))
	s, err := ReadMail(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// treeFiles reads paths of the Debian tree.
func treeFiles(t *testing.T, tree string, paths []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(tree, p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out
}

// sysfsPattern is a file-scope use of the kernel's declaration macros that
// paste the names of static functions and arrays together.
var sysfsPattern = regexp.MustCompile(`^(static )?(DEVICE_ATTR_(RW|RO|WO|ADMIN_RW|ADMIN_RO)|ATTRIBUTE_GROUPS|DEFINE_SHOW_ATTRIBUTE|DEFINE_SEQ_ATTRIBUTE|BIN_ATTR_(RO|RW|WO)|DRIVER_ATTR_(RW|RO|WO)|CLASS_ATTR_(RW|RO|WO)|BUS_ATTR_(RW|RO|WO)|SENSOR_DEVICE_ATTR(_2)?_(RW|RO|WO))\(`)

// sysfsFiles returns the .c files under drivers/ of the tree that use
// sysfsPattern, sorted, every step-th of them (1: all).
func sysfsFiles(t *testing.T, tree string, step int) []string {
	t.Helper()
	out := gittest.Run(t, tree, "grep", "-l", "-E", sysfsPattern.String(), "--", "drivers/*.c")
	all := strings.Fields(string(out))
	sort.Strings(all)
	var picked []string
	for i := 0; i < len(all); i += step {
		picked = append(picked, all[i])
	}
	return picked
}

// unusedErrors returns the UNUSED_STATIC findings, one line each.
func unusedErrors(s *Series, fs []Finding) []string {
	var out []string
	for _, f := range only(fs, "UNUSED_STATIC") {
		line, _ := textAt(s, f)
		out = append(out, fmt.Sprintf("%s: %s [%s]", f.Where(), f.Message, strings.TrimSpace(line)))
	}
	return out
}

// TestSysfsDrivers: real driver files of Debian's 6.12 that declare their
// sysfs attributes, groups and debugfs files with the kernel's macros
// (static DEVICE_ATTR_RW(x) uses x_show and x_store, ATTRIBUTE_GROUPS(x)
// uses x_attrs, SENSOR_DEVICE_ATTR_RO(n, f, i) uses f_show), each
// created by a patch: the kernel builds them without a warning, and verify
// reports no UNUSED_STATIC. The fast tier reads the 8 smallest of the
// files, the full tier every 8th (about 140 of 1,100).
func TestSysfsDrivers(t *testing.T) {
	tree := debianTree(t)
	var files []string
	if testing.Short() {
		files = smallest(t, tree, sysfsFiles(t, tree, 1), 8)
	} else {
		files = sysfsFiles(t, tree, 8)
	}
	if len(files) < 8 {
		t.Fatalf("only %d files of the tree use the sysfs macros: %v", len(files), files)
	}
	s := creationSeries(t, files, treeFiles(t, tree, files))
	fs := Run(s, Options{})
	for _, e := range unusedErrors(s, fs) {
		t.Errorf("on the kernel's own code: %s", e)
	}
	t.Logf("%d files, %d findings", len(files), len(fs))
}

// attrRE is a file-scope DEVICE_ATTR_RW/RO line of a driver, with the
// attribute's name.
var attrRE = regexp.MustCompile(`(?m)^static DEVICE_ATTR_(RW|RO)\((\w+)\);\n`)

// TestSysfsDriversMutated: the same driver files with one
// static DEVICE_ATTR_RW/RO(x) line taken out each: x_show() is then
// unused, and verify says so (the attribute's only use was the macro's).
func TestSysfsDriversMutated(t *testing.T) {
	tree := debianTree(t)
	n := 2
	if !testing.Short() {
		n = 12
	}
	paths, content, want := mutatedSysfs(t, tree, n)
	s := creationSeries(t, paths, content)
	for _, k := range missedUnused(Run(s, Options{}), want) {
		t.Errorf("%s: no UNUSED_STATIC without its DEVICE_ATTR line", k)
	}
}

// mutatedSysfs returns up to n sysfs driver files of the tree, each with
// its first file-scope static DEVICE_ATTR_RW/RO(x) line taken out where
// that line was x_show()'s only user, and the "file: x_show" expected
// unused.
func mutatedSysfs(t *testing.T, tree string, n int) ([]string, map[string][]byte, map[string]bool) {
	t.Helper()
	var paths []string
	content := map[string][]byte{}
	want := map[string]bool{}
	for _, p := range sysfsFiles(t, tree, 12) {
		b := treeFiles(t, tree, []string{p})[p]
		m := attrRE.FindSubmatchIndex(b)
		if m == nil {
			continue
		}
		name := string(b[m[4]:m[5]])
		rest := append(append([]byte{}, b[:m[0]]...), b[m[1]:]...)
		if len(regexp.MustCompile(`\b`+name+`_show\b`).FindAllIndex(rest, -1)) != 1 || condDepth(b[:m[0]]) > 0 {
			continue // the macro was not x_show's only user, or is under an #if the builds may not take
		}
		paths = append(paths, p)
		content[p] = rest
		want[p+": "+name+"_show"] = true
		if len(paths) == n {
			break
		}
	}
	if len(paths) < min(n, 2) {
		t.Fatalf("only %d files to mutate", len(paths))
	}
	return paths, content, want
}

// missedUnused returns the "file: name" of want that fs has no
// UNUSED_STATIC for.
func missedUnused(fs []Finding, want map[string]bool) []string {
	got := map[string]bool{}
	for _, f := range only(fs, "UNUSED_STATIC") {
		for k := range want {
			file, name, _ := strings.Cut(k, ": ")
			if f.File == file && strings.Contains(f.Message, "static "+name+"()") {
				got[k] = true
			}
		}
	}
	var out []string
	for k := range want {
		if !got[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// condDepth returns how many #if blocks are open at the end of src.
func condDepth(src []byte) int {
	d := 0
	for _, l := range strings.Split(string(src), "\n") {
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(t, "#if"):
			d++
		case strings.HasPrefix(t, "#endif"):
			d--
		}
	}
	return d
}

// TestSysfsForeignSeries: amd-3dvcache, a new sysfs driver posted for
// 6.12, declares its attribute with static DEVICE_ATTR_RW(amd_x3d_mode)
// and its group with ATTRIBUTE_GROUPS(amd_x3d): amd_x3d_mode_show(),
// amd_x3d_mode_store() and amd_x3d_attrs are used, so there is no
// UNUSED_STATIC. Without the two macro lines (and the one use of the
// attribute), all three are unused, and reported.
func TestSysfsForeignSeries(t *testing.T) {
	var path string
	for _, f := range testenv.ForeignSeries(t) {
		if f.Name == "amd-3dvcache" {
			path = f.Path
		}
	}
	tree := debianTree(t)
	kt, err := kernelsrc.Open(tree, "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(path, kt)
	if err != nil {
		t.Fatal(err)
	}
	if e := unusedErrors(s, Run(s, Options{})); len(e) > 0 {
		t.Errorf("UNUSED_STATIC on amd-3dvcache:\n%s", strings.Join(e, "\n"))
	}
	const file = "drivers/platform/x86/amd/x3d_vcache.c"
	src, ok := s.FileAt(file, 1)
	if !ok {
		t.Fatalf("%s not created by patch 1", file)
	}
	cut := string(src)
	for _, l := range []string{"static DEVICE_ATTR_RW(amd_x3d_mode);\n", "\t&dev_attr_amd_x3d_mode.attr,\n", "ATTRIBUTE_GROUPS(amd_x3d);\n"} {
		if !strings.Contains(cut, l) {
			t.Fatalf("%s has no %q", file, l)
		}
		cut = strings.Replace(cut, l, "", 1)
	}
	m := creationSeries(t, []string{file}, map[string][]byte{file: []byte(cut)})
	var got []string
	for _, f := range only(Run(m, Options{}), "UNUSED_STATIC") {
		got = append(got, f.Message)
	}
	for _, name := range []string{"static amd_x3d_mode_show()", "static amd_x3d_mode_store()", "static variable amd_x3d_attrs"} {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, name)
		}
		if !found {
			t.Errorf("without the macros, %s is not reported: %q", name, got)
		}
	}
}

// smallest returns the n smallest of paths in tree, sorted.
func smallest(t *testing.T, tree string, paths []string, n int) []string {
	t.Helper()
	size := map[string]int64{}
	for _, p := range paths {
		st, err := os.Stat(filepath.Join(tree, p))
		if err != nil {
			t.Fatal(err)
		}
		size[p] = st.Size()
	}
	sorted := append([]string(nil), paths...)
	sort.Slice(sorted, func(i, j int) bool {
		if size[sorted[i]] != size[sorted[j]] {
			return size[sorted[i]] < size[sorted[j]]
		}
		return sorted[i] < sorted[j]
	})
	out := sorted[:min(n, len(sorted))]
	sort.Strings(out)
	return out
}

// TestUnusedPastedNames: real driver files whose static names are used by
// macros that paste them: module_param_named(scroll, ypan, scroll, 0)
// uses param_ops_scroll and expands param_check_scroll() (uvesafb.c,
// ati_remote2.c); static DEF_SCSI_QCMD(megaraid_queue_command), a macro
// verify does not expand written without its semicolon, may use
// megaraid_queue_command_lck() (megaraid_mbox.c, full tier). Nothing is
// reported unused.
func TestUnusedPastedNames(t *testing.T) {
	tree := debianTree(t)
	files := []string{"drivers/input/misc/ati_remote2.c", "drivers/video/fbdev/uvesafb.c"}
	if !testing.Short() {
		files = append(files, "drivers/scsi/megaraid/megaraid_mbox.c")
	}
	s := creationSeries(t, files, treeFiles(t, tree, files))
	fs := Run(s, Options{})
	for _, id := range []string{"UNUSED_STATIC", "UNUSED_MACRO"} {
		for _, f := range only(fs, id) {
			t.Errorf("on the kernel's own code: %s %s: %s", id, f.Where(), f.Message)
		}
	}
}
