package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"kpatch/verify"
)

// errFindings makes kpatch exit 1 after a report that has errors; the
// report has already said everything.
type errFindings struct{ n int }

func (e errFindings) Error() string { return fmt.Sprintf("%d errors", e.n) }

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "[--tree DIR] [--base REV] [-v N] [--stack NAME] [--spec DIR] [--json] [--ignore ID,...] [--checkpatch [--checkpatch-args ARGS]] [--build-dir DIR] [--rules] [FILE]",
		`Check a series before it is posted: the kernel's rules for commit messages
and style, and C invariants evaluated with modernc.org/cc/v4 for x86_64 and
i386 with the series' options on and off, at every patch. Rules of scope
"series" apply only to the series whose spec declares them (verify-rules in
the spec directory); --rules lists every rule.

Without FILE, the series kpatch gen would write (same flags) is checked.
With FILE (an mbox, a directory of .patch files, a saved thread, or "-"
for standard input), the posted series is, as git am reads it: a mail it
cannot read is one PATCH_APPLY error and the rest is checked. Edits to
existing files are applied to --tree (default: the kernel tree the
working directory is in, if any) at --base (default: the mail's
base-commit:, else the tree's HEAD).

Exit status: 0 no errors (warnings only or clean), 1 errors found,
2 usage or input verify could not read (nothing was checked).`)
	sf := fs.seriesFlags(seriesFlagSpec{
		treeHelp: "kernel tree: a git repository or a plain directory with --plain (default \".\" without FILE)",
		specHelp: "series description directory (an edited copy of templates/linux); with FILE, its series rules apply",
	})
	jsonOut := fs.jsonFlag()
	ignore := fs.String("ignore", "", "comma-separated rule IDs (verify's or checkpatch's types) to leave out")
	checkpatch := fs.Bool("checkpatch", false, "also run the tree's scripts/checkpatch.pl on every patch and merge its findings")
	checkpatchArgs := fs.String("checkpatch-args", "", "more checkpatch.pl options, space-separated, as a subsystem asks for them\n\t(\"--strict\", \"--codespell --max-line-length=100\"); implies --checkpatch")
	coccicheck := fs.Bool("coccicheck", false, "also run the tree's scripts/coccinelle semantic patches (make coccicheck MODE=report) on the C files\n\tthe series changes and merge their reports (needs Coccinelle's spatch; a minute or more)")
	rules := fs.Bool("rules", false, "list every rule (ID, severity, scope, why) and exit")
	buildDir := fs.String("build-dir", "", "kernel build `DIR` (make O=DIR, prepared) or a directory of them, to read each C file\nas kbuild preprocesses it there; \"none\": verify's prelude in place of the kernel headers\n(default: the trees kpatch test build keeps in the cache, if any)")
	files, err := fs.parse(args, 0, 1)
	if err != nil {
		return err
	}
	if *rules {
		return verify.WriteRules(stdout)
	}
	cpArgs := strings.Fields(*checkpatchArgs)
	if err := verify.CheckCheckpatchArgs(cpArgs); err != nil {
		return badUsage("%v", err)
	}
	if len(cpArgs) > 0 {
		*checkpatch = true
	}
	sf.applyConfig() // kpatch.tree, kpatch.base, kpatch.stack
	req := verify.Request{
		SpecDir: *sf.specDir, Version: *sf.version, Stack: *sf.stack, On: int(*sf.on),
		Tree: *sf.tree, Base: *sf.base, Plain: *sf.plain,
		Checkpatch: *checkpatch, CheckpatchArgs: cpArgs, Coccicheck: *coccicheck, BuildDir: *buildDir,
		Progress: stderr,
	}
	if len(files) == 1 {
		req.File = files[0]
	}
	for _, id := range strings.Split(*ignore, ",") {
		if id = strings.TrimSpace(id); id != "" {
			req.Ignore = append(req.Ignore, id)
		}
	}
	rep, err := verify.Check(ctx, req)
	// Anything that stops verify before its report is bad input: exit 2
	// with one line (and a JSON error under --json), as for usage errors.
	if ie := (*verify.InputError)(nil); errors.As(err, &ie) {
		return badInput(ie.Err)
	}
	if err != nil {
		return err
	}
	if *jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Errors > 0 {
		return errFindings{rep.Errors}
	}
	return nil
}
