package series

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"kpatch/plumbing/mail"
	"kpatch/plumbing/maintainers"
)

// whoState is what Who needs besides the recipients: how they were
// chosen.
type whoState struct {
	noAutoCc   bool                    // SetAutoCc(false): no MAINTAINERS recipients
	coverRoles []maintainers.Recipient // MAINTAINERS' recipients of the cover letter
	cmdCc      map[int][]string        // AddCcCmd's addresses, by message
	suppress   map[string]bool         // SuppressCc's classes, as git send-email expands them
}

// SetAutoCc says whether the recipients MAINTAINERS names are added to
// each message (the default, as get_maintainer.pl gives them) or left
// out (kpatch gen --no-auto-cc): then only the series description's,
// AddRecipients' and AddCcCmd's remain. Call it before the mail is made.
func (s *Series) SetAutoCc(on bool) { s.who.noAutoCc = !on }

// maintainersOf returns the recipients MAINTAINERS gives paths (none
// under SetAutoCc(false)), and sets *roles to them with their roles.
func (s *Series) maintainersOf(mf *maintainers.File, paths []string, secs [][]*maintainers.Section, roles *[]maintainers.Recipient) (to, cc []string) {
	if s.who.noAutoCc {
		return nil, nil
	}
	rto, rcc := mf.RolesOfPaths(paths, secs)
	*roles = append(append([]maintainers.Recipient{}, rto...), rcc...)
	for _, r := range rto {
		to = append(to, r.Address)
	}
	for _, r := range rcc {
		cc = append(cc, r.Address)
	}
	return to, cc
}

// SuppressCc sets the classes of git send-email's automatic Cc that are
// left out when the mail is sent (git send-email --suppress-cc: author,
// self, cc, bodycc, sob, misc-by, cccmd, body, all), for Who. An unknown
// class is an error, as git send-email's.
func (s *Series) SuppressCc(classes []string) error {
	m, err := SuppressClasses(classes)
	if err != nil {
		return err
	}
	s.who.suppress = m
	return nil
}

// SuppressClasses expands git send-email's --suppress-cc classes as it
// does (body is sob, bodycc and misc-by); cc and all, which would drop
// the Cc: header itself, are refused.
func SuppressClasses(classes []string) (map[string]bool, error) {
	m := map[string]bool{}
	for _, c := range classes {
		switch c {
		case "all", "cc":
			// git's cc (and all) drops the Cc: header kpatch gen wrote,
			// which says who gets the mail and why.
			return nil, fmt.Errorf("--suppress-cc %s would drop the Cc: header kpatch gen writes: leave MAINTAINERS' recipients out with --no-auto-cc, and suppress git send-email's own with author, self, sob, bodycc, misc-by, body", c)
		case "body":
			m["sob"], m["bodycc"], m["misc-by"] = true, true, true
		case "cccmd", "author", "self", "sob", "bodycc", "misc-by":
			m[c] = true
		default:
			return nil, fmt.Errorf("--suppress-cc %q: not one of git send-email's classes (author, self, sob, body, bodycc, misc-by, cccmd)", c)
		}
	}
	return m, nil
}

// AddCcCmd runs cmd as git send-email runs its --cc-cmd, "CMD FILE" by
// the shell for each message written to a file, and adds each line it
// prints to that message's Cc (unless the message has the address). Call
// it after AddRecipients and before the final Messages; it renders the
// messages once itself.
func (s *Series) AddCcCmd(cmd string) error {
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kpatch-cc-cmd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s.who.cmdCc = map[int][]string{}
	for i, m := range msgs {
		f := filepath.Join(dir, m.Filename)
		if err := os.WriteFile(f, []byte(m.Text), 0o644); err != nil {
			return err
		}
		out, err := exec.Command("sh", "-c", cmd+" "+shellQuote(f)).Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = strings.TrimSpace(string(ee.Stderr))
			}
			return fmt.Errorf("--cc-cmd %q on %s: %v %s", cmd, m.Filename, err, stderr)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			a := mail.NormalizeAddress(l)
			s.who.cmdCc[i] = append(s.who.cmdCc[i], a)
		}
		to, cc := &s.To, &s.Cc
		if i > 0 {
			to, cc = &s.Patches[i-1].To, &s.Patches[i-1].Cc
		}
		*cc = minus(merge(*cc, s.who.cmdCc[i]), *to)
	}
	return nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Recipient is one recipient of a message and why it gets it.
type Recipient struct {
	Address string   `json:"address"`
	Header  string   `json:"header"` // "To", "Cc", or "send" for one git send-email adds when it sends
	Why     []string `json:"why"`
}

// Who is every recipient of one message, and why.
type Who struct {
	Message    int         `json:"message"` // 0: the cover letter
	File       string      `json:"file"`
	Recipients []Recipient `json:"recipients"`
}

