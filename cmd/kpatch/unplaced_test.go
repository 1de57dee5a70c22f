package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGenUnplaced runs kpatch gen on a tree with three anchors removed from
// three files: exit 1, every unplaceable edit on stderr (one line each,
// its candidates indented under it, then the summary), the same as a JSON
// object on stdout with --json, no output directory, the tree untouched.
func TestGenUnplaced(t *testing.T) {
	tree := fakeKernel(t, func(p string, b []byte) []byte {
		switch p {
		case "arch/Kconfig":
			return bytes.Replace(b, []byte("\nconfig HAVE_HARDLOCKUP_DETECTOR_ARCH\n"), []byte("\nconfig HAVE_HARDLOCKUP_DETECTOR_ARCH2\n"), 1)
		case "include/linux/entry-common.h":
			return bytes.Replace(b, []byte("#include <linux/kmsan.h>\n"), nil, 1)
		case "kernel/exit.c":
			return bytes.Replace(b, []byte("\ttaskstats_exit(tsk, group_dead);\n"), []byte("\ttaskstats_exit2(tsk, group_dead);\n"), 1)
		}
		return b
	})
	wantEdits := []string{
		`kpatch gen: patch 1 (user-api): arch/Kconfig: "config-after HAVE_HARDLOCKUP_DETECTOR_ARCH": anchor not found [v11/user-api.patch:49]`,
		`kpatch gen: patch 2 (fp): arch/Kconfig: "config-after UNWIND_USER": anchor not found [v11/fp.patch:15] (it is added by the unplaced edit at v11/user-api.patch:49)`,
		`kpatch gen: patch 3 (compat-fp): arch/Kconfig: "config-after HAVE_UNWIND_USER_FP": anchor not found [v11/compat-fp.patch:12] (it is added by the unplaced edit at v11/fp.patch:15)`,
		`kpatch gen: patch 5 (cache): include/linux/entry-common.h: "include-after <linux/kmsan.h>": anchor not found [v11/cache.patch:43]`,
		`kpatch gen: patch 11 (task-exit): kernel/exit.c: "statement-after do_exit taskstats_exit": anchor not found (no statement starting with "taskstats_exit(" in do_exit()) [v11/task-exit.patch:40]`,
	}
	candidate := regexp.MustCompile(`^    (\S+):(\d+): (.*)$`)
	for _, jsonOut := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "outgoing")
		before := fingerprint(t, tree)
		args := []string{"gen", "-v", "12", "--tree", tree, "--base", "synthetic", "-v", "11", "-o", out}
		if jsonOut {
			args = append(args, "--json")
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Fatalf("%v: exit %d, want 2; stderr: %s", args, code, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		var edits []string
		cands := map[int]int{} // edit index: candidate lines
		for _, l := range lines[:len(lines)-1] {
			if m := candidate.FindStringSubmatch(l); m != nil && len(edits) > 0 {
				cands[len(edits)-1]++
				continue
			}
			edits = append(edits, l)
		}
		if strings.Join(edits, "\n") != strings.Join(wantEdits, "\n") {
			t.Errorf("%v: edit lines:\n%s\nwant:\n%s", args, strings.Join(edits, "\n"), strings.Join(wantEdits, "\n"))
		}
		if cands[0] == 0 || cands[1] != 0 || cands[2] != 0 || cands[3] == 0 || cands[4] == 0 {
			t.Errorf("%v: candidate lines per edit %v, want some under edits 1, 4 and 5 only:\n%s", args, cands, stderr.String())
		}
		if !strings.Contains(stderr.String(), "\n    kernel/exit.c:930: \ttaskstats_exit2(tsk, group_dead);\n") {
			t.Errorf("%v: no candidate line for the renamed call at its line of the tree:\n%s", args, stderr.String())
		}
		summary := "kpatch gen: 5 edits (2 of them only because of another) cannot be placed in synthetic, nothing written: fix the anchors in a copy of the series description (kpatch spec -o DIR, then kpatch gen --spec DIR) or choose another --base"
		if last := lines[len(lines)-1]; last != summary {
			t.Errorf("%v: last line %q, want %q", args, last, summary)
		}
		if jsonOut {
			var rep struct {
				Error    string `json:"error"`
				Unplaced []struct {
					Patch      int    `json:"patch"`
					File       string `json:"file"`
					Anchor     string `json:"anchor"`
					Spec       string `json:"spec"`
					Reason     string `json:"reason"`
					After      string `json:"after"`
					Candidates []struct {
						File string `json:"file"`
						Line int    `json:"line"`
						Text string `json:"text"`
					} `json:"candidates"`
				} `json:"unplaced"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("--json: stdout is not one JSON object: %v\n%s", err, stdout.String())
			}
			if "kpatch gen: "+rep.Error != summary || len(rep.Unplaced) != 5 {
				t.Fatalf("--json: error %q, %d unplaced edits", rep.Error, len(rep.Unplaced))
			}
			u := rep.Unplaced[4]
			if u.Patch != 11 || u.File != "kernel/exit.c" || u.Anchor != "statement-after do_exit taskstats_exit" || u.Spec != "v11/task-exit.patch:40" || u.Reason != "anchor not found" ||
				len(u.Candidates) == 0 || u.Candidates[0].Line != 930 || u.Candidates[0].Text != "\ttaskstats_exit2(tsk, group_dead);" {
				t.Errorf("--json: edit 5: %+v", u)
			}
			if rep.Unplaced[1].After != "v11/user-api.patch:49" || len(rep.Unplaced[1].Candidates) != 0 {
				t.Errorf("--json: edit 2: %+v", rep.Unplaced[1])
			}
		} else if stdout.Len() != 0 {
			t.Errorf("%v: stdout %q, want nothing", args, stdout.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output directory %s was created", args, out)
		}
		if fingerprint(t, tree) != before {
			t.Errorf("%v: the tree changed", args)
		}
	}
}

// TestGenAlreadyPresent: an edit whose text the tree already has (here the
// select line v11's x86 frame pointer patch adds to config X86) cannot be
// placed either: the same refusal as a missing anchor, exit 2, nothing
// written.
func TestGenAlreadyPresent(t *testing.T) {
	tree := fakeKernel(t, func(p string, b []byte) []byte {
		if p == "arch/x86/Kconfig" {
			return bytes.Replace(b, []byte("\tselect HAVE_UNSTABLE_SCHED_CLOCK\n"), []byte("\tselect HAVE_UNSTABLE_SCHED_CLOCK\n\tselect HAVE_UNWIND_USER_FP\t\tif X86_64\n"), 1)
		}
		return b
	})
	out := filepath.Join(t.TempDir(), "outgoing")
	var stdout, stderr bytes.Buffer
	code := run([]string{"gen", "--tree", tree, "--base", "synthetic", "-v", "11", "-o", out, "--json"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "already present") {
		t.Errorf("exit %d, want 2 with \"already present\":\n%s", code, stderr.String())
	}
	var rep struct {
		Exit int `json:"exit"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Exit != 2 {
		t.Errorf("--json: %v, exit %d in %s", err, rep.Exit, stdout.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("output directory %s was created", out)
	}
}
