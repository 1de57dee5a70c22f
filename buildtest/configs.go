package buildtest

import (
	"fmt"
	"sort"
	"strings"

	"kpatch/spec"
)

// Config is one kernel configuration of the matrix: a base configuration
// (tinyconfig, or the architecture's defconfig) plus a fragment, for an
// architecture and a compiler.
type Config struct {
	Name     string
	Arch     string // make ARCH=
	Start    string // the make target the configuration starts from: "tinyconfig" (""), "defconfig"
	Fragment string // added to it
	// Make are make variables of every build of this configuration
	// besides W=1 ("LLVM=1", "CROSS_COMPILE=aarch64-linux-gnu-").
	Make []string
	// Compiler is the compiler the configuration builds with ("" for
	// gcc); --cc wrappers (ccache, distcc, icecc) wrap it.
	Compiler string
	// Tools are the programs the configuration needs beyond the common
	// build tools, with the Debian package of each.
	Tools []Tool
	// Sparse says whether C=1 runs in this configuration when sparse
	// runs at all (Options.Sparse): the three x86 configurations, where
	// sparse reads the series as the robot's sparse builds do.
	Sparse bool
	// Link says whether every patch also links vmlinux, for what only
	// the link shows: objtool's checks of vmlinux.o (noinstr validation
	// with DEBUG_ENTRY).
	Link bool
	// Base are the symbols the configuration must have at the base;
	// Final those it must have after the last patch built (checked only
	// when the series defines them, i.e. for the unwind series). Final is
	// a fact of the series, not of kpatch: WithFinal takes it from the
	// spec's facts/configs.tmpl for the revision and patch, the line
	// named Facts (or Name).
	Base, Final map[string]string
	Facts       string
	// What says in a few words what the configuration covers;
	// Covers says it in full for docs/build.md's table.
	What, Covers string
	// Default says whether the configuration is built when --configs is
	// not given.
	Default bool
}

// Tool is a program a configuration needs and the Debian package that
// has it.
type Tool struct{ Name, Package string }

// HookSymbol is the test-only Kconfig symbol that selects UNWIND_USER in
// the x86_64 configuration, so that the generic unwinder (kernel/unwind/)
// is compiled from the first patch on, before the x86 patches let the
// architecture select it. It lives in HookKconfig, which is laid over the
// tree for the build only and is never part of the series.
const HookSymbol = "KPATCH_BUILD_UNWIND_USER"

// HookDir is the directory of the test-only Kconfig file.
const HookDir = "kpatch_build"

// HookKconfig is the content of HookDir/Kconfig. Selecting a symbol the
// tree does not define yet (before patch 1) is a no-op for Kconfig.
const HookKconfig = `# SPDX-License-Identifier: GPL-2.0
# kpatch test --build: laid over the tree for the build only, never mailed.
config ` + HookSymbol + `
	bool "kpatch build test: compile the generic user unwinder"
	select ` + HookSelects + `
`

// HookSelects is the symbol HookSymbol selects.
const HookSelects = "UNWIND_USER"

// x86Fragment is the x86_64 configuration's fragment: 64-bit with IA32
// emulation and perf events, the generic unwinder forced on.
const x86Fragment = "CONFIG_64BIT=y\nCONFIG_IA32_EMULATION=y\nCONFIG_PERF_EVENTS=y\nCONFIG_" + HookSymbol + "=y\n"

var x86Base = map[string]string{"64BIT": "y", "IA32_EMULATION": "y", "COMPAT": "y", "PERF_EVENTS": "y", HookSymbol: "y"}