// Who says, for each message of msgs (Messages), who receives it and why:
// the MAINTAINERS entry with its role, as get_maintainer.pl --rolestats
// writes it ("maintainer:TRACING", "open list:..."), "series To"/"series
// Cc" (the revision's header), "--to"/"--cc", "--cc-cmd"; and those git
// send-email adds when it sends the message from sender, each with its
// class (author, self, sob, misc-by, bodycc), unless SuppressCc left the
// class out.
func (s *Series) Who(msgs []Message, sender string) []Who {
	var out []Who
	for i, m := range msgs {
		w := Who{Message: i, File: m.Filename}
		var to, cc []string
		var roles []maintainers.Recipient
		if i == 0 {
			to, cc, roles = s.To, s.Cc, s.who.coverRoles
			if roles == nil {
				for _, p := range s.Patches { // a stacked series' cover: its patches'
					roles = append(roles, p.roles...)
				}
			}
		} else {
			p := s.Patches[i-1]
			to, cc, roles = p.To, p.Cc, p.roles
		}
		why := func(a string) []string {
			var r []string
			add := func(x string) {
				for _, y := range r {
					if y == x {
						return
					}
				}
				r = append(r, x)
			}
			for _, x := range roles {
				if sameAddress(x.Address, a) {
					add(x.Role)
				}
			}
			for _, src := range []struct {
				list []string
				why  string
			}{{s.Revision.To, "series To"}, {s.Revision.Cc, "series Cc"}, {s.extraTo, "--to"}, {s.extraCc, "--cc"}, {s.who.cmdCc[i], "--cc-cmd"}} {
				for _, x := range src.list {
					if sameAddress(x, a) {
						add(src.why)
					}
				}
			}
			return r
		}
		for _, a := range to {
			w.Recipients = append(w.Recipients, Recipient{a, "To", why(a)})
		}
		for _, a := range cc {
			w.Recipients = append(w.Recipients, Recipient{a, "Cc", why(a)})
		}
		for _, a := range sendTimeCc(m.Text, sender, s.who.suppress) {
			found := false
			for j, r := range w.Recipients {
				if sameAddress(r.Address, a.addr) {
					found = true
					if !contains(r.Why, a.why) {
						w.Recipients[j].Why = append(w.Recipients[j].Why, a.why)
					}
				}
			}
			if !found {
				w.Recipients = append(w.Recipients, Recipient{a.addr, "send", []string{a.why}})
			}
		}
		out = append(out, w)
	}
	return out
}

// sameAddress reports whether a and b name the same mailbox.
func sameAddress(a, b string) bool {
	return strings.EqualFold(bareAddress(a), bareAddress(b))
}

// bareAddress is the user@host of an address as a header or a trailer
// writes it.
func bareAddress(a string) string {
	if i := strings.LastIndexByte(a, '<'); i >= 0 {
		if j := strings.IndexByte(a[i:], '>'); j > 0 {
			return strings.TrimSpace(a[i+1 : i+j])
		}
	}
	return strings.TrimSpace(a)
}

// sendCc is an address git send-email adds when it sends a message.
type sendCc struct{ addr, why string }

// bodyTrailer is git send-email's /^([a-z][a-z-]*-by|Cc): (.*)/i, which it
// applies to every line of the body, the diff included.
var bodyTrailer = regexp.MustCompile(`(?i)^([a-z][a-z-]*-by|Cc): (.*)$`)

// sendTimeCc returns the addresses git send-email (2.39) adds to the
// message in text when sender sends it, each with its --suppress-cc
// class, leaving out the suppressed ones: the From: header (author, or
// self when it is the sender), and every body line that is a trailer
// (Signed-off-by: sob, another -by: misc-by, Cc: bodycc; self when the
// sender's) and names an address.
func sendTimeCc(text, sender string, suppress map[string]bool) []sendCc {
	head, body, _ := strings.Cut(text, "\n\n")
	var out []sendCc
	// git compares the sanitized address, name and all, with the
	// sender's: "Name (Google) <a@b>" is not the sender "Name <a@b>".
	isSelf := func(a string) bool { return mail.NormalizeAddress(a) == mail.NormalizeAddress(sender) }
	for _, l := range strings.Split(head, "\n") {
		if v, ok := strings.CutPrefix(l, "From: "); ok {
			a := strings.TrimSpace(v)
			if suppress["author"] || suppress["self"] && isSelf(a) {
				break
			}
			why := "author (git send-email)"
			if isSelf(a) {
				why = "self: the sender as author (git send-email)"
			}
			out = append(out, sendCc{a, why})
			break
		}
	}
	for _, l := range strings.Split(body, "\n") {
		m := bodyTrailer.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			continue
		}
		what, a := m[1], stripGarbage(m[2])
		class := "bodycc"
		switch {
		case isSelf(a):
			class = "self"
		case strings.EqualFold(what, "Signed-off-by"):
			class = "sob"
		case strings.HasSuffix(strings.ToLower(what), "-by"):
			class = "misc-by"
		}
		if suppress[class] || !strings.Contains(a, "@") && !strings.Contains(a, "<") {
			continue
		}
		out = append(out, sendCc{a, fmt.Sprintf("%s: %s trailer (git send-email)", class, what)})
	}
	return out
}

var (
	garbageAngle  = regexp.MustCompile(`^(("[^"]*"|[^"<]*)? *<[^>]*>).*`)
	garbageBare   = regexp.MustCompile(`^(<[^>]*>).*`)
	garbageNoQuot = regexp.MustCompile(`^([^"#,\s]*)`)
)

// stripGarbage is git send-email's strip_garbage_one_address.
func stripGarbage(a string) string {
	if m := garbageAngle.FindStringSubmatch(a); m != nil {
		return m[1]
	}
	if m := garbageBare.FindStringSubmatch(a); m != nil {
		return m[1]
	}
	if m := garbageNoQuot.FindStringSubmatch(a); m != nil {
		return m[1]
	}
	return a
}
