package kbuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// ParseConfig reads a .config and returns symbol (without CONFIG_) to
// value; "is not set" lines give "n".
func ParseConfig(r io.Reader) (map[string]string, error) {
	cfg := map[string]string{}
	sc := bufio.NewScanner(r)
	notSet := regexp.MustCompile(`^# CONFIG_([A-Za-z0-9_]+) is not set`)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if m := notSet.FindStringSubmatch(l); m != nil {
			cfg[m[1]] = "n"
			continue
		}
		if !strings.HasPrefix(l, "CONFIG_") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "CONFIG_"), "=")
		if ok {
			cfg[k] = v
		}
	}
	return cfg, sc.Err()
}

// ParseFragment parses a config fragment ("CONFIG_X=y" and "# CONFIG_X
// is not set" lines) like ParseConfig.
func ParseFragment(frag string) map[string]string {
	m, _ := ParseConfig(strings.NewReader(frag))
	return m
}

// ConfigProblem is a symbol that did not get the wanted value.
type ConfigProblem struct {
	Symbol string
	Want   string
	Got    string // "" if absent from .config (not defined or not visible)
	Why    string // explanation from the Kconfig sources
}

// String says which option has which value and what it should be.
func (p ConfigProblem) String() string {
	got := p.Got
	if got == "" {
		got = "absent"
	}
	return fmt.Sprintf("CONFIG_%s=%s, want %s: %s", p.Symbol, got, p.Want, p.Why)
}

// ConfigError lists the symbols that olddefconfig did not set as wanted.
type ConfigError struct{ Problems []ConfigProblem }

// Error implements the error interface.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("kernel configuration is missing what the test needs:")
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Check compares cfg with want (symbol to value; "n" also matches an
// absent symbol) and explains each mismatch from the Kconfig files under
// src.
func Check(cfg, want map[string]string, src string) []ConfigProblem {
	var syms []string
	for s := range want {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	var probs []ConfigProblem
	for _, s := range syms {
		got, ok := cfg[s]
		if got == want[s] || (!ok && want[s] == "n") {
			continue
		}
		probs = append(probs, ConfigProblem{Symbol: s, Want: want[s], Got: got, Why: Explain(src, s, cfg)})
	}
	return probs
}

// Selectors returns the symbols whose entries select sym in the Kconfig
// files under src (conditions aside; arch/ other than x86 skipped, as
// Explain reads them), each once.
func Selectors(src, sym string) []string {
	_, sels := scanKconfig(src, sym)
	var out []string
	for _, s := range sels {
		if s.by != "" && !slices.Contains(out, s.by) {
			out = append(out, s.by)
		}
	}
	return out
}

// Explain says why symbol sym may not be enabled: where it is defined
// (or that no Kconfig defines it), its dependencies with their values in
// cfg, and which symbols select it with theirs.
func Explain(src, sym string, cfg map[string]string) string {
	defs, selectors := scanKconfig(src, sym)
	if len(defs) == 0 {
		return "no Kconfig file defines it (the series does not add it at this revision?)"
	}
	val := func(s string) string {
		if v, ok := cfg[s]; ok {
			return s + "=" + v
		}
		return s + "=n"
	}
	var parts []string
	for _, d := range defs {
		desc := "defined in " + d.file
		if d.prompt == "" {
			desc += " without a prompt (only a select can enable it)"
		}
		if len(d.depends) > 0 {
			desc += "; depends on " + strings.Join(d.depends, " && ") + " [" + valuesIn(d.depends, val) + "]"
		}
		parts = append(parts, desc)
	}
	if len(selectors) == 0 {
		parts = append(parts, "nothing selects it")
	} else {
		var sel []string
		for _, s := range selectors {
			e := s.by
			if s.cond != "" {
				e += " if " + s.cond
			}
			sel = append(sel, e+" ("+s.file+") ["+valuesIn(append([]string{s.by}, s.cond), val)+"]")
		}
		parts = append(parts, "selected by "+strings.Join(sel, ", "))
	}
	return strings.Join(parts, "; ")
}

var (
	symRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Z][A-Z0-9_]+`) })
	ifRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\sif\s`) })
)

func valuesIn(exprs []string, val func(string) string) string {
	seen := map[string]bool{}
	var out []string
	for _, e := range exprs {
		for _, s := range symRE().FindAllString(e, -1) {
			if !seen[s] {
				seen[s] = true
				out = append(out, val(s))
			}
		}
	}
	return strings.Join(out, " ")
}

type kdef struct {
	file, prompt string
	depends      []string
}

type ksel struct{ file, by, cond string }

