package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/plumbing/kernelsrc"
)

// TestCheckpatch runs the tree's checkpatch.pl on v11, generated and as
// posted: its findings map to the right lines (an ENOSYS warning points at
// a line with ENOSYS, a long commit-log line is over 75 columns), and the
// ones verify also reports are merged away.
func TestCheckpatch(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	s := seed(t)
	s.Tree = tree
	for name, s := range map[string]*Series{"generated": v11Generated(t), "seed": s} {
		t.Run(name, func(t *testing.T) {
			own := Run(s, seriesOpts(t))
			all, err := Checkpatch(context.Background(), s, own, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := map[string]int{}
			for _, f := range all {
				if f.Source != "checkpatch" {
					continue
				}
				n[f.ID]++
				line, ok := textAt(s, f)
				switch f.ID {
				case "ENOSYS":
					if !ok || !contains(line, "ENOSYS") {
						t.Errorf("ENOSYS at %s: line %q", f.Where(), line)
					}
				case "COMMIT_LOG_LONG_LINE":
					if !ok || len(line) <= 75 {
						t.Errorf("COMMIT_LOG_LONG_LINE at %s: line %q", f.Where(), line)
					}
				}
				if id := checkpatchSame(f.ID, f.Message); id != "" {
					for _, o := range own {
						if o.ID == id && o.Patch == f.Patch && o.File == f.File && o.Line == f.Line {
							t.Errorf("%s at %s duplicates verify's %s", f.ID, f.Where(), id)
						}
					}
				}
			}
			// checkpatch's Co-developed-by, long-line and repeated-word
			// warnings are verify's own: merged away.
			for _, id := range []string{"BAD_SIGN_OFF", "LONG_LINE", "REPEATED_WORD"} {
				if n[id] != 0 {
					t.Errorf("%d checkpatch %s left after merging", n[id], id)
				}
			}
			if n["ENOSYS"] != 3 || n["COMMIT_LOG_LONG_LINE"] == 0 {
				t.Errorf("checkpatch findings %v: want 3 ENOSYS and some COMMIT_LOG_LONG_LINE", n)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestCheckpatchTimeout: a checkpatch.pl that never returns is stopped at
// the timeout and said so; one stopped by the caller (Ctrl-C) returns the
// context's error.
func TestCheckpatchTimeout(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"MAINTAINERS", "Kconfig", "kernel/fork.c", "arch/x86/Kconfig", "scripts/checkpatch.pl"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("sleep 600;\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := kernelsrc.OpenDir(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	s := &Series{Source: "hang", Tree: tree, Patches: []*Patch{{Number: 1, Subject: "x", Mail: "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n"}}}
	_, err = Checkpatch(context.Background(), s, nil, Options{CheckpatchTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "scripts/checkpatch.pl did not finish in 500ms on 1 patches and was stopped") {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	if _, err = Checkpatch(ctx, s, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v, want context.Canceled", err)
	}
}

// TestRunStopped: a run whose context is done returns its error, not a
// partial report.
func TestRunStopped(t *testing.T) {
	s := unusedSeries(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fs, err := RunContext(s, Options{Context: ctx})
	if !errors.Is(err, context.Canceled) || fs != nil {
		t.Errorf("RunContext: %d findings, %v", len(fs), err)
	}
	if fs, err := RunContext(s, Options{}); err != nil || len(fs) == 0 {
		t.Errorf("RunContext without a context: %d findings, %v", len(fs), err)
	}
}

// TestCheckpatchHeadersFirst: a mail that starts with its headers (no mbox
// "From " line) gets from checkpatch.pl what the same mail with the line
// gets, at the same lines of the mail.
func TestCheckpatchHeadersFirst(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	full := v11Generated(t).Patch(5)
	first, rest, _ := strings.Cut(full.Mail, "\n")
	if !strings.HasPrefix(first, "From ") {
		t.Fatalf("generated mail starts with %q", first)
	}
	bare := *full
	// The copy's text is its own: not the mail package's reading of the
	// generated mail (mail posted without the line is read through package
	// mail: TestCheckpatchMailWithoutFromLine).
	bare.Mail, bare.MailLine, bare.mail = rest, full.MailLine+1, nil
	var got [2][]string
	for i, p := range []*Patch{full, &bare} {
		fs, err := Checkpatch(context.Background(), &Series{Source: "t", Tree: tree, Patches: []*Patch{p}}, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			got[i] = append(got[i], fmt.Sprintf("%s %s", f.ID, f.Where()))
		}
	}
	if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") || len(got[0]) == 0 {
		t.Errorf("with the From line:\n%s\nwithout:\n%s", strings.Join(got[0], "\n"), strings.Join(got[1], "\n"))
	}
}

// TestCheckpatchArgs: --strict is passed through to the tree's
// checkpatch.pl, which then reports its CHECK findings as warnings on top
// of what it reports without; an option that changes how checkpatch.pl
// reads or reports is refused before it runs.
func TestCheckpatchArgs(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	s := v11Generated(t)
	s.Tree = tree
	count := func(args []string) map[string]int {
		t.Helper()
		all, err := Checkpatch(context.Background(), s, nil, Options{CheckpatchArgs: args})
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, f := range all {
			n[f.ID]++
		}
		return n
	}
	plain, strict := count(nil), count([]string{"--strict"})
	more := 0
	for id, k := range strict {
		if k < plain[id] {
			t.Errorf("%s: %d with --strict, %d without", id, k, plain[id])
		}
		more += k - plain[id]
	}
	if more == 0 {
		t.Errorf("--strict adds no finding: %v", strict)
	}
	t.Logf("--strict adds %d findings: %v (without: %v)", more, strict, plain)
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--strict", "--max-line-length=100", "--codespell"}, true},
		{[]string{"--terse"}, false},
		{[]string{"--file"}, false},
		{[]string{"--max-line-length"}, false},
		{[]string{"--root=/"}, false},
		{[]string{"x.patch"}, false},
	} {
		err := CheckCheckpatchArgs(tc.args)
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "--checkpatch-args: ") {
			t.Errorf("%q: %v", tc.args, err)
		}
	}
	if _, err := Checkpatch(context.Background(), s, nil, Options{CheckpatchArgs: []string{"--fix"}}); err == nil {
		t.Error("--fix was passed to checkpatch.pl")
	}
}
