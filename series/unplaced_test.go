package series_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/seriestest"
	"kpatch/series"
	"kpatch/series/hooks"
)

// syntheticTree copies the files the series reads (series.BaseFiles) from
// the Debian tree into a plain directory, passing each through edit.
func syntheticTree(t *testing.T, edit func(path string, b []byte) []byte) string {
	t.Helper()
	src := debianTree(t)
	dir := t.TempDir()
	for _, p := range baseFiles(t) {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		b = edit(p, b)
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// baseFiles is series.BaseFiles of the series' own spec.
func baseFiles(t *testing.T) []string {
	t.Helper()
	sp, err := series.LoadSpec("")
	if err != nil {
		t.Fatal(err)
	}
	return series.BaseFiles(sp)
}

// replaceOnce replaces old, which must occur exactly once, in b.
func replaceOnce(t *testing.T, path string, b []byte, old, new string) []byte {
	t.Helper()
	if n := bytes.Count(b, []byte(old)); n != 1 {
		t.Fatalf("%s has %q %d times, want once", path, old, n)
	}
	return bytes.Replace(b, []byte(old), []byte(new), 1)
}

// lineOf returns the 1-based number of the line of dir/path that is text.
func lineOf(t *testing.T, dir, path, text string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if l == text {
			return i + 1
		}
	}
	t.Fatalf("%s has no line %q", path, text)
	return 0
}

// TestUnplacedAllAtOnce removes three anchors from three files: every
// edit that cannot be placed is reported in one run, each with its patch,
// file, anchor, spec line and the lines of the file most like the anchor,
// numbered as the tree has them; the edits that fail only because an
// unplaced edit adds their anchor say so.
func TestUnplacedAllAtOnce(t *testing.T) {
	dir := syntheticTree(t, func(p string, b []byte) []byte {
		switch p {
		case "arch/Kconfig":
			return replaceOnce(t, p, b, "\nconfig HAVE_HARDLOCKUP_DETECTOR_ARCH\n", "\nconfig HAVE_HARDLOCKUP_DETECTOR_ARCH2\n")
		case "include/linux/entry-common.h":
			return replaceOnce(t, p, b, "#include <linux/kmsan.h>\n", "")
		case "kernel/exit.c":
			return replaceOnce(t, p, b, "\ttaskstats_exit(tsk, group_dead);\n", "\ttaskstats_exit2(tsk, group_dead);\n")
		}
		return b
	})
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "synthetic", Version: 11})
	if s != nil {
		t.Error("a series came back with the error")
	}
	var ue *series.UnplacedError
	if !errors.As(err, &ue) {
		t.Fatalf("got %v, want an *series.UnplacedError", err)
	}
	if !errors.Is(err, hooks.ErrAnchorMissing) {
		t.Error("the error does not match hooks.ErrAnchorMissing")
	}
	want := []struct {
		patch          int
		file, anchor   string
		src, after     string
		firstCandidate string // "" = none
		candidates     int    // at least
	}{
		{1, "arch/Kconfig", "config-after HAVE_HARDLOCKUP_DETECTOR_ARCH", "v11/user-api.patch:49", "", "config HAVE_HARDLOCKUP_DETECTOR_ARCH2", 3},
		{2, "arch/Kconfig", "config-after UNWIND_USER", "v11/fp.patch:15", "v11/user-api.patch:49", "", 0},
		{3, "arch/Kconfig", "config-after HAVE_UNWIND_USER_FP", "v11/compat-fp.patch:12", "v11/fp.patch:15", "", 0},
		{5, "include/linux/entry-common.h", "include-after <linux/kmsan.h>", "v11/cache.patch:43", "", "#include <linux/static_call_types.h>", 10},
		{11, "kernel/exit.c", "statement-after do_exit taskstats_exit", "v11/task-exit.patch:40", "", "\ttaskstats_exit2(tsk, group_dead);", 3},
	}
	if len(ue.Edits) != len(want) {
		t.Fatalf("%d unplaced edits, want %d:\n%v", len(ue.Edits), len(want), err)
	}
	for i, w := range want {
		u := ue.Edits[i]
		if u.Patch != w.patch || u.File != w.file || u.Anchor != w.anchor || u.Src != w.src || u.After != w.after || !errors.Is(u, hooks.ErrAnchorMissing) {
			t.Errorf("edit %d: patch %d %s %q [%s] after %q (%v), want patch %d %s %q [%s] after %q", i, u.Patch, u.File, u.Anchor, u.Src, u.After, u.Err, w.patch, w.file, w.anchor, w.src, w.after)
		}
		if len(u.Candidates) < w.candidates || w.firstCandidate == "" && len(u.Candidates) > 0 {
			t.Errorf("edit %d: %d candidates, want at least %d (none if no first):\n%s", i, len(u.Candidates), w.candidates, strings.Join(u.CandidateLines(), "\n"))
			continue
		}
		if w.firstCandidate != "" && u.Candidates[0].Text != w.firstCandidate {
			t.Errorf("edit %d: first candidate %q, want %q", i, u.Candidates[0].Text, w.firstCandidate)
		}
		for _, c := range u.Candidates {
			if c.File != w.file || c.Line != lineOf(t, dir, c.File, c.Text) {
				t.Errorf("edit %d: candidate %s:%d %q is not that line of the tree", i, c.File, c.Line, c.Text)
			}
		}
	}
	// The message: one line per edit, the candidates indented under it,
	// then the summary.
	lines := strings.Split(err.Error(), "\n")
	var edits []string
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "    ") {
			edits = append(edits, l)
		}
	}
	if len(edits) != 5 || !strings.HasPrefix(edits[0], `patch 1 (user-api): arch/Kconfig: "config-after HAVE_HARDLOCKUP_DETECTOR_ARCH": anchor not found [v11/user-api.patch:49]`) {
		t.Errorf("edit lines:\n%s", strings.Join(edits, "\n"))
	}
	if sum := lines[len(lines)-1]; !strings.HasPrefix(sum, "5 edits (2 of them only because of another) cannot be placed in synthetic, nothing written") || sum != ue.Summary() {
		t.Errorf("summary line %q", sum)
	}
}

// TestDuplicateAnchorBaseLines: an anchor that matches twice is reported
// with the lines as the tree numbers them, not shifted by the edits that
// the same patch (and earlier ones) made to the file before.
func TestDuplicateAnchorBaseLines(t *testing.T) {
	const stmt = "\ttaskstats_exit(tsk, group_dead);\n"
	dir := syntheticTree(t, func(p string, b []byte) []byte {
		if p == "kernel/exit.c" {
			return replaceOnce(t, p, b, stmt, stmt+stmt)
		}
		return b
	})
	first := lineOf(t, dir, "kernel/exit.c", strings.TrimSuffix(stmt, "\n"))
	_, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: dir, Base: "synthetic", Version: 11})
	var ue *series.UnplacedError
	if !errors.As(err, &ue) || len(ue.Edits) != 1 {
		t.Fatalf("got %v, want one unplaced edit", err)
	}
	u := ue.Edits[0]
	if want := fmt.Sprintf("lines %d, %d", first, first+1); u.Detail != want || !errors.Is(u, hooks.ErrAnchorAmbiguous) {
		t.Errorf("detail %q (%v), want %q (patch 11's include edit comes first and shifts them by one)", u.Detail, u.Err, want)
	}
	if u.Patch != 11 || u.Src != "v11/task-exit.patch:40" {
		t.Errorf("patch %d [%s], want 11 [v11/task-exit.patch:40]", u.Patch, u.Src)
	}
}
