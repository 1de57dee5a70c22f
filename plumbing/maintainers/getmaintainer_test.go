package maintainers

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// linuxSource is the Debian linux-source tarball holding the reference
// scripts/get_maintainer.pl and MAINTAINERS. KPATCH_LINUX_SOURCE overrides it.
const linuxSource = "/usr/src/linux-source-6.12.tar.xz"

// unwindSection is added to the kernel's MAINTAINERS for new files.
const unwindSection = `
USERSPACE STACK UNWINDING
M:	Josh Poimboeuf <jpoimboe@kernel.org>
M:	Steven Rostedt <rostedt@goodmis.org>
L:	linux-trace-kernel@vger.kernel.org
S:	Maintained
F:	include/linux/unwind*.h
F:	kernel/unwind/

KPATCH BARE DIRECTORY
M:	Bare Dir <bare@example.org>
S:	Maintained
F:	arch/x86/kernel/unwind_user
`

// kernelCases are compared with get_maintainer.pl on the kernel's
// MAINTAINERS plus unwindSection; every path is created as an empty file.
var kernelCases = [][]string{
	{"kernel/fork.c"},
	{"kernel/exit.c"},
	{"include/linux/sched.h"},
	{"include/linux/entry-common.h"},
	{"arch/x86/Kconfig"},
	{"arch/x86/Kconfig.debug"},
	{"arch/Kconfig"},
	{"arch/x86/events/core.c"},
	{"arch/x86/kernel/ptrace.c"},
	{"arch/x86/include/asm/ptrace.h"},
	{"include/asm-generic/Kbuild"},
	{"include/asm-generic/bitops.h", "include/asm-generic/bitops/atomic.h"},
	{"kernel/Makefile"},
	{"MAINTAINERS"},
	{"kernel/unwind/user.c"},
	{"include/linux/unwind_user.h"},
	{"arch/x86/kernel/unwind_user/x86.c"},
	{"drivers/pinctrl/mediatek/pinctrl-mt8183.c"},
	{"arch/arm64/boot/dts/freescale/fsl-imx8mq.dtsi"},
	{"arch/arm/boot/dts/broadcom/bcm2711-rpi-4-b.dts"},
	{"mm/page_alloc.c"},
	{"kernel/unwind/user.c", "include/linux/unwind_user.h", "arch/x86/kernel/ptrace.c", "kernel/fork.c", "include/linux/entry-common.h"},
	{"arch/x86/events/core.c", "include/linux/sched.h", "kernel/exit.c", "include/asm-generic/Kbuild", "arch/x86/Kconfig"},
}

// testdataCases are compared with get_maintainer.pl on testdata/MAINTAINERS.
// "LIST WITH A NAME (TEST)" is left out on purpose: get_maintainer.pl
// reports an empty address for its L: entry.
var testdataCases = [][]string{
	{"kernel/unwind/user.c"},
	{"include/linux/unwind_user.h"},
	{"drivers/bare/x.c"},
	{"drivers/bare/sub/x.c"},
	{"drivers/barely.c"},
	{"kernel/fork.c"},
	{"MAINTAINERS"},
	{"drivers/glob/x.c"},
	{"drivers/glob/sub/x.c"},
	{"drivers/one1.c"},
	{"drivers/one12.c"},
	{"drivers/regex/x.c"},
	{"drivers/regex/excluded/x.c"},
	{"drivers/regex/deep/file.c"},
	{"drivers/misc/regex7.c"},
	{"arch/x86/events/core.c", "include/asm-generic/bitops.h", "drivers/regex/x.c"},
}

