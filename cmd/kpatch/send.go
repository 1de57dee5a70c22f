package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"kpatch/plumbing/outdir"
	"kpatch/plumbing/sendemail"
	"kpatch/revision"
	"kpatch/series"
	"kpatch/verify"
)

func cmdSend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("send", "--spec DIR [--tree DIR] [--base REV] [-v N] [--stack NAME] [--dry-run | --reflect] [--to ADDR]... [--cc ADDR]... [--no-auto-cc] [--suppress-cc CLASS]... [--cc-cmd CMD] [--ignore ID,...] [--no-verify] [--smtp-server HOST] [--smtp-server-port N] [--json]",
		`Post the revision as kpatch gen writes it, with the real git send-email (as b4
send does): its Message-Ids and threading as written, to the recipients its
To: and Cc: headers name and those git send-email adds itself (the author,
the trailers' addresses) unless --suppress-cc leaves them out: kpatch gen
--who with the same flags says who gets each message and why. The server
and credentials come from git's configuration (sendemail.*).

A revision is sent only when kpatch verify passes it on this tree: send runs
verify itself on the very mail it sends (--ignore as verify's), and refuses
with exit 2 when it finds errors, unless --no-verify. After a send, the
revision's header in the spec copy records its posting: the Message-Ids of
its messages, the Date it was sent with and its base; kpatch revision new
links them, and send refuses to post the same revision twice.

--dry-run does everything but send (git send-email --dry-run), --reflect
sends it to the sender alone (b4 send --reflect), without its To: and Cc:;
neither records anything nor needs the spec copy, and both only report what
verify finds.`)
	sf := fs.seriesFlags(seriesFlagSpec{tree: ".", specHelp: "the spec copy the posting is recorded in (required to send; kpatch spec -o DIR writes one)"})
	dry := fs.Bool("dry-run", false, "do everything but send (git send-email --dry-run); record nothing")
	reflect := fs.Bool("reflect", false, "send to the sender alone, the To: and Cc: headers left out (b4 send --reflect); record nothing")
	noVerify := fs.Bool("no-verify", false, "send even when kpatch verify finds errors")
	ignore := fs.String("ignore", "", "comma-separated rule IDs verify leaves out (as kpatch verify --ignore)")
	smtpServer := fs.String("smtp-server", "", "SMTP server (git send-email --smtp-server); default: git's sendemail.smtpServer")
	smtpPort := fs.String("smtp-server-port", "", "SMTP server port (git send-email --smtp-server-port)")
	jsonOut := fs.jsonFlag()
	var to, cc addressList
	fs.Var(&to, "to", "add a To: recipient to every message (repeatable; git send-email --to)")
	fs.Var(&cc, "cc", "add a Cc: recipient to every message (repeatable; git send-email --cc)")
	rf := addRecipientFlags(fs)
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	posting := !*dry && !*reflect
	if *dry && *reflect {
		return badUsage("--dry-run and --reflect: give one (--dry-run sends nothing, --reflect sends to you)")
	}
	if posting && *sf.specDir == "" {
		return badUsage("--spec DIR is required to send: the posting is recorded in the spec copy (kpatch spec -o DIR writes one); --dry-run and --reflect need none")
	}
	var ids []string
	for _, id := range strings.Split(*ignore, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if err := verify.CheckIgnore(ids, nil); err != nil {
		return badInput(err)
	}
	if !sendemail.Installed() {
		return badInput(sendemail.ErrNotInstalled)
	}
	if posting {
		if st, err := os.Stat(*sf.specDir); err == nil && st.IsDir() {
			unlock, err := outdir.LockEdit(ctx, *sf.specDir, stderr)
			if err != nil {
				return err
			}
			defer unlock()
		}
	}
	sel, err := sf.selection(true)
	if err != nil {
		return err
	}
	rev := sel.Revision
	if posting && rev.Posted() {
		return badUsage("%s was posted already, as %s (Message-Ids in %s): start the next revision with kpatch revision new", rev.Name(), rev.PostedID(0), filepath.Join(*sf.specDir, rev.Dir, "series"))
	}
	g, err := series.Generate(ctx, sel)
	if err != nil {
		return err
	}
	if err := rf.choose(g); err != nil { // before verify makes the mail
		return err
	}
	verdict, err := sendVerify(ctx, g, sel, ids)
	if err != nil {
		return err
	}
	if verdict.errors > 0 {
		switch {
		case posting && !*noVerify:
			return badUsage("%s: kpatch verify finds %d errors on this tree (%s): not sent; see them with kpatch verify%s, fix them, or give --no-verify to send anyway",
				rev.Name(), verdict.errors, g.Tree.Base, verdict.command(sf))
		default:
			fmt.Fprintf(stderr, "kpatch send: %s: kpatch verify finds %d errors on this tree (%s): kpatch send without --dry-run or --reflect refuses it\n", rev.Name(), verdict.errors, g.Tree.Base)
		}
	}
	s := g.Own()
	if err := rf.apply(s); err != nil {
		return err
	}
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kpatch-send-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var files []string
	for _, m := range msgs {
		text := m.Text
		if *reflect {
			text = sendemail.Reflect(text)
		}
		f := filepath.Join(dir, m.Filename)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			return err
		}
		files = append(files, f)
	}
	// The --cc-cmd's addresses are in the Cc: headers already (AddCcCmd):
	// git send-email is not given it again.
	o := sendemail.Options{From: rev.From, To: to, Cc: cc, DryRun: *dry, SuppressCc: *rf.suppress, SMTPServer: *smtpServer, SMTPServerPort: *smtpPort}
	if *reflect {
		o.To, o.Cc, o.SuppressCc = []string{rev.From}, nil, []string{"all"}
	}
	sent, err := sendemail.Send(ctx, files, o)
	if err != nil {
		for _, m := range sent {
			fmt.Fprintf(stderr, "kpatch send: sent %s as %s before the failure\n", filepath.Base(m.File), m.MessageID)
		}
		if len(sent) > 0 && posting {
			return fmt.Errorf("%w: %d of %d messages were sent and nothing was recorded; send the rest by hand, then record their Message-Ids in %s", err, len(sent), len(files), filepath.Join(*sf.specDir, rev.Dir, "series"))
		}
		return err
	}
	recorded := ""
	if posting {
		var posted []string
		for _, m := range sent {
			posted = append(posted, m.MessageID)
		}
		if err := revision.RecordPosting(*sf.specDir, rev, posted, sent[0].Date, g.Tree.Base); err != nil {
			return fmt.Errorf("%s was sent, and recording it failed: %w; record Message-Ids: %s in its header by hand", rev.Name(), err, strings.Join(posted, ", "))
		}
		recorded = filepath.Join(*sf.specDir, rev.Dir, "series")
	}
	return sendReport(stdout, stderr, rev.Name(), sent, verdict, *dry, *reflect, recorded, *jsonOut)
}

