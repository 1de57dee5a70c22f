package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGenBranchRace: two gen --branch NAME at once, each with its own -o
// holding an earlier series. Both found the branch missing, both replaced
// their -o, and the second then exited 2 "branch already exists": its
// earlier series was gone though exit 2 says nothing was written (three
// rounds of three reproduced it every time). Now exactly one run wins and
// each loser's -o holds what it held.
func TestGenBranchRace(t *testing.T) {
	clone := sharedClone(t)
	bin := kpatchBinary(t)
	const runs = 3
	for round := 0; round < 3; round++ {
		branch := fmt.Sprintf("race%d", round)
		outs := make([]string, runs)
		before := make([]map[string]string, runs)
		for i := range outs {
			outs[i] = filepath.Join(t.TempDir(), "out")
			before[i] = previousSeries(t, outs[i])
		}
		cmds := make([]*exec.Cmd, runs)
		errs := make([]*bytes.Buffer, runs)
		for i := range cmds {
			cmds[i] = exec.Command(bin, "gen", "-v", "12", "--tree", clone, "--base", "v6.12", "--branch", branch, "-o", outs[i])
			errs[i] = &bytes.Buffer{}
			cmds[i].Stderr = errs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		won := 0
		for i, c := range cmds {
			c.Wait()
			switch code := c.ProcessState.ExitCode(); code {
			case 0:
				won++
			case 2:
				if !sameDir(before[i], dirState(t, outs[i])) {
					t.Errorf("round %d: run %d exited 2 (%q) but replaced its -o", round, i, errs[i].String())
				}
			default:
				t.Errorf("round %d: run %d exited %d: %s", round, i, code, errs[i].String())
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d runs created the branch, want 1", round, won)
		}
	}
}
