package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"kpatch/plumbing/gitapply"
)

// checkpatchSame returns the verify rule that reports what checkpatch.pl
// reports as typ (with msg), or "".
func checkpatchSame(typ, msg string) string {
	switch typ {
	case "BAD_SIGN_OFF":
		switch {
		case strings.HasPrefix(msg, "Co-developed-by: must be immediately followed"), strings.HasPrefix(msg, "Co-developed-by and Signed-off-by: name/email do not match"):
			return "CO_DEVELOPED_BY"
		case strings.HasPrefix(msg, "Duplicate signature"):
			return "DUPLICATE_SIGN_OFF"
		case strings.HasPrefix(msg, "Unrecognized email address"):
			return "TRAILER_EMAIL"
		}
	case "NO_AUTHOR_SIGN_OFF", "MISSING_SIGN_OFF":
		return "AUTHOR_SIGN_OFF"
	case "TYPO_SPELLING":
		return "SPELLING"
	case "REPEATED_WORD", "LONG_LINE", "TRAILING_WHITESPACE", "SPDX_LICENSE_TAG", "IS_ENABLED_CONFIG", "COMMIT_MESSAGE", "BAD_FIXES_TAG":
		return typ
	}
	return ""
}

// patchLevel are the rules verify and checkpatch.pl report once per patch,
// each at its own line: the same finding whatever the line.
var patchLevel = map[string]bool{"AUTHOR_SIGN_OFF": true, "COMMIT_MESSAGE": true}

const checkpatchWhy = "scripts/checkpatch.pl reports it, and maintainers run checkpatch on what they apply"

var checkpatchLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+?):(\d+): (ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$`)
})

// CheckpatchTimeout is how long Checkpatch lets scripts/checkpatch.pl run
// on n patches when Options.CheckpatchTimeout is zero: a minute, and two
// seconds a patch (it takes about a third of a second a patch).
func CheckpatchTimeout(n int) time.Duration { return time.Minute + time.Duration(n)*2*time.Second }

// checkpatchRoot lists what checkpatch.pl's tree mode reads of the tree:
// the files and directories of its top_of_kernel_tree test and the files
// it reads. scripts/get_maintainer.pl is left out: checkpatch runs it once
// per file for its OBSOLETE warning (a file MAINTAINERS marks obsolete),
// which cost more than the rest of its run (2.8 of 4.8 s on v11).
var checkpatchRoot = []string{"COPYING", "CREDITS", "Kbuild", "MAINTAINERS", "Makefile", "README",
	"scripts/checkpatch.pl", "scripts/spelling.txt", "scripts/const_structs.checkpatch"}

var checkpatchDirs = []string{"Documentation", "arch", "include", "drivers", "fs", "init", "ipc", "kernel", "lib", "scripts"}

// Checkpatch runs the tree's scripts/checkpatch.pl on every patch of s (one
// perl for all patches) in tree mode, as a maintainer runs it in their
// tree, and returns own with checkpatch's findings added: those verify
// already reports (same rule, patch and place) are left out, the others
// keep checkpatch's type as their ID.
//
// The tree checkpatch.pl reads is a directory laid out as the base's root
// (checkpatchRoot, and the files the series changes as the base has them),
// with the tree's git repository as GIT_DIR, so that it looks commit ids up
// in the tree's history (a hex dump is no commit). A tree without history
// before its base (Debian's, one commit) cannot say whether a commit
// exists: checkpatch's UNKNOWN_COMMIT_ID is left out then, and without git
// (a plain directory) its GIT_COMMIT_ID too, and the report says so.
func Checkpatch(ctx context.Context, s *Series, own []Finding, opt Options) ([]Finding, error) {
	if s.Tree == nil {
		return nil, errors.New("--checkpatch runs the tree's scripts/checkpatch.pl: give the tree with --tree")
	}
	perl, err := exec.LookPath("perl")
	if err != nil {
		return nil, errors.New("--checkpatch needs perl: install it (apt-get install perl)")
	}
	dir, err := os.MkdirTemp("", "kpatch-checkpatch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "tree")
	for _, d := range checkpatchDirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	write := func(p string, c []byte) error {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return err
		}
		return os.WriteFile(f, c, 0o644)
	}
	for _, f := range checkpatchRoot {
		c, err := s.Tree.ReadFile(f)
		if err != nil {
			if f == "scripts/checkpatch.pl" {
				return nil, fmt.Errorf("--checkpatch: %w", err)
			}
			continue
		}
		if err := write(f, c); err != nil {
			return nil, err
		}
	}
	for _, p := range s.Patches {
		for _, f := range p.Files {
			// A path git refuses (PATCH_APPLY reports it) is neither read
			// from the tree nor laid out: "../x" would be outside both.
			if !gitapply.ValidPath(f.Path, 0) || !filepath.IsLocal(f.Path) {
				continue
			}
			if c, err := s.Tree.ReadFile(f.Path); err == nil {
				if err := write(f.Path, c); err != nil {
					return nil, err
				}
			}
		}
	}
	args := []string{filepath.Join(root, "scripts", "checkpatch.pl"), "--root=" + root, "--no-color", "--terse", "--show-types", "--no-summary"}
	if err := CheckCheckpatchArgs(opt.CheckpatchArgs); err != nil {
		return nil, err
	}
	args = append(args, opt.CheckpatchArgs...)
	offsets := map[string]int{}
	byName := map[string]*Patch{}
	for _, p := range s.Patches {
		text, off := p.checkpatchText()
		name := filepath.Join(dir, fmt.Sprintf("%04d.patch", p.Number))
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return nil, err
		}
		args = append(args, name)
		offsets[name], byName[name] = off, p
	}
	timeout := opt.CheckpatchTimeout
	if timeout == 0 {
		timeout = CheckpatchTimeout(len(s.Patches))
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	history := treeHistory(runCtx, s)
	cmd := exec.CommandContext(runCtx, perl, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_DIR=")
	if history.gitDir != "" {
		cmd.Env = append(os.Environ(), "GIT_DIR="+history.gitDir)
	}
	cmd.WaitDelay = time.Second // a child holding the output open does not keep verify waiting
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if runCtx.Err() != nil {
		return nil, fmt.Errorf("scripts/checkpatch.pl did not finish in %v on %d patches and was stopped: run without --checkpatch, or check that perl and the tree's checkpatch.pl work", timeout, len(s.Patches))
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("checkpatch.pl: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	ignore := map[string]bool{}
	for _, id := range opt.Ignore {
		ignore[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	type place struct {
		id, file string
		patch    int
		line     int
	}
	have := map[place]bool{}
	for _, f := range own {
		have[place{f.ID, f.File, f.Patch, f.Line}] = true
		if patchLevel[f.ID] {
			have[place{f.ID, "", f.Patch, 0}] = true
		}
	}
	all := append([]Finding{}, own...)
	left := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		m := checkpatchLine().FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		p := byName[m[1]]
		if p == nil || ignore[m[4]] {
			continue
		}
		if history.unknown[m[4]] {
			left[m[4]]++
			continue
		}
		n, _ := strconv.Atoi(m[2])
		f := Finding{ID: m[4], Severity: Warning, Patch: p.Number, Subject: p.Subject, Message: m[5], Why: checkpatchWhy, Source: "checkpatch"}
		if m[3] == "ERROR" {
			f.Severity = Error
		}
		if path, line, ok := p.treeLine(n); ok {
			f.File, f.Line = path, line
		} else {
			f.File, f.Line = p.MailFile, n+offsets[m[1]]
		}
		if id := checkpatchSame(m[4], m[5]); id != "" {
			if ignore[id] || have[place{id, f.File, f.Patch, f.Line}] || patchLevel[id] && have[place{id, "", f.Patch, 0}] {
				continue
			}
		}
		all = append(all, f)
	}
	if len(left) > 0 {
		s.noteChecked(history.note(left))
	}
	return Sorted(all), nil
}

// treeCommits is what checkpatch.pl can know of the tree's commits: its
// git directory ("" for a plain directory) and the types it cannot judge
// without the history.
type treeCommits struct {
	gitDir  string
	why     string
	unknown map[string]bool
}

// treeHistory finds the git directory of s's tree, and whether it has
// history before its base (git rev-list).
func treeHistory(ctx context.Context, s *Series) treeCommits {
	if !s.Tree.IsGit() {
		return treeCommits{why: "the tree is not a git repository", unknown: map[string]bool{"UNKNOWN_COMMIT_ID": true, "GIT_COMMIT_ID": true}}
	}
	out, err := exec.CommandContext(ctx, "git", "-C", s.Tree.Dir, "rev-parse", "--absolute-git-dir").Output()
	if err != nil {
		return treeCommits{why: "git cannot read the tree's repository", unknown: map[string]bool{"UNKNOWN_COMMIT_ID": true, "GIT_COMMIT_ID": true}}
	}
	tc := treeCommits{gitDir: strings.TrimSpace(string(out))}
	n, err := exec.CommandContext(ctx, "git", "--git-dir="+tc.gitDir, "rev-list", "--count", "--max-count=2", s.Tree.Commit.String()).Output()
	if err == nil && strings.TrimSpace(string(n)) == "1" {
		tc.why = "the tree has no history before " + s.Tree.Base
		tc.unknown = map[string]bool{"UNKNOWN_COMMIT_ID": true}
	}
	return tc
}

// note says which of checkpatch's findings were left out, and why.
func (tc treeCommits) note(left map[string]int) string {
	var parts []string
	for _, id := range sortedKeys(left) {
		parts = append(parts, fmt.Sprintf("%s %d", id, left[id]))
	}
	return fmt.Sprintf("checkpatch.pl cannot look commits up (%s): its %s left out", tc.why, strings.Join(parts, ", "))
}

// checkpatchText returns the patch as a mail checkpatch reads, and what to
// add to its line numbers to get lines of MailFile.
func (p *Patch) checkpatchText() (string, int) {
	if p.mail == nil { // not read by package mail: generated, or made by a caller
		if !strings.HasPrefix(p.Mail, "From ") {
			// give it the mbox line, so that checkpatch reads the
			// headers as headers and not as the commit message
			return "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n" + p.Mail, p.MailLine - 2
		}
		return p.Mail, p.MailLine - 1
	}
	return p.mail.MailText(), p.MailLine - 1
}

var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@`) })

