package main

import (
	"fmt"
	"io"
	"time"

	"kpatch/revision"
)

func cmdRevision(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "new" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(stdout, "usage: kpatch revision new --spec DIR [--base REV] [--date DATE]\n\nRun 'kpatch revision new --help' for its flags.")
			return nil
		}
		fmt.Fprintln(stderr, "usage: kpatch revision new --spec DIR [--base REV] [--date DATE]")
		return errUsage
	}
	fs := newFlags("revision new", "--spec DIR [--base REV] [--date DATE]",
		`Start the next revision of the series in a copy of its description (kpatch
spec -o DIR writes one), as b4 prep --reroll does: the newest revision's
series file and order are copied to v<N+1>/ (patches are declared once, in the revision that first has them),, the version is
bumped, the base recorded, and the cover letter and every patch's notes get
an empty "Changes since vN:" section linking the previous posting by its
Message-Id. Then edit the templates and notes, and kpatch gen --spec DIR
writes the new revision.`, stderr)
	specDir := fs.String("spec", "", "the spec copy to extend (required)")
	base := fs.String("base", "", "base of the new revision (tag, branch or commit); default: the previous revision's")
	date := fs.String("date", "", `date of the new cover letter, RFC 1123 with zone ("Mon, 07 Jul 2025 21:22:00 -0400") or "now"; default: the previous revision's`)
	archive := fs.String("archive", "https://lore.kernel.org/all/", "prefix of the link to the previous posting")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *specDir == "" {
		fmt.Fprintln(stderr, "kpatch revision new: --spec DIR is required (kpatch spec -o DIR writes a copy to edit)")
		return errUsage
	}
	o := revision.Options{SpecDir: *specDir, Base: *base, Archive: *archive}
	switch *date {
	case "":
	case "now":
		o.Date = time.Now().Truncate(time.Second)
	default:
		d, err := time.Parse(time.RFC1123Z, *date)
		if err != nil {
			return fmt.Errorf("--date %q: not a date like \"Mon, 07 Jul 2025 21:22:00 -0400\"", *date)
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
	fmt.Fprintf(stderr, "kpatch revision new: v%d started from v%d in %s: edit its notes, cover letter and the templates ({{if lt .Version %d}})\n", res.Version, res.Previous, res.Dir, res.Version)
	return nil
}