// scanKconfig finds the definitions of sym and the select statements of
// it in every Kconfig* file under src (arch/ other than x86 skipped).
func scanKconfig(src, sym string) ([]kdef, []ksel) {
	var defs []kdef
	var sels []ksel
	filepath.WalkDir(src, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if de.IsDir() {
			if strings.HasPrefix(rel, "arch/") && rel != "arch/x86" && !strings.HasPrefix(rel, "arch/x86/") && strings.Count(rel, "/") == 1 {
				return filepath.SkipDir
			}
			if rel == "Documentation" || rel == "tools" || rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(de.Name(), "Kconfig") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte(sym)) {
			return nil
		}
		var cur string // symbol of the entry we are in
		var def *kdef
		for _, line := range strings.Split(string(data), "\n") {
			t := strings.TrimSpace(line)
			f := strings.Fields(t)
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "config", "menuconfig":
				if def != nil {
					defs = append(defs, *def)
					def = nil
				}
				if len(f) > 1 {
					cur = f[1]
				}
				if cur == sym {
					def = &kdef{file: rel}
				}
			case "bool", "tristate", "prompt":
				if def != nil && len(f) > 1 {
					def.prompt = strings.Join(f[1:], " ")
				}
			case "depends":
				if def != nil && len(f) > 2 {
					def.depends = append(def.depends, strings.Join(f[2:], " "))
				}
			case "select", "imply":
				if len(f) > 1 && f[1] == sym && f[0] == "select" {
					cond := ""
					if loc := ifRE().FindStringIndex(t); loc != nil {
						cond = strings.TrimSpace(t[loc[1]:])
					}
					sels = append(sels, ksel{file: rel, by: cur, cond: cond})
				}
			case "endmenu", "endif", "menu", "if", "choice", "endchoice", "source", "comment":
				if def != nil {
					defs = append(defs, *def)
					def = nil
				}
			}
		}
		if def != nil {
			defs = append(defs, *def)
		}
		return nil
	})
	return defs, sels
}

// Configure writes Obj/.config from "make tinyconfig" plus fragment, runs
// olddefconfig, and checks that every symbol of want has its value. The
// .config is only rewritten when its content changes, so that an
// unchanged configuration does not rebuild anything. The configuration is
// made in a scratch O= directory; make's output is returned in the error
// when it fails. A *ConfigError lists the symbols of want that differ.
//
// When the inputs (arch, fragment, want, compiler version and every
// Kconfig file of the tree) are those of the last successful Configure,
// the existing .config is only checked again, without running make.
func (d *Dir) Configure(ctx context.Context, arch, fragment string, want map[string]string) (map[string]string, error) {
	return d.ConfigureWith(ctx, ConfigOptions{Arch: arch, Fragment: fragment, Want: want})
}

// ConfigOptions says how ConfigureWith makes a configuration.
type ConfigOptions struct {
	Arch     string
	Start    string // the make target it starts from: "tinyconfig" (""), "defconfig", ...
	Fragment string // added to it before olddefconfig
	Want     map[string]string
	Args     []string // make variables of the build ("LLVM=1", "CROSS_COMPILE=..."), which Kconfig sees
}

// ConfigureWith is Configure from another starting configuration and
// with make variables of the build (the compiler decides symbols such as
// CC_IS_CLANG).
func (d *Dir) ConfigureWith(ctx context.Context, o ConfigOptions) (map[string]string, error) {
	arch, fragment, want := o.Arch, o.Fragment, o.Want
	start := o.Start
	if start == "" {
		start = "tinyconfig"
	}
	if err := os.MkdirAll(d.Obj, 0o755); err != nil {
		return nil, err
	}
	keyed := fragment // what Configure has always hashed
	if o.Start != "" || len(o.Args) > 0 {
		keyed = start + "\x00" + strings.Join(o.Args, " ") + "\x00" + fragment
	}
	key := d.configKey(ctx, arch, keyed, want)
	keyPath := filepath.Join(d.Obj, configKeyFile)
	if b, err := os.ReadFile(keyPath); err == nil && key != "" && string(b) == key {
		if data, err := os.ReadFile(filepath.Join(d.Obj, ".config")); err == nil {
			cfg, err := ParseConfig(bytes.NewReader(data))
			if err == nil && len(Check(cfg, want, d.Src)) == 0 {
				return cfg, nil
			}
		}
	}
	os.Remove(keyPath)
	// Work on a scratch object directory: make tinyconfig would touch
	// Obj/.config and include/config even when nothing changes.
	scratch := filepath.Join(d.Root, "config-scratch")
	os.RemoveAll(scratch)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "make", append(append([]string{"-s", "ARCH=" + arch, "O=" + scratch}, o.Args...), args...)...)
		cmd.Dir = d.Src
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run(start); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(scratch, ".config")
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString("\n# kpatch test fragment\n" + fragment)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := run("olddefconfig"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if probs := Check(cfg, want, d.Src); len(probs) > 0 {
		return cfg, &ConfigError{Problems: probs}
	}
	if _, err := WriteIfChanged(filepath.Join(d.Obj, ".config"), data, 0o644); err != nil {
		return nil, err
	}
	if key != "" {
		os.WriteFile(keyPath, []byte(key), 0o644)
	}
	return cfg, nil
}

const configKeyFile = "kpatch-config-key"

// configKey hashes what the configuration depends on; "" if it cannot.
func (d *Dir) configKey(ctx context.Context, arch, fragment string, want map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", arch, fragment)
	var syms []string
	for k, v := range want {
		syms = append(syms, k+"="+v)
	}
	sort.Strings(syms)
	fmt.Fprintf(h, "%s\x00", strings.Join(syms, ","))
	cc, err := exec.CommandContext(ctx, "gcc", "--version").Output()
	if err != nil {
		return ""
	}
	h.Write(cc)
	err = filepath.WalkDir(d.Src, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			if n := de.Name(); n == ".git" || n == "Documentation" || n == "tools" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(de.Name(), "Kconfig") && p != filepath.Join(d.Src, "Makefile") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