// with returns m and the pairs kv ("SYM", "y", ...) in a new map.
func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// Configs are the configurations kpatch test build knows, in report
// order; DefaultConfigs are those it builds unless told.
var Configs = []Config{
	{
		Name: "x86_64", Arch: "x86_64", Sparse: true, Default: true,
		What:     "64-bit with IA32 emulation; UNWIND_USER forced on from patch 1, the x86 options on from their patches",
		Covers:   "tinyconfig + 64BIT + IA32_EMULATION + PERF_EVENTS; a test-only Kconfig symbol (`kpatch_build/Kconfig`, laid over the tree for the build, never mailed) selects UNWIND_USER, so `kernel/unwind/` is compiled from patch 1, long before the x86 patches let the architecture select it",
		Fragment: x86Fragment,
		Base:     x86Base,
	},
	{
		Name: "x86_64-noia32", Arch: "x86_64", Sparse: true, Default: true,
		What:     "64-bit without IA32 emulation: the compat paths compiled out, the stubs used before the x86 patches",
		Covers:   "the same without IA32_EMULATION (COMPAT off): the compat paths compiled out; the generic stubs until the x86 patches enable UNWIND_USER",
		Fragment: "CONFIG_64BIT=y\n# CONFIG_IA32_EMULATION is not set\nCONFIG_PERF_EVENTS=y\n",
		Base:     map[string]string{"64BIT": "y", "IA32_EMULATION": "n", "COMPAT": "n", "PERF_EVENTS": "y"},
	},
	{
		Name: "i386", Arch: "i386", Sparse: true, Default: true,
		What:     "32-bit: the series' x86 options off, every stub used",
		Covers:   "ARCH=i386: the series' x86 options stay off, every stub is used",
		Fragment: "# CONFIG_64BIT is not set\nCONFIG_PERF_EVENTS=y\n",
		Base:     map[string]string{"64BIT": "n", "X86_32": "y", "PERF_EVENTS": "y"},
	},
	{
		Name: "um", Arch: "um", Start: "defconfig",
		What:   "User Mode Linux (ARCH=um, kunit.py's default architecture) from its defconfig: x86's headers included where UML lacks what they use",
		Covers: "ARCH=um (User Mode Linux, kunit.py's default architecture) from its defconfig: the headers of arch/x86 that UML includes, without the pieces they use on x86 (the robot's UML build broke on the x86 enablement this way)",
		Base:   map[string]string{"UML": "y", "64BIT": "y"},
	},
	{
		Name: "clang", Arch: "x86_64", Make: []string{"LLVM=1"}, Compiler: "clang", Facts: "x86_64",
		Tools:    []Tool{{"clang", "clang"}, {"ld.lld", "lld"}, {"llvm-ar", "llvm"}, {"llvm-objcopy", "llvm"}, {"llvm-nm", "llvm"}},
		What:     "x86_64 built by Debian's clang and lld (LLVM=1), with clang's W=1 warnings",
		Covers:   "the x86_64 configuration built with Debian's clang and lld (`LLVM=1`), clang's W=1 warnings",
		Fragment: x86Fragment,
		Base:     with(x86Base, "CC_IS_CLANG", "y", "LD_IS_LLD", "y"),
	},
	{
		Name: "kcsan", Arch: "x86_64", Link: true, Facts: "x86_64",
		What:     "x86_64 with KCSAN and DEBUG_ENTRY: objtool validates noinstr code in vmlinux.o, as linux-next and syzbot build",
		Covers:   "the x86_64 configuration with KCSAN and DEBUG_ENTRY, so objtool validates noinstr code in `vmlinux.o` (NOINSTR_VALIDATION), as linux-next and syzbot build; every patch also links vmlinux",
		Fragment: x86Fragment + "CONFIG_DEBUG_KERNEL=y\nCONFIG_KCSAN=y\nCONFIG_DEBUG_ENTRY=y\n",
		Base:     with(x86Base, "KCSAN", "y", "DEBUG_ENTRY", "y", "NOINSTR_VALIDATION", "y"),
	},
	{
		Name: "kasan", Arch: "x86_64", Link: true, Facts: "x86_64",
		What:     "x86_64 with KASAN and DEBUG_ENTRY: objtool validates noinstr code in vmlinux.o, as linux-next and syzbot build",
		Covers:   "the same with KASAN in place of KCSAN",
		Fragment: x86Fragment + "CONFIG_DEBUG_KERNEL=y\nCONFIG_SYSFS=y\n# CONFIG_SLUB_TINY is not set\nCONFIG_KASAN=y\nCONFIG_DEBUG_ENTRY=y\n",
		Base:     with(x86Base, "KASAN", "y", "DEBUG_ENTRY", "y", "NOINSTR_VALIDATION", "y"),
	},
	{
		Name: "arm64", Arch: "arm64", Make: []string{"CROSS_COMPILE=aarch64-linux-gnu-"}, Compiler: "aarch64-linux-gnu-gcc",
		Tools:    []Tool{{"aarch64-linux-gnu-gcc", "gcc-12-aarch64-linux-gnu, which conflicts with gcc-multilib: scripts/setup.sh unpacks it"}, {"aarch64-linux-gnu-ld", "binutils-aarch64-linux-gnu"}},
		What:     "arm64 cross-compiled: the generic code and the headers every file includes, no unwinder of the series",
		Covers:   "tinyconfig for arm64 cross-compiled with Debian's gcc-12-aarch64-linux-gnu (`CROSS_COMPILE=aarch64-linux-gnu-`): the generic code and the headers every file includes (`<linux/sched.h>` includes `unwind_deferred_types.h`), with no unwinder of the series",
		Fragment: "CONFIG_PERF_EVENTS=y\n",
		Base:     map[string]string{"ARM64": "y", "PERF_EVENTS": "y", "UNWIND_USER": "n"},
	},
}

