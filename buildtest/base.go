package buildtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/kbuild"
)

// parserVersion changes when the diagnostics kept from a base build
// change meaning, so that an older base build is not reused.
const parserVersion = 2

// makeArgs are the make arguments of every build of this configuration.
func (r *runner) makeArgs() []string {
	return append([]string{"--output-sync=target"}, r.flags...)
}

// buildBase builds the whole base with the flags, once: a build directory
// whose base was built with the same inputs is reused. It reports
// whether it built.
func (r *runner) buildBase(ctx context.Context, commit string, overlay map[string][]byte) (bool, error) {
	r.baseKey = r.baseInputs(commit, overlay)
	if r.state.BaseKey == r.baseKey && r.state.BaseConfig == nil {
		// Built by a kpatch that did not record the base's
		// configuration: make it again from the base's Kconfig files.
		os.Remove(filepath.Join(r.d.Obj, "kpatch-config-key"))
		if _, err := r.configure(ctx); err == nil && r.loadConfig() == nil {
			r.state.BaseConfig = r.config
		}
	}
	if r.state.BaseKey == r.baseKey && r.state.BaseConfig != nil {
		// The .config on disk may be a later step's.
		err := r.loadConfig()
		r.config = r.state.BaseConfig
		if err == nil {
			if err := r.scan(); err != nil {
				return false, err
			}
			r.logf("base %s built in an earlier run (%d objects)", short(commit), len(r.cmds))
			return false, nil
		}
	}
	r.logf("building the base %s in %s (full build, %s)", short(commit), r.d.Obj, strings.Join(r.flags, " "))
	// A full build from an empty object tree, so that every object's base
	// warnings are seen.
	if err := os.RemoveAll(r.d.Obj); err != nil {
		return false, err
	}
	r.state.BaseKey = ""
	if _, err := r.configure(ctx); err != nil {
		return false, err
	}
	if err := r.loadConfig(); err != nil {
		return false, err
	}
	p := newOutputParser(r.d.Rel)
	if err := r.makeWith(ctx, p, false, &r.baseCPU, "vmlinux"); err != nil {
		return false, err
	}
	r.state.BaseWarnings = map[string][]string{}
	for obj, res := range p.results {
		for _, w := range res.Warnings {
			r.state.BaseWarnings[obj] = append(r.state.BaseWarnings[obj], w.Key())
		}
	}
	if err := r.scan(); err != nil {
		return false, err
	}
	r.state.BaseKey = r.baseKey
	r.state.BaseConfig = r.config
	r.state.Steps = map[string]stepRecord{} // step results were relative to another base
	nw := 0
	for _, ws := range r.state.BaseWarnings {
		nw += len(ws)
	}
	r.logf("base built: %d objects, %d warnings (the reference for new ones)", len(r.cmds), nw)
	return true, r.state.save(r.d.Root)
}

// baseInputs hashes the inputs of the base build and how the base is
// known (a full build, or on demand).
func (r *runner) baseInputs(commit string, overlay map[string][]byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", parserVersion, commit, r.d.Src, r.cfg.Arch, r.cfg.Start, r.cfg.Fragment, strings.Join(r.flags, " "), compilerID(r.ctx, r.compilerCommand()))
	if r.lazy() {
		// The steps' results depend on how the base's answers are found.
		fmt.Fprintf(h, "%s %d\x00", BaseOnDemand, lazyVersion)
	}
	for _, p := range sortedKeys(overlay) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(overlay[p]))
		h.Write(overlay[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// configure makes the configuration of the base build.
func (r *runner) configure(ctx context.Context) (map[string]string, error) {
	return r.d.ConfigureWith(ctx, kbuild.ConfigOptions{Arch: r.cfg.Arch, Start: r.cfg.Start, Fragment: r.cfg.Fragment, Want: r.cfg.Base, Args: r.flags})
}

// compilerCommand is the compiler command of this configuration's
// builds, wrappers included.
func (r *runner) compilerCommand() string {
	if cc := ccFor(r.o.CC, r.cfg); cc != "" {
		return cc
	}
	if r.cfg.Compiler != "" {
		return r.cfg.Compiler
	}
	return "gcc"
}

// scan reads the dependencies of the ordinary objects of the object tree.
func (r *runner) scan() error {
	cmds, err := kbuild.ScanObjects(r.d.Obj)
	if err != nil {
		return err
	}
	archived, err := kbuild.ArchivedObjects(r.d.Obj)
	if err != nil {
		return err
	}
	r.cmds = map[string]*kbuild.CmdFile{}
	r.names = map[string][]string{}
	for o, c := range cmds {
		if archived[o] {
			r.cmds[o] = c
		}
	}
	return nil
}

func (r *runner) loadConfig() error {
	b, err := os.ReadFile(filepath.Join(r.d.Obj, ".config"))
	if err != nil {
		return err
	}
	r.confRaw = b
	r.config, err = kbuild.ParseConfig(bytes.NewReader(b))
	return err
}
