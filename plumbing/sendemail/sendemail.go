package sendemail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options says how to send.
type Options struct {
	From   string   // the sender (--from); "" leaves it to git's configuration
	To, Cc []string // added to every message (--to, --cc)
	DryRun bool     // git send-email --dry-run: everything but the sending
	// SuppressCc are the classes of automatic Cc git send-email leaves
	// out (--suppress-cc: author, self, cc, bodycc, sob, misc-by, cccmd,
	// body, all); none: git's configuration decides, else git adds them all.
	SuppressCc []string
	CcCmd      string // a command whose output lines are Cc'd (--cc-cmd), run on each file
	// SMTPServer and SMTPServerPort name the server (--smtp-server,
	// --smtp-server-port); "" leaves it to git's configuration.
	SMTPServer, SMTPServerPort string
	// Dir is the directory git send-email runs in, whose repository's
	// configuration it reads besides the user's; "": the current one.
	Dir string
	// Env is the environment of git send-email; nil: kpatch's.
	Env []string
}

// Sent is one message as git send-email sent it.
type Sent struct {
	File       string    // the file sent
	MessageID  string    // its Message-Id, without angle brackets
	Date       time.Time // the Date git send-email gave it
	Subject    string
	Recipients []string // the envelope recipients (RCPT TO), in order
}

// ErrNotInstalled is returned when git send-email cannot run: git-email
// (and its Perl modules) is not installed.
var ErrNotInstalled = errors.New("git send-email is not installed: install git-email (apt-get install git-email libmailtools-perl)")

// Installed reports whether git send-email is installed: git's exec path
// has git-send-email.
func Installed() bool {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-send-email"))
	return err == nil
}

// Args returns the arguments of git send-email for files under o.
func Args(files []string, o Options) []string {
	args := []string{"send-email", "--confirm=never", "--no-thread", "--no-format-patch", "--8bit-encoding=UTF-8"}
	for _, c := range o.SuppressCc {
		args = append(args, "--suppress-cc="+c)
	}
	if o.CcCmd != "" {
		args = append(args, "--cc-cmd="+o.CcCmd)
	}
	if o.DryRun {
		args = append(args, "--dry-run")
	}
	if o.From != "" {
		args = append(args, "--from="+o.From)
	}
	for _, a := range o.To {
		args = append(args, "--to="+a)
	}
	for _, a := range o.Cc {
		args = append(args, "--cc="+a)
	}
	if o.SMTPServer != "" {
		args = append(args, "--smtp-server="+o.SMTPServer)
	}
	if o.SMTPServerPort != "" {
		args = append(args, "--smtp-server-port="+o.SMTPServerPort)
	}
	// No "--": git send-email takes what follows it for format-patch's
	// revisions. The files are absolute paths, none starts with "-".
	return append(args, files...)
}

// Send sends files, in order, with git send-email. It returns the
// messages sent; when git send-email fails part way, the ones it sent
// before, with its error.
func Send(ctx context.Context, files []string, o Options) ([]Sent, error) {
	if !Installed() {
		return nil, ErrNotInstalled
	}
	abs := make([]string, len(files))
	for i, f := range files {
		a, err := filepath.Abs(f) // git send-email runs in o.Dir
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(a); err != nil {
			return nil, err // else git send-email takes it for a revision
		}
		abs[i] = a
	}
	cmd := exec.CommandContext(ctx, "git", Args(abs, o)...)
	cmd.Dir = o.Dir
	cmd.Env = o.Env
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	sent, perr := parseLog(out.String(), files)
	if err != nil {
		if ctx.Err() != nil {
			return sent, ctx.Err()
		}
		return sent, fmt.Errorf("git send-email failed after %d of %d messages: %s", len(sent), len(files), lastLine(stderr.String(), err))
	}
	if perr != nil {
		return sent, perr
	}
	if len(sent) != len(files) {
		return sent, fmt.Errorf("git send-email logged %d messages for %d files: %s", len(sent), len(files), lastLine(stderr.String(), nil))
	}
	return sent, nil
}

// lastLine is the last non-empty line of a tool's stderr, or err's text.
func lastLine(stderr string, err error) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	if err != nil {
		return err.Error()
	}
	return "no error message"
}

// parseLog reads the log git send-email prints for every message it
// sends: a line "OK. Log says:" (or "Dry-OK. Log says:"), the envelope
// (Server or Sendmail, MAIL FROM, RCPT TO), the message's headers, a
// blank line and "Result: ...". The n-th log is the n-th file's.
func parseLog(out string, files []string) ([]Sent, error) {
	var sent []Sent
	var cur *Sent
	inHeader, lastKey := false, ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "OK. Log says:" || l == "Dry-OK. Log says:":
			sent = append(sent, Sent{})
			cur = &sent[len(sent)-1]
			if len(sent) <= len(files) {
				cur.File = files[len(sent)-1]
			}
			inHeader = true
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(l, "Result: "):
			if cur.MessageID == "" || cur.Date.IsZero() {
				return sent[:len(sent)-1], fmt.Errorf("git send-email's log of %s has no Message-Id or Date", cur.File)
			}
			cur, inHeader = nil, false
			continue
		case l == "":
			inHeader = false
			continue
		}
		if !inHeader {
			continue
		}
		if (l[0] == ' ' || l[0] == '\t') && lastKey == "subject" {
			cur.Subject += " " + strings.TrimSpace(l) // a folded subject
			continue
		}
		k, v, ok := strings.Cut(l, ": ")
		lastKey = strings.ToLower(k)
		if !ok {
			if r, ok := strings.CutPrefix(l, "RCPT TO:"); ok {
				cur.Recipients = append(cur.Recipients, strings.Trim(r, "<>"))
			}
			continue
		}
		switch strings.ToLower(k) {
		case "message-id":
			cur.MessageID = strings.Trim(strings.TrimSpace(v), "<>")
		case "date":
			d, err := mail.ParseDate(v)
			if err != nil {
				return sent, fmt.Errorf("git send-email's log of %s: Date %q: %v", cur.File, v, err)
			}
			cur.Date = d
		case "subject":
			cur.Subject = v
		}
	}
	if cur != nil {
		sent = sent[:len(sent)-1] // its log ended before its result
	}
	return sent, nil
}