func TestAgainstGetMaintainer(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping get_maintainer.pl comparison in short mode")
	}
	for _, tool := range []string{"perl", "tar", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping get_maintainer.pl comparison: %s not found: %v", tool, err)
		}
	}
	tarball := linuxSource
	if s := os.Getenv("KPATCH_LINUX_SOURCE"); s != "" {
		tarball = s
	}
	if _, err := os.Stat(tarball); err != nil {
		t.Skipf("skipping get_maintainer.pl comparison: %v", err)
	}
	top := strings.TrimSuffix(filepath.Base(tarball), ".tar.xz")
	src := t.TempDir()
	out, err := exec.Command("tar", "-xJf", tarball, "-C", src,
		top+"/scripts/get_maintainer.pl", top+"/MAINTAINERS").CombinedOutput()
	if err != nil {
		t.Fatalf("extracting %s: %v\n%s", tarball, err, out)
	}
	script, err := os.ReadFile(filepath.Join(src, top, "scripts/get_maintainer.pl"))
	if err != nil {
		t.Fatal(err)
	}
	kernel, err := os.ReadFile(filepath.Join(src, top, "MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	// get_maintainer.pl orders sections of equal rank in Perl hash order,
	// which is random; make it break ties by file position, as Sections
	// does. The unmodified script is still compared, as sets.
	const sortLine = "sort {$hash{$b} <=> $hash{$a}} keys %hash"
	if !bytes.Contains(script, []byte(sortLine)) {
		t.Fatalf("get_maintainer.pl has no %q to make deterministic", sortLine)
	}
	stable := bytes.Replace(script, []byte(sortLine), []byte("sort {$hash{$b} <=> $hash{$a} || $a <=> $b} keys %hash"), 1)
	scripts := map[bool]string{true: filepath.Join(src, "stable.pl"), false: filepath.Join(src, "orig.pl")}
	if err := os.WriteFile(scripts[true], stable, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scripts[false], script, 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := os.ReadFile(filepath.Join("testdata", "MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}

	suites := []struct {
		name        string
		maintainers []byte
		cases       [][]string
	}{
		{"kernel", append(kernel, unwindSection...), kernelCases},
		{"testdata", testdata, testdataCases},
	}
	for _, suite := range suites {
		t.Run(suite.name, func(t *testing.T) {
			tree := t.TempDir()
			if err := os.WriteFile(filepath.Join(tree, "MAINTAINERS"), suite.maintainers, 0o644); err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, paths := range suite.cases {
				for _, p := range paths {
					touch(t, tree, p)
					if !slices.Contains(all, p) {
						all = append(all, p)
					}
				}
			}
			f, err := Parse(bytes.NewReader(suite.maintainers))
			if err != nil {
				t.Fatal(err)
			}
			f.IsDir = func(name string) bool {
				fi, err := os.Stat(filepath.Join(tree, name))
				return err == nil && fi.IsDir()
			}
			for _, paths := range append(suite.cases, all) {
				to, cc := f.Recipients(paths)
				wantTo, wantCc := getMaintainer(t, scripts[true], tree, paths)
				if !reflect.DeepEqual(to, wantTo) || !reflect.DeepEqual(cc, wantCc) {
					t.Errorf("Recipients(%q):\n to %q\n cc %q\nget_maintainer.pl:\n to %q\n cc %q",
						paths, to, cc, wantTo, wantCc)
				}
				// Each recipient's role, as --rolestats prints it.
				secs := make([][]*Section, len(paths))
				for i, p := range paths {
					secs[i] = f.Sections(p)
				}
				rto, rcc := f.RolesOfPaths(paths, secs)
				var lines []string
				for _, r := range append(rto, rcc...) {
					lines = append(lines, r.Address+" ("+r.Role+")")
				}
				if want := getMaintainerLines(t, scripts[true], tree, paths); !reflect.DeepEqual(lines, want) {
					t.Errorf("RolesOfPaths(%q):\n%s\nget_maintainer.pl --rolestats:\n%s", paths, strings.Join(lines, "\n"), strings.Join(want, "\n"))
				}
			}
			// The unmodified script, as sets.
			to, cc := f.Recipients(all)
			wantTo, wantCc := getMaintainer(t, scripts[false], tree, all)
			if !reflect.DeepEqual(sorted(to), sorted(wantTo)) || !reflect.DeepEqual(sorted(cc), sorted(wantCc)) {
				t.Errorf("Recipients(%q):\n to %q\n cc %q\nunmodified get_maintainer.pl:\n to %q\n cc %q",
					all, to, cc, wantTo, wantCc)
			}
		})
	}
}

// getMaintainerLines runs script --rolestats in tree for paths and
// returns its lines, "address (role)".
func getMaintainerLines(t *testing.T, script, tree string, paths []string) []string {
	t.Helper()
	args := []string{script, "--no-tree", "--mpath", "MAINTAINERS",
		"--no-git", "--no-git-fallback", "--rolestats", "-f"}
	cmd := exec.Command("perl", append(args, paths...)...)
	cmd.Dir = tree
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("get_maintainer.pl %q: %v\n%s", paths, err, stderr.Bytes())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// getMaintainer runs script in tree for paths and splits its output into
// addresses (to) and lists (cc) by their roles.
func getMaintainer(t *testing.T, script, tree string, paths []string) (to, cc []string) {
	t.Helper()
	args := []string{script, "--no-tree", "--mpath", "MAINTAINERS",
		"--no-git", "--no-git-fallback", "--no-rolestats", "--roles", "-f"}
	cmd := exec.Command("perl", append(args, paths...)...)
	cmd.Dir = tree
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("get_maintainer.pl %q: %v\n%s", paths, err, stderr.Bytes())
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		// "address (role)"; a quoted name may hold " (", an address not.
		from := strings.LastIndex(line, ">") + 1
		i := strings.Index(line[from:], " (")
		if i < 0 {
			t.Fatalf("get_maintainer.pl %q: line without role: %q", paths, line)
		}
		addr, role := line[:from+i], line[from+i+2:]
		if strings.HasPrefix(role, "open list") || strings.HasPrefix(role, "moderated list") ||
			strings.HasPrefix(role, "subscriber list") {
			cc = append(cc, addr)
		} else {
			to = append(to, addr)
		}
	}
	return to, cc
}

// touch creates the empty file name below dir.
func touch(t *testing.T, dir, name string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err == nil {
		return
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