// sendVerdict is what kpatch verify found on the series sent.
type sendVerdict struct {
	errors, warnings int
	ignore           []string
}

// command is the kpatch verify command that shows the findings.
func (v sendVerdict) command(sf *seriesFlags) string {
	var b strings.Builder
	for _, f := range []struct{ name, v string }{{"--spec", *sf.specDir}, {"--tree", *sf.tree}, {"--base", *sf.base}, {"--stack", *sf.stack}} {
		if f.v != "" {
			fmt.Fprintf(&b, " %s %s", f.name, f.v)
		}
	}
	if *sf.version != 0 {
		fmt.Fprintf(&b, " -v %d", *sf.version)
	}
	if len(v.ignore) > 0 {
		fmt.Fprintf(&b, " --ignore %s", strings.Join(v.ignore, ","))
	}
	return b.String()
}

// sendVerify runs kpatch verify's rules on the generated series, as
// kpatch verify does with the same flags (the build trees of kpatch test
// build when there are some, the spec's series rules).
func sendVerify(ctx context.Context, g *series.Series, sel *series.Selection, ignore []string) (sendVerdict, error) {
	v := sendVerdict{ignore: ignore}
	vs, err := verify.FromGenerated(g)
	if err != nil {
		return v, badInput(err)
	}
	rules, err := verify.NewSeriesRules(sel.Spec.VerifyRules)
	if err != nil {
		return v, badInput(err)
	}
	trees, _ := verify.DefaultBuildTrees()
	defer verify.CloseBuildTrees(trees)
	opt := verify.Options{Ignore: ignore, Series: rules, Context: ctx, BuildTrees: trees, PreprocessCache: verify.DefaultPreprocessCache()}
	findings, err := verify.RunContext(vs, opt)
	if err != nil {
		return v, err
	}
	rep := verify.NewReport(vs, findings)
	v.errors, v.warnings = rep.Errors, rep.Warnings
	return v, nil
}

// sendReport says what was sent: a line a message and a summary, or the
// JSON report.
func sendReport(stdout, stderr io.Writer, name string, sent []sendemail.Sent, v sendVerdict, dry, reflect bool, recorded string, asJSON bool) error {
	if asJSON {
		type message struct {
			File       string   `json:"file"`
			MessageID  string   `json:"message_id"`
			Date       string   `json:"date"`
			Subject    string   `json:"subject"`
			Recipients []string `json:"recipients"`
		}
		rep := struct {
			Revision       string    `json:"revision"`
			DryRun         bool      `json:"dry_run"`
			Reflect        bool      `json:"reflect"`
			VerifyErrors   int       `json:"verify_errors"`
			VerifyWarnings int       `json:"verify_warnings"`
			Messages       []message `json:"messages"`
			Recorded       string    `json:"recorded,omitempty"`
		}{Revision: name, DryRun: dry, Reflect: reflect, VerifyErrors: v.errors, VerifyWarnings: v.warnings, Recorded: recorded}
		for _, m := range sent {
			rep.Messages = append(rep.Messages, message{filepath.Base(m.File), m.MessageID, m.Date.Format(time.RFC1123Z), m.Subject, m.Recipients})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	for _, m := range sent {
		fmt.Fprintf(stdout, "%s <%s> %d recipients\n", filepath.Base(m.File), m.MessageID, len(m.Recipients))
	}
	verb := "sent"
	switch {
	case dry:
		verb = "not sent (--dry-run)"
	case reflect:
		verb = "sent to " + addressOnly(sent) + " only (--reflect)"
	}
	rec := ""
	if recorded != "" {
		rec = "; posting recorded in " + recorded
	}
	fmt.Fprintf(stderr, "kpatch send: %s: %d messages %s, verify: %d errors, %d warnings%s\n", name, len(sent), verb, v.errors, v.warnings, rec)
	return nil
}

// addressOnly is the one envelope recipient of a reflected send.
func addressOnly(sent []sendemail.Sent) string {
	if len(sent) == 0 || len(sent[0].Recipients) == 0 {
		return "the sender"
	}
	if a, err := mail.ParseAddress(sent[0].Recipients[0]); err == nil {
		return a.Address
	}
	return sent[0].Recipients[0]
}
