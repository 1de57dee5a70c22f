package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/outdir"
	"kpatch/series"
)

func cmdGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", "[--tree DIR] [--base REV] [-v N] [--stack NAME] [-o DIR [--force] | --stdout] [--branch NAME] [--interdiff N] [--range-diff N] [--to ADDR] [--cc ADDR] [--no-auto-cc] [--suppress-cc CLASS] [--cc-cmd CMD] [--who]",
		`Render the series against a kernel tree and write it as git format-patch
--cover-letter --thread -v N would: a cover letter and numbered patches with
diffstats, changelogs, threading headers and recipients from MAINTAINERS.
The tree is read at --base from its git objects; its working tree, index and HEAD are
never changed. Edits to existing files are placed by what they attach to, so
the series applies to bases it was not posted against.`)
	sf := fs.seriesFlags(seriesFlagSpec{tree: "."})
	out := fs.String("o", "outgoing", "output directory: the series in it is replaced as a whole, the series files of earlier runs included")
	stdoutFlag := fs.Bool("stdout", false, "write one mbox to standard output instead of files")
	branch := fs.String("branch", "", "also record one commit per patch on this new branch of the tree")
	jsonOut := fs.jsonFlag()
	force := fs.Bool("force", false, "write into -o even if it holds files that are not kpatch series files (they are kept; series files of earlier runs are always replaced)")
	var to, cc addressList
	fs.Var(&to, "to", "add a To: recipient to every message (repeatable), besides MAINTAINERS' and the series'")
	fs.Var(&cc, "cc", "add a Cc: recipient to every message (repeatable)")
	rf := addRecipientFlags(fs)
	who := fs.Bool("who", false, "print who gets each message and why (MAINTAINERS entry and role as get_maintainer.pl\n--rolestats, the series' To/Cc, a flag, git send-email's own Cc at send); write nothing")
	revDiff := addRevDiffFlags(fs.FlagSet)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	if *stdoutFlag && *jsonOut {
		return badUsage("--stdout writes the mbox to standard output, --json a report there: give one")
	}
	// Refuse what can be refused before the series is generated; nothing
	// is written until every check has passed. The output is swapped in
	// whole (package outdir) and the branch is created last, so a failed
	// run creates no branch and the same command can simply be rerun.
	if *branch != "" {
		if err := series.CheckBranchName(*branch); err != nil {
			return err
		}
	}
	dirOpt := outdir.Options{Keep: *force, Context: ctx, Wait: stderr}
	if !*stdoutFlag && !*who {
		if err := outdir.Check(*out, dirOpt); err != nil {
			return err
		}
	}
	sel, s, err := generateAsPosted(ctx, sf)
	if err != nil {
		return genFailed(err, *jsonOut, stdout, stderr)
	}
	s.AddRecipients(to, cc)
	if err := rf.apply(s); err != nil {
		return err
	}
	if *who {
		return writeWho(stdout, s, *jsonOut)
	}
	if *branch != "" {
		// From the check to the branch's creation the repository is
		// this run's: a second gen --branch of the same name waits, then
		// finds the branch and is refused before it writes its -o.
		unlock, err := outdir.Lock(ctx, repoLockPath(s.Tree.Dir), stderr, "the branches of "+s.Tree.Dir)
		if err != nil {
			return err
		}
		defer unlock()
		if err := s.CheckBranch(*branch); err != nil {
			return err
		}
	}
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	if err := revDiff.apply(ctx, sel, s, msgs); err != nil {
		return err
	}
	if *stdoutFlag {
		if _, err := io.WriteString(stdout, series.Mbox(msgs)); err != nil {
			return fmt.Errorf("writing the mbox to standard output: %w", err)
		}
	} else {
		files, err := outdir.Write(*out, series.Files(msgs), dirOpt)
		if err != nil {
			return err
		}
		if err := genReport(stdout, s, files, *branch, *jsonOut); err != nil {
			return err
		}
	}
	if *branch != "" {
		if err := s.CreateBranch(*branch); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "kpatch gen: branch %s %s\n", *branch, branchContents(s))
	}
	return nil
}

// repoLockPath is what gen --branch locks in the repository at tree: its
// .git (a directory, or a worktree's file), or tree itself when it is a
// bare repository. Nothing is created there: a directory or an existing
// file is locked as it is (flock).
func repoLockPath(tree string) string {
	if _, err := os.Stat(filepath.Join(tree, ".git")); err == nil {
		return filepath.Join(tree, ".git")
	}
	return tree
}

