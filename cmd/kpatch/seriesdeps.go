package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"kpatch/plumbing/mail"
	"kpatch/series"
)

func cmdSeriesDeps(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("series deps", "[--tree DIR] [--base REV] [-v N] [--stack NAME [--on vN]] [--spec DIR] [--json] [FILE]",
		`Check the dependencies a series' cover letter names, as b4 prep --check-deps
does: its base-commit is in the tree, and each prerequisite-patch-id is a
patch of the series below it (the revision it is stacked on, generated on
the tree at --base; --on names another) or a commit of the base's history.
Without FILE, the cover letter kpatch gen writes is checked; with FILE (an
mbox, a saved thread or a directory of mails), a posted one's. Each
dependency is listed with where it was found, or why it is missing.

Exit status: 0 every dependency found, 1 one is missing, 2 bad input.`)
	sf := fs.seriesFlags(seriesFlagSpec{tree: "."})
	jsonOut := fs.jsonFlag()
	files, err := fs.parse(args, 0, 1)
	if err != nil {
		return err
	}
	sel, err := sf.selection(true)
	if err != nil {
		return err
	}
	if !sel.Tree.IsGit() {
		return badUsage("--tree %s is a plain directory: dependencies are commits and patch ids, give a git tree", *sf.tree)
	}
	g, err := series.Generate(ctx, sel)
	if err != nil {
		return err
	}
	var cover string
	if len(files) == 1 {
		msgs, err := mail.LoadMessages(files[0])
		if err != nil {
			return mailInputError(err, "give an mbox, a saved thread or a directory of mails")
		}
		for _, m := range msgs {
			if strings.Contains("\n"+m.Body, "\nbase-commit: ") || strings.Contains("\n"+m.Body, "\nprerequisite-patch-id: ") {
				cover = m.Body
				break
			}
		}
		if cover == "" {
			return badInput(fmt.Errorf("%s: no message names a base-commit or prerequisite-patch-id: give the series' cover letter (git format-patch --base, b4 send write them)", files[0]))
		}
	} else {
		msgs, err := g.Own().Messages()
		if err != nil {
			return err
		}
		cover = msgs[0].Text
	}
	var below *series.Series
	if sel.Revision.Prerequisite != nil {
		below = g
	}
	deps, err := series.CheckDeps(ctx, sel.Tree, series.ParseDeps(cover), below)
	if err != nil {
		return err
	}
	missing := 0
	for _, d := range deps {
		if d.Missing != "" {
			missing++
		}
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Series  string       `json:"series"`
			Deps    []series.Dep `json:"dependencies"`
			Missing int          `json:"missing"`
		}{sel.Revision.Name(), deps, missing}); err != nil {
			return err
		}
	} else {
		for _, d := range deps {
			v := d.Value
			if len(v) == 40 {
				v = v[:12]
			}
			if d.Missing != "" {
				fmt.Fprintf(stdout, "%s %s: MISSING: %s\n", d.Kind, v, d.Missing)
			} else {
				fmt.Fprintf(stdout, "%s %s: in %s\n", d.Kind, v, d.Found)
			}
		}
		fmt.Fprintf(stderr, "kpatch series deps: %s: %d dependencies, %d missing\n", sel.Revision.Name(), len(deps), missing)
	}
	if missing > 0 {
		return errFindings{missing}
	}
	return nil
}
