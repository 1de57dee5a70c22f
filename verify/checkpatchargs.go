package verify

import (
	"fmt"
	"strings"
)

// checkpatchArgs are the checkpatch.pl options a maintainer may pass
// through (Options.CheckpatchArgs): those that change what is checked.
// A name ending in "=" takes its value after the "=", in the same
// argument. The options that change how checkpatch.pl reads its input
// or writes its report (--terse, --file, --emacs, --fix, --root...) are
// kpatch's to give.
var checkpatchArgs = []string{
	"--strict", "--subjective", "--codespell", "--no-signoff", "--showfile",
	"--codespellfile=", "--max-line-length=", "--min-conf-desc-length=", "--tab-size=",
	"--types=", "--ignore=", "--kconfig-prefix=", "--typedefsfile=", "--conststructsfile=",
}

// CheckCheckpatchArgs says why args cannot be passed to checkpatch.pl
// (Options.CheckpatchArgs), or returns nil: each must be one of the
// options that change what is checked, its value after "=".
func CheckCheckpatchArgs(args []string) error {
	for _, a := range args {
		ok := false
		for _, o := range checkpatchArgs {
			if a == o || strings.HasSuffix(o, "=") && strings.HasPrefix(a, o) && len(a) > len(o) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("--checkpatch-args: %q is not passed to checkpatch.pl: give what changes the checks (%s, a value after \"=\"); kpatch gives the rest", a, strings.Join(checkpatchArgs, " "))
		}
	}
	return nil
}