// generateAsPosted generates the series the flags name as kpatch gen
// writes it: a stacked series' own patches (series.Series.Own).
func generateAsPosted(ctx context.Context, sf *seriesFlags) (*series.Selection, *series.Series, error) {
	sel, err := sf.selection(true)
	if err != nil {
		return nil, nil, err
	}
	s, err := series.Generate(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	return sel, s.Own(), nil
}

// branchContents says what --branch recorded: the series' commits on the
// base, a stacked series' after those of its prerequisite.
func branchContents(s *series.Series) string {
	n, r := len(s.Patches), s.Revision
	if r.Prerequisite == nil {
		return fmt.Sprintf("records the %d patches on %s", n, s.Tree.Base)
	}
	return fmt.Sprintf("records %d commits on %s: the %d patches of v%d, then the %d of %s", r.Own+n, s.Tree.Base, r.Own, r.Prerequisite.Version, n, r.Name())
}

// genReport prints the files written, one a line, or the JSON summary; a
// write error (a full disk, a closed pipe) is an error, as for the series.
func genReport(stdout io.Writer, s *series.Series, files []string, branch string, asJSON bool) error {
	if asJSON {
		commits, err := s.Commits()
		if err != nil {
			return err
		}
		type patch struct {
			Number  int      `json:"number"`
			Subject string   `json:"subject"`
			File    string   `json:"file"`
			Commit  string   `json:"commit,omitempty"`
			To      []string `json:"to"`
			Cc      []string `json:"cc"`
		}
		rep := struct {
			Version    int     `json:"version"`
			Base       string  `json:"base"`
			BaseCommit string  `json:"base_commit,omitempty"`
			Branch     string  `json:"branch,omitempty"`
			Cover      string  `json:"cover_letter"`
			Patches    []patch `json:"patches"`
		}{Version: s.Revision.Version, Base: s.Tree.Base, Branch: branch, Cover: files[0]}
		if s.Tree.IsGit() {
			rep.BaseCommit = s.Tree.Commit.String()
		}
		for i, p := range s.Patches {
			rep.Patches = append(rep.Patches, patch{p.Number, p.Subject, files[i+1], commits[i], p.To, p.Cc})
		}
		if err := writeJSON(stdout, &rep); err != nil {
			return fmt.Errorf("writing the JSON summary: %w", err)
		}
		return nil
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("listing the files written: %w", err)
	}
	return nil
}

// genFailed reports why the series could not be generated. Edits that
// cannot be placed get one line each on stderr, with their candidates
// indented under it, and the returned error is the summary line that main
// prints last. With --json the error is also a JSON object on stdout:
// {"error": MESSAGE, "unplaced": [EDIT...]}.
func genFailed(err error, jsonOut bool, stdout, stderr io.Writer) error {
	type candidate struct {
		File string `json:"file"`
		Line int    `json:"line"` // 0: a line the series adds
		Text string `json:"text"`
	}
	type edit struct {
		Patch      int         `json:"patch"`
		PatchID    string      `json:"patch_id"`
		File       string      `json:"file"`
		Anchor     string      `json:"anchor"`
		Spec       string      `json:"spec"`
		Reason     string      `json:"reason"`
		Detail     string      `json:"detail,omitempty"`
		After      string      `json:"after,omitempty"`
		Candidates []candidate `json:"candidates"`
	}
	rep := struct {
		Error    string `json:"error"`
		Exit     int    `json:"exit"`
		Unplaced []edit `json:"unplaced,omitempty"`
	}{Error: err.Error(), Exit: exitFailed}
	if isBadInput(err) {
		rep.Exit = exitUsage
	}
	var ue *series.UnplacedError
	if errors.As(err, &ue) {
		for _, u := range ue.Edits {
			fmt.Fprintf(stderr, "kpatch gen: %v\n", u)
			for _, l := range u.CandidateLines() {
				fmt.Fprintln(stderr, l)
			}
			e := edit{Patch: u.Patch, PatchID: u.PatchID, File: u.File, Anchor: u.Anchor, Spec: u.Src, Reason: u.Err.Error(), Detail: u.Detail, After: u.After, Candidates: []candidate{}}
			for _, c := range u.Candidates {
				e.Candidates = append(e.Candidates, candidate{c.File, c.Line, c.Text})
			}
			rep.Unplaced = append(rep.Unplaced, e)
		}
		err = unplacedSummary{ue}
		rep.Error = err.Error()
	}
	if jsonOut {
		if jerr := writeJSON(stdout, &rep); jerr != nil {
			return fmt.Errorf("%w (and writing the JSON error: %v)", err, jerr)
		}
		return &jsonShown{err}
	}
	return err
}

// unplacedSummary is an *series.UnplacedError that prints as its summary
// line (genFailed has printed the edits).
type unplacedSummary struct{ *series.UnplacedError }

func (u unplacedSummary) Error() string { return u.Summary() }
func (u unplacedSummary) Unwrap() error { return u.UnplacedError }

// addressList is a repeatable flag of mail addresses.
type addressList []string

func (a *addressList) String() string { return strings.Join(*a, ", ") }

func (a *addressList) Set(v string) error {
	if _, err := mail.ParseAddress(v); err != nil {
		return fmt.Errorf("%q is not a mail address (want \"Name <user@host>\" or user@host)", v)
	}
	*a = append(*a, v)
	return nil
}