// DefaultConfigs are the configurations built unless --configs names
// others: those of Configs marked Default, the three x86 ones.
var DefaultConfigs = namesOf(func(c Config) bool { return c.Default })

// ConfigSets are names --configs takes for several configurations:
// "default" (DefaultConfigs) and "robot", every configuration of Configs.
var ConfigSets = map[string][]string{
	"default": DefaultConfigs,
	"robot":   namesOf(func(Config) bool { return true }),
}

// namesOf returns the names of the configurations of Configs that keep
// says to keep, in the order of Configs.
func namesOf(keep func(Config) bool) []string {
	var names []string
	for _, c := range Configs {
		if keep(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// ConfigsMarkdown returns docs/build.md's table of the configurations:
// each one's name, what it covers and whether it is built by default.
func ConfigsMarkdown() string {
	var b strings.Builder
	b.WriteString("| config | what it covers | built |\n|---|---|---|\n")
	for _, c := range Configs {
		built := "with `--configs " + c.Name + "` or `robot`"
		if c.Default {
			built = "by default"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Name, c.Covers, built)
	}
	return b.String()
}

// ExpandConfigs turns the names --configs gives (configurations and
// sets such as "robot") into configuration names, in the order of
// Configs, each once.
func ExpandConfigs(names []string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		if set, ok := ConfigSets[n]; ok {
			for _, c := range set {
				want[c] = true
			}
			continue
		}
		if _, err := ConfigNamed(n); err != nil {
			return nil, err
		}
		want[n] = true
	}
	var out []string
	for _, c := range Configs {
		if want[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out, nil
}

// ConfigFacts is the name of the spec's facts template (facts/configs.tmpl)
// that gives, for each configuration by name, the symbols it must have
// after a patch: "x86_64: UNWIND_USER=y HAVE_UNWIND_USER_FP=y ...".
const ConfigFacts = "configs"

// WithFinal returns c with Final set from the facts the revision gives
// after patch step; a revision without such facts, or without a line for
// c, leaves Final empty (nothing is checked).
func WithFinal(c Config, r *spec.Revision, step int) (Config, error) {
	if r == nil || r.Spec().Facts[ConfigFacts] == nil {
		return c, nil
	}
	facts, err := r.Facts(ConfigFacts, step)
	if err != nil {
		return c, err
	}
	c.Final = nil
	name := c.Facts
	if name == "" {
		name = c.Name
	}
	line, ok := facts[name]
	if !ok {
		return c, nil
	}
	c.Final = map[string]string{}
	for _, w := range strings.Fields(line) {
		sym, v, ok := strings.Cut(w, "=")
		if !ok || sym == "" || (v != "y" && v != "n" && v != "m") {
			return c, fmt.Errorf("v%d facts/%s.tmpl: %s: want SYMBOL=y|n|m, got %q", r.Version, ConfigFacts, c.Name, w)
		}
		c.Final[sym] = v
	}
	return c, nil
}

// ConfigNamed returns the configuration called name.
func ConfigNamed(name string) (Config, error) {
	var names []string
	for _, c := range Configs {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	for n := range ConfigSets {
		names = append(names, n)
	}
	sort.Strings(names[len(Configs):])
	return Config{}, fmt.Errorf("unknown configuration %q: choose among %s", name, strings.Join(names, ", "))
}
