package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/mail"
	"os"
	"os/signal"
	"strings"

	"kpatch/series"
)

func cmdGen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", "[--tree DIR] [--base REV] [-v N] [-o DIR | --stdout] [--branch NAME] [--interdiff N] [--range-diff N]",
		`Render the series against a kernel tree and write it as git format-patch
--cover-letter --thread -v N would: a cover letter and numbered patches with
diffstats, changelogs, threading headers and recipients from MAINTAINERS.
The tree is read at --base with go-git; its working tree, index and HEAD are
never changed. Edits to existing files are placed by what they attach to, so
the series applies to bases it was not posted against.`, stderr)
	tree := fs.String("tree", ".", "kernel tree: a git repository (clone, worktree or bare mirror), or a plain directory")
	base := fs.String("base", "", "base revision (tag, branch or commit); default: the base recorded for the revision (v6.16-rc4 for v12, v6.16-rc2 for v11)")
	version := fs.Int("v", 0, "revision of the series to write; default: the newest")
	specDir := fs.String("spec", "", "series description directory (an edited copy of templates/linux); default: the one built in")
	out := fs.String("o", "outgoing", "output directory")
	stdoutFlag := fs.Bool("stdout", false, "write one mbox to standard output instead of files")
	branch := fs.String("branch", "", "also record one commit per patch on this new branch of the tree")
	plain := fs.Bool("plain", false, "read --tree as a plain directory even if it is a git repository (--base then only labels the output)")
	jsonOut := fs.Bool("json", false, "print a JSON summary of what was written")
	var to, cc addressList
	fs.Var(&to, "to", "add a To: recipient to every message (repeatable), besides MAINTAINERS' and the series'")
	fs.Var(&cc, "cc", "add a Cc: recipient to every message (repeatable)")
	revDiff := addRevDiffFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opt := series.Options{Tree: *tree, Base: *base, Version: *version, SpecDir: *specDir, Plain: *plain, To: to, Cc: cc}
	s, err := series.Generate(ctx, opt)
	if err != nil {
		return err
	}
	msgs := s.Messages()
	if err := revDiff.apply(ctx, opt, s, msgs); err != nil {
		return err
	}
	if *branch != "" {
		if err := s.CreateBranch(*branch); err != nil {
			return err
		}
	}
	if *stdoutFlag {
		_, err := io.WriteString(stdout, series.Mbox(msgs))
		return err
	}
	files, err := series.WriteDir(*out, msgs)
	if err != nil {
		return err
	}
	if *jsonOut {
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
		}{Version: s.Revision.Version, Base: s.Tree.Base, Branch: *branch, Cover: files[0]}
		if s.Tree.IsGit() {
			rep.BaseCommit = s.Tree.Commit.String()
		}
		for i, p := range s.Patches {
			rep.Patches = append(rep.Patches, patch{p.Number, p.Subject, files[i+1], p.Commit, p.To, p.Cc})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	if *branch != "" {
		fmt.Fprintf(stderr, "kpatch gen: branch %s records the %d patches on %s\n", *branch, len(s.Patches), s.Tree.Base)
	}
	return nil
}

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
