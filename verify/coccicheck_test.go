package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/plumbing/kernelsrc"
)

// TestCoccicheckToolFails: with a spatch that fails on every semantic
// patch (exit 1), or that never ends, no Coccinelle check ran: that is
// one COCCI_FAILED error (verify exits 1), not a note under a clean
// report (exit 0, as before), and a spatch that hangs is stopped after
// SpatchTimeout.
func TestCoccicheckToolFails(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, script string
		want         string
	}{
		{"fails", "echo 'Fatal error: exception Failure(\"meta: parse error\")' >&2; exit 1", "exit status 1: Fatal error"},
		{"hangs", "exec sleep 60", "stopped after 100ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			script := "#!/bin/sh\ncase \"$1\" in --version) echo 'spatch version 1.1.1 compiled with OCaml version 4.13.1'; exit 0;; esac\n" + c.script + "\n"
			if err := os.WriteFile(filepath.Join(bin, "spatch"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			s := seed(t)
			s.Tree = tree
			start := time.Now()
			all, err := Coccicheck(context.Background(), s, nil, Options{SpatchTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 50*time.Second {
				t.Errorf("took %v: the hanging spatch was not stopped", took)
			}
			failed := only(all, "COCCI_FAILED")
			if len(failed) != 1 || failed[0].Severity != Error || !strings.Contains(failed[0].Message, c.want) {
				t.Errorf("COCCI_FAILED findings %v, want one error saying %q", failed, c.want)
			}
			if !HasErrors(all) {
				t.Error("no error: verify --coccicheck would exit 0")
			}
		})
	}
}
