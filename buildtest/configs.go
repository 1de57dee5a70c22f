package buildtest

import (
	"fmt"
	"strings"

	"kpatch/spec"
)

// Config is one kernel configuration of the matrix: tinyconfig plus a
// fragment, for an architecture.
type Config struct {
	Name     string
	Arch     string // make ARCH=
	Fragment string // added to tinyconfig
	// Base are the symbols the configuration must have at the base;
	// Final those it must have after the last patch built (checked only
	// when the series defines them, i.e. for the unwind series). Final is
	// a fact of the series, not of kpatch: WithFinal takes it from the
	// spec's facts/configs.tmpl for the revision and patch.
	Base, Final map[string]string
	// What says in a few words what the configuration covers.
	What string
}

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
	select UNWIND_USER
`

// Configs are the configurations kpatch test --build builds, in report
// order.
var Configs = []Config{
	{
		Name: "x86_64", Arch: "x86_64",
		What:     "64-bit with IA32 emulation; UNWIND_USER forced on from patch 1, the x86 options on from their patches",
		Fragment: "CONFIG_64BIT=y\nCONFIG_IA32_EMULATION=y\nCONFIG_PERF_EVENTS=y\nCONFIG_" + HookSymbol + "=y\n",
		Base:     map[string]string{"64BIT": "y", "IA32_EMULATION": "y", "COMPAT": "y", "PERF_EVENTS": "y", HookSymbol: "y"},
	},
	{
		Name: "x86_64-noia32", Arch: "x86_64",
		What:     "64-bit without IA32 emulation: the compat paths compiled out, the stubs used before the x86 patches",
		Fragment: "CONFIG_64BIT=y\n# CONFIG_IA32_EMULATION is not set\nCONFIG_PERF_EVENTS=y\n",
		Base:     map[string]string{"64BIT": "y", "IA32_EMULATION": "n", "COMPAT": "n", "PERF_EVENTS": "y"},
	},
	{
		Name: "i386", Arch: "i386",
		What:     "32-bit: the series' x86 options off, every stub used",
		Fragment: "# CONFIG_64BIT is not set\nCONFIG_PERF_EVENTS=y\n",
		Base:     map[string]string{"64BIT": "n", "X86_32": "y", "PERF_EVENTS": "y"},
	},
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
	line, ok := facts[c.Name]
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
	return Config{}, fmt.Errorf("unknown configuration %q: choose among %s", name, strings.Join(names, ", "))
}
