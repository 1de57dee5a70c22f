package main

import (
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"

	"kpatch/plumbing/kernelsrc"
	"kpatch/series"
)

// The git config keys that set a default for the series flags once, as
// b4 keeps its defaults in git config: read by the real git in the
// directory kpatch runs in (the repository's config, the user's global
// one, the system's), with git's path expansion (~/linux).
const (
	configTree  = "kpatch.tree"  // --tree, where the command reads "." by default
	configBase  = "kpatch.base"  // --base, where the command takes --tree
	configStack = "kpatch.stack" // --stack, when neither -v, --stack nor --on is given
)

// readGitConfig returns the kpatch.* keys git config has for the working
// directory, lower case as git gives them; none when git is missing or
// nothing is set.
func readGitConfig() map[string]string {
	out, err := exec.Command("git", "config", "--type=path", "--get-regexp", `^kpatch\.`).Output()
	m := map[string]string{}
	if err != nil {
		return m // exit 1: nothing set; no git: nothing to read
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			m[k] = v
		}
	}
	return m
}

// applyConfig gives the flags the user did not set the defaults git
// config has for them, and records which came from there.
func (sf *seriesFlags) applyConfig() {
	if sf.fs == nil || sf.configured != nil {
		return
	}
	sf.configured = map[string]string{}
	set := map[string]bool{}
	sf.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := readGitConfig()
	use := func(flagName, key string, dst *string) {
		if v, ok := cfg[key]; ok && v != "" && !set[flagName] {
			*dst = v
			sf.configured[flagName] = key
		}
	}
	if sf.spec.tree != "" {
		use("tree", configTree, sf.tree)
	}
	if !sf.spec.noTree {
		use("base", configBase, sf.base)
	}
	if !sf.spec.noVer && !sf.spec.noStack && !set["v"] && !set["on"] {
		use("stack", configStack, sf.stack)
	}
	if set["v"] && !set["stack"] && !set["on"] {
		*sf.stack = "" // -v alone names a revision of the main series, whatever the default stack
	}
}

// stackDefaulted reports whether --stack holds the command's own default:
// neither -v, --stack, --on nor git config kpatch.stack chose the series.
func (sf *seriesFlags) stackDefaulted() bool {
	sf.applyConfig()
	set := map[string]bool{}
	sf.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return sf.spec.stack != "" && *sf.stack == sf.spec.stack && !set["v"] && !set["stack"] && !set["on"] && sf.configured["stack"] == ""
}

// baseRefused explains a base the tree lacks (kernelsrc.ErrUnknownRev)
// that the user did not give with --base (the revision's recorded base,
// or kpatch.base): where it came from, the tags the tree has, and how to
// give another one, by flag or once in git config.
func (sf *seriesFlags) baseRefused(sel *series.Selection, err error) error {
	if !errors.Is(err, kernelsrc.ErrUnknownRev) {
		return err
	}
	tree := *sf.tree
	if tree == "" {
		tree = "."
	}
	base, from := *sf.base, ""
	switch {
	case base == "":
		base, from = sel.Revision.Base, sel.Revision.Name()+" records it as its base"
	case sf.configured["base"] != "":
		from = "git config " + configBase
	default:
		return err // --base as given: the tree's reader says what is wrong with it
	}
	tags := treeTags(tree)
	have := "it has no tags"
	fix := "give a base it has with --base REV"
	if len(tags) > 0 {
		shown := tags
		if len(shown) > 8 {
			shown = shown[:8]
		}
		have = "its tags: " + strings.Join(shown, ", ")
		if len(tags) > len(shown) {
			have += fmt.Sprintf(" and %d more", len(tags)-len(shown))
		}
		fix = fmt.Sprintf("give one with --base %s, or set it once: git config %s %s", tags[0], configBase, tags[0])
	}
	return &baseError{fmt.Sprintf("%s does not have %s (%s; %s): %s", tree, base, from, have, fix)}
}

// baseError is a base the tree lacks, said with what to do about it; it
// is a kernelsrc.ErrUnknownRev (bad input).
type baseError struct{ msg string }

func (e *baseError) Error() string { return e.msg }
func (e *baseError) Unwrap() error { return kernelsrc.ErrUnknownRev }

// treeTags returns the tags of the git repository at tree, the newest
// version first, as git tag --sort=-version:refname lists them; none
// when git cannot read it.
func treeTags(tree string) []string {
	out, err := exec.Command("git", "-C", tree, "tag", "--list", "--sort=-version:refname").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}