// treeLine maps line n of the patch text checkpatch read to a file and
// line of the tree after the patch, for added and context lines of a hunk.
func (p *Patch) treeLine(n int) (string, int, bool) {
	text, _ := p.checkpatchText()
	lines := strings.Split(text, "\n")
	if n < 1 || n > len(lines) {
		return "", 0, false
	}
	path, cur, inHunk := "", 0, false
	var hunk []string // the hunk's lines up to n, for placing it
	hunkStart := 0
	for i := 0; i < n; i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inHunk = false
		case strings.HasPrefix(l, "+++ "):
			path = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if j := strings.IndexByte(path, '\t'); j >= 0 {
				path = path[:j]
			}
		case hunkHeader().MatchString(l):
			cur, _ = strconv.Atoi(hunkHeader().FindStringSubmatch(l)[1])
			inHunk, hunk, hunkStart = true, nil, cur
			continue
		}
		if !inHunk {
			continue
		}
		hunk = append(hunk, l)
		if i == n-1 {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, " ") {
				return path, cur + p.hunkOffset(path, hunkStart, hunk), true
			}
			return "", 0, false
		}
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, " ") {
			cur++
		} else if !strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "\\") {
			inHunk = false
		}
	}
	return "", 0, false
}

// hunkOffset returns how many lines from its header's new start git
// placed the hunk whose lines (up to one checkpatch reports) are given:
// git apply takes an offset where the context moved, and File.Added has
// the lines where it placed them. 0 when the hunk adds nothing yet, or
// its lines are not found.
func (p *Patch) hunkOffset(path string, start int, hunk []string) int {
	f := fileOf(p, path)
	if f == nil || !f.Known {
		return 0
	}
	// the first added line of the hunk, and where the header puts it
	at := start
	for _, l := range hunk {
		if strings.HasPrefix(l, "+") {
			text := l[1:]
			best, found := 0, false
			for _, a := range f.Added {
				if a.Text == text && (!found || abs(a.N-at) < abs(best-at)) {
					best, found = a.N, true
				}
			}
			if found {
				return best - at
			}
			return 0
		}
		if strings.HasPrefix(l, " ") {
			at++
		}
	}
	return 0
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
