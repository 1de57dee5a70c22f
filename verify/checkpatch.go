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
	"strconv"
	"strings"
	"time"

	"regexp"
)

// checkpatchIDs maps checkpatch.pl's types to the verify rule that checks
// the same thing, for deduplication.
var checkpatchIDs = map[string]string{
	"BAD_SIGN_OFF":        "CO_DEVELOPED_BY",
	"DUPLICATE_SIGN_OFF":  "DUPLICATE_SIGN_OFF",
	"NO_AUTHOR_SIGN_OFF":  "AUTHOR_SIGN_OFF",
	"TYPO_SPELLING":       "SPELLING",
	"REPEATED_WORD":       "REPEATED_WORD",
	"LONG_LINE":           "LONG_LINE",
	"TRAILING_WHITESPACE": "TRAILING_WHITESPACE",
	"SPDX_LICENSE_TAG":    "SPDX_LICENSE_TAG",
}

const checkpatchWhy = "scripts/checkpatch.pl reports it, and maintainers run checkpatch on what they apply"

var checkpatchLine = regexp.MustCompile(`^(.+?):(\d+): (ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$`)

// CheckpatchTimeout is how long Checkpatch lets scripts/checkpatch.pl run
// on n patches when Options.CheckpatchTimeout is zero: a minute, and two
// seconds a patch (it takes about a third of a second a patch).
func CheckpatchTimeout(n int) time.Duration { return time.Minute + time.Duration(n)*2*time.Second }

// Checkpatch runs the tree's scripts/checkpatch.pl (--no-tree, one perl
// for all patches) on every patch of s and returns own with checkpatch's
// findings added: those verify already reports (same rule, patch and
// place) are left out, the others keep checkpatch's type as their ID.
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
	if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
		return nil, err
	}
	for _, f := range []string{"checkpatch.pl", "spelling.txt", "const_structs.checkpatch"} {
		c, err := s.Tree.ReadFile("scripts/" + f)
		if err != nil {
			if f == "checkpatch.pl" {
				return nil, fmt.Errorf("--checkpatch: %w", err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", f), c, 0o644); err != nil {
			return nil, err
		}
	}
	args := []string{filepath.Join(dir, "scripts", "checkpatch.pl"), "--no-tree", "--no-color", "--terse", "--show-types", "--no-summary"}
	offsets := map[string]int{}
	byName := map[string]*Patch{}
	for _, p := range s.Patches {
		text, off := p.checkpatchText()
		name := fmt.Sprintf("%04d.patch", p.Number)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
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
	cmd := exec.CommandContext(runCtx, perl, args...)
	cmd.Dir = dir
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
	}
	all := append([]Finding{}, own...)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		m := checkpatchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		p := byName[m[1]]
		if p == nil || ignore[m[4]] {
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
		if id, ok := checkpatchIDs[m[4]]; ok {
			if ignore[id] || have[place{id, f.File, f.Patch, f.Line}] {
				continue
			}
		}
		all = append(all, f)
	}
	return Sorted(all), nil
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

var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// treeLine maps line n of the patch text checkpatch read to a file and
// line of the tree after the patch, for added and context lines of a hunk.
func (p *Patch) treeLine(n int) (string, int, bool) {
	text, _ := p.checkpatchText()
	lines := strings.Split(text, "\n")
	if n < 1 || n > len(lines) {
		return "", 0, false
	}
	path, cur, inHunk := "", 0, false
	for i := 0; i < n; i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			inHunk = false
		case strings.HasPrefix(l, "+++ "):
			path = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
		case hunkHeader.MatchString(l):
			cur, _ = strconv.Atoi(hunkHeader.FindStringSubmatch(l)[1])
			inHunk = true
			continue
		}
		if !inHunk {
			continue
		}
		if i == n-1 {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, " ") {
				return path, cur, true
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
