package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"kpatch/plumbing/mail"
	"kpatch/plumbing/outdir"
	"kpatch/revision/trailers"
	"kpatch/series"
)

func cmdTrailers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trailers", "--spec DIR [-v N] [--stack NAME] [--tree DIR [--base REV]] [--dry-run] [--json] FILE...",
		`Add the trailers that review replies give (FILE: an mbox, a saved thread
or a directory of mails) to the patch descriptions of a spec copy, as b4
trailers -u does: every person trailer (Acked-by, Reviewed-by, Tested-by,
Reported-by, Suggested-by) and the links (Closes, Link), each reported with
the reply, sender and date it came from. A reply counts for the
patch its In-Reply-To chain (or its "Re: [PATCH m/n]" subject) names; a reply
to the cover letter counts for every patch. Patches are matched by patch-id
when --tree is given and the replied-to patch is in FILE, else by subject.
Trailers a patch already has are not added again. With --stack NAME the
replies are to that stacked series (x86 v2), and only its own patches take
trailers, guarded so that the main series and its revisions posted before
stay as they were.`)
	sf := fs.seriesFlags(seriesFlagSpec{treeHelp: "kernel tree to generate the revision against, for patch-id matching (a git repository)",
		specHelp: "the spec copy to edit (required; kpatch spec -o DIR writes one)", noPlain: true})
	specDir, tree, base := sf.specDir, sf.tree, sf.base
	dry := fs.Bool("dry-run", false, "report what would be added, change nothing")
	jsonOut := fs.jsonFlag()
	files, err := fs.parse(args, 0, -1)
	if err != nil {
		return err
	}
	if *specDir == "" || len(files) == 0 {
		return badUsage("give the spec copy with --spec DIR and at least one FILE of replies")
	}
	// The copy is read and written under its lock: a second run waits
	// (saying so) and then reads what the first one wrote.
	if st, err := os.Stat(*specDir); err == nil && st.IsDir() && !*dry {
		unlock, err := outdir.LockEdit(ctx, *specDir, stderr)
		if err != nil {
			return err
		}
		defer unlock()
	}
	sel, err := sf.selection(false)
	if errors.Is(err, outdir.ErrNotDir) {
		return fmt.Errorf("%w: write a copy to edit with kpatch spec -o DIR", err)
	}
	if err != nil {
		return err // a damaged copy or a revision it lacks: the error says what to mend
	}
	rev := sel.Revision
	name := strings.TrimSpace(fmt.Sprintf("%s v%d", rev.StackName(), rev.Version)) // "x86 v2", "v12"
	var msgs []*mail.Message
	for _, f := range files {
		ms, err := mail.LoadMessages(f)
		if err != nil {
			return mailInputError(err, "give an mbox, a saved thread or a directory of mails")
		}
		msgs = append(msgs, ms...)
	}
	given := trailers.Collect(msgs)
	var ids map[int]string
	if *tree != "" {
		if err := sel.OpenTree(*tree, *base, false); err != nil {
			return sf.baseRefused(sel, err)
		}
		s, err := series.Generate(ctx, sel)
		if err != nil {
			return err
		}
		ids = map[int]string{}
		for _, p := range s.Patches {
			ids[p.Number] = s.PatchID(p)
		}
	}
	added, unmatched := trailers.Plan(rev, given, ids)
	invalid := trailers.Invalid(given)
	for _, g := range invalid {
		fmt.Fprintf(stderr, "kpatch trailers: left out %q (reply %s): %s\n", g.Line, g.Reply, g.Invalid)
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: nothing written
	}
	if !*dry {
		if err := trailers.Write(*specDir, added); err != nil {
			return fmt.Errorf("%w (no patch description was changed)", err)
		}
	}
	if *jsonOut {
		rep := struct {
			Stack     string           `json:"stack,omitempty"`
			Revision  int              `json:"revision"`
			DryRun    bool             `json:"dry_run"`
			Found     int              `json:"trailers_found"`
			Added     []trailers.Added `json:"added"`
			Unmatched []trailers.Given `json:"unmatched"`
			Invalid   []trailers.Given `json:"left_out"`
		}{rev.StackName(), rev.Version, *dry, len(given), added, unmatched, invalid}
		return writeJSON(stdout, &rep)
	}
	verb := "added"
	if *dry {
		verb = "would add"
	}
	for _, a := range added {
		by := ""
		if a.Who != "" {
			by = " by " + a.Who
		}
		fmt.Fprintf(stdout, "%s: %s (%s, from %s%s)\n", a.File, a.Trailer, a.By, a.Reply, by)
	}
	for _, g := range unmatched {
		fmt.Fprintf(stdout, "no patch of %s for %s (reply %s to patch %d %q)\n", name, g.Line, g.Reply, g.Target, g.Title)
	}
	left := ""
	if len(invalid) > 0 {
		left = fmt.Sprintf(", %d left out (not one person with one address, or not one URL)", len(invalid))
	}
	fmt.Fprintf(stderr, "kpatch trailers: %d trailers in the replies; %s %d to %s, %d for patches %s does not have%s\n", len(given), verb, len(added), name, len(unmatched), name, left)
	return nil
}
