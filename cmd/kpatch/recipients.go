package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"kpatch/series"
)

// recipientFlags are the flags that choose a series' recipients besides
// --to and --cc, the same for kpatch gen and kpatch send.
type recipientFlags struct {
	noAutoCc *bool
	suppress *classList
	ccCmd    *string
}

// classList is a repeatable flag of git send-email's --suppress-cc
// classes, also comma-separated.
type classList []string

func (c *classList) String() string { return strings.Join(*c, ",") }

func (c *classList) Set(v string) error {
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*c = append(*c, x)
		}
	}
	return nil
}

func addRecipientFlags(fs *flagSet) *recipientFlags {
	rf := &recipientFlags{suppress: &classList{}}
	rf.noAutoCc = fs.Bool("no-auto-cc", false, "leave out the recipients MAINTAINERS names (get_maintainer.pl's): only the series'\nTo/Cc, --to, --cc and --cc-cmd remain")
	fs.Var(rf.suppress, "suppress-cc", "a `CLASS` of git send-email's own Cc left out when the mail is sent (repeatable,\nas git's: author, self, sob, bodycc, misc-by, body, cccmd); kpatch send passes it to git")
	rf.ccCmd = fs.String("cc-cmd", "", "run `CMD` on each message as git send-email --cc-cmd does (CMD FILE, by the shell)\nand add each line it prints to that message's Cc (e.g. a get_maintainer.pl of your own)")
	return rf
}

// check refuses a class git send-email does not have, or that would drop
// the Cc: header kpatch writes.
func (rf *recipientFlags) check() error {
	if _, err := series.SuppressClasses(*rf.suppress); err != nil {
		return badUsage("%v", err)
	}
	return nil
}

// choose sets how the recipients of s are chosen; call it before
// anything makes its mail (verify does), on the series Own is then taken
// of.
func (rf *recipientFlags) choose(s *series.Series) error {
	s.SetAutoCc(!*rf.noAutoCc)
	if err := s.SuppressCc(*rf.suppress); err != nil {
		return badUsage("%v", err)
	}
	return nil
}

// apply sets the recipients of s, the series as posted (Own), as the
// flags say; call it after AddRecipients.
func (rf *recipientFlags) apply(s *series.Series) error {
	if err := rf.choose(s); err != nil {
		return err
	}
	if *rf.ccCmd != "" {
		if err := s.AddCcCmd(*rf.ccCmd); err != nil {
			return badInput(err)
		}
	}
	return nil
}

// writeWho prints who gets each message of s and why, or the JSON.
func writeWho(stdout io.Writer, s *series.Series, asJSON bool) error {
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	who := s.Who(msgs, s.Revision.From)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(struct {
			Sender   string       `json:"sender"`
			Messages []series.Who `json:"messages"`
		}{s.Revision.From, who})
	}
	var b strings.Builder
	for _, w := range who {
		b.WriteString(w.File + "\n")
		for _, r := range w.Recipients {
			fmt.Fprintf(&b, "  %-5s %s (%s)\n", r.Header+":", r.Address, strings.Join(r.Why, ", "))
		}
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
