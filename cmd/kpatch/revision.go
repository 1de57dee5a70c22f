package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"kpatch/plumbing/outdir"
	"kpatch/revision"
)

func cmdRevisionNew(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("revision new", "--spec DIR [--stack NAME] [--base REV] [--date DATE]",
		`Start the next revision of the series in a copy of its description (kpatch
spec -o DIR writes one), as b4 prep --reroll does: the newest revision's
series file and order are copied to v<N+1>/ (NAME-v<N+1>/ with --stack;
patches are declared once, in the revision that first has them), the
version is bumped, the base recorded, the cover letter dated now, and the
cover letter and every patch's notes get an empty "Changes since vN:"
section linking the previous posting by the Message-Ids it was posted with
(kpatch send records them; v11 to v16 and x86 v2 have the archive's). Then
edit the templates and notes, and kpatch gen --spec DIR writes the new
revision.`)
	sf := fs.seriesFlags(seriesFlagSpec{noTree: true, baseHelp: "base of the new revision (tag, branch or commit); default: the previous revision's", specHelp: "the spec copy to extend (required; kpatch spec -o DIR writes one)", noVer: true})
	specDir, base := sf.specDir, sf.base
	date := fs.String("date", "", `date of the new cover letter, RFC 1123 with zone ("Mon, 07 Jul 2025 21:22:00 -0400") or "now"; default: now`)
	stack := fs.String("stack", "", "start the next revision of the series `NAME` stacked on the main one (x86-6.19) instead of the main series'")
	archive := fs.String("archive", "https://lore.kernel.org/all/", "prefix of the link to the previous posting")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if *specDir == "" {
		return badUsage("--spec DIR is required (kpatch spec -o DIR writes a copy to edit)")
	}
	if st, err := os.Stat(*specDir); err == nil && st.IsDir() {
		unlock, err := outdir.LockEdit(ctx, *specDir, stderr)
		if err != nil {
			return err
		}
		defer unlock()
	}
	o := revision.Options{SpecDir: *specDir, Stack: *stack, Base: *base, Archive: *archive}
	switch *date {
	case "":
	case "now":
		o.Date = time.Now().Truncate(time.Second)
	default:
		d, err := time.Parse(time.RFC1123Z, *date)
		if err != nil {
			return badUsage("--date %q: not a date like \"Mon, 07 Jul 2025 21:22:00 -0400\"", *date)
		}
		o.Date = d
	}
	res, err := revision.New(o)
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		fmt.Fprintln(stdout, f)
	}
	if res.Unposted {
		prev := fmt.Sprintf("v%d", res.Previous)
		if *stack != "" {
			prev = *stack + " " + prev
		}
		fmt.Fprintf(stderr, "kpatch revision new: %s's posting is not recorded (kpatch send records it): the \"Changes since\" links name the Message-Ids kpatch gen gives it\n", prev)
	}
	if *stack != "" {
		fmt.Fprintf(stderr, "kpatch revision new: %s started from v%d in %s: edit its notes, cover letter and the patches it declares\n", res.Name, res.Previous, res.Dir)
		return nil
	}
	fmt.Fprintf(stderr, "kpatch revision new: v%d started from v%d in %s: edit its notes, cover letter and the templates ({{if lt .Version %d}})\n", res.Version, res.Previous, res.Dir, res.Version)
	return nil
}
