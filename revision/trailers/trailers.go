package trailers

import (
	"fmt"
	netmail "net/mail"
	"net/url"
	"regexp"
	"strings"

	"kpatch/plumbing/mail"
	"kpatch/plumbing/patchid"
	"kpatch/spec"
)

// Kinds are the trailers collected, as b4 trailers -u collects them from
// replies: every person trailer a reviewer gives (Acked-by, Reviewed-by,
// Tested-by, Reported-by, Suggested-by) and the links (Closes, Link).
var Kinds = []string{"Acked-by", "Reviewed-by", "Tested-by", "Reported-by", "Suggested-by", "Closes", "Link"}

// linkKinds are the kinds whose value is a URL, not a person.
var linkKinds = map[string]bool{"Closes": true, "Link": true}

var trailerRE = regexp.MustCompile(`^(?i:(Acked-by|Reviewed-by|Tested-by|Reported-by|Suggested-by|Closes|Link)):\s*(\S.*)$`)

// Given is a trailer that a reply gives to a posted patch.
type Given struct {
	Line    string `json:"trailer"`  // "Reviewed-by: Name <address>"
	Reply   string `json:"reply"`    // the reply's Message-Id, or its subject when it has none
	Target  int    `json:"patch"`    // the posted patch it answers; 0: the cover letter
	Title   string `json:"title"`    // that patch's title
	PatchID string `json:"patch_id"` // its git patch-id when its diff is at hand, else ""
	// Who and When are the provenance: the From and Date of the reply
	// that gave the trailer ("" when the reply has none).
	Who  string `json:"from"`
	When string `json:"date,omitempty"`
	// Invalid says why the trailer is not added ("" when it is fine): a
	// person trailer names one person with one mail address, "Name
	// <user@host>" or user@host; a Link or Closes trailer one URL.
	Invalid string `json:"invalid,omitempty"`
}

// Collect finds the trailers that the replies among msgs give, with the
// patch each answers.
func Collect(msgs []*mail.Message) []Given {
	byID := map[string]*mail.Message{}
	for _, m := range msgs {
		if m.MessageID != "" {
			byID[m.MessageID] = m
		}
	}
	var out []Given
	for _, m := range msgs {
		if sub := mail.ParseSubject(m.Subject); sub.Patch && !sub.Reply {
			continue // a patch or a cover letter: its own trailers are the author's
		}
		lines := trailerLines(m.Body)
		if len(lines) == 0 {
			continue
		}
		target := m
		for i := 0; i < 64; i++ {
			if sub := mail.ParseSubject(target.Subject); sub.Patch && !sub.Reply && target != m {
				break
			}
			parent := byID[target.InReplyTo]
			if parent == nil {
				break
			}
			target = parent
		}
		sub := mail.ParseSubject(target.Subject)
		if !sub.Patch {
			continue // not a reply to a patch series
		}
		n := sub.Number
		g := Given{Target: n, Title: sub.Title, Reply: m.MessageID, Who: m.From, When: m.Date}
		if g.Reply == "" {
			g.Reply = m.Subject
		}
		if target != m && n > 0 {
			if i := strings.Index(target.Body, "\ndiff --git "); i >= 0 {
				g.PatchID = patchid.Stable(target.Body[i+1:])
			}
		}
		for _, l := range lines {
			g.Line = l
			k, v, _ := strings.Cut(l, ": ")
			if linkKinds[k] {
				g.Invalid = linkProblem(v)
			} else {
				g.Invalid = personProblem(v)
			}
			out = append(out, g)
		}
	}
	return out
}

// personProblem says why v, the value of a person trailer, is not one
// person with one mail address, or returns "".
func personProblem(v string) string {
	addrs, err := netmail.ParseAddressList(v)
	switch {
	case err == nil && len(addrs) == 1:
		return ""
	case strings.Count(v, "@") > 1 || err == nil:
		return "more than one address: a trailer names one person"
	case !strings.Contains(v, "@"):
		return "no mail address: want \"Name <user@host>\""
	}
	return fmt.Sprintf("not a mail address (%v): want \"Name <user@host>\"", err)
}

// linkProblem says why v, the value of a Link or Closes trailer, is not
// one URL, or returns "".
func linkProblem(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(v, " \t") {
		return "not one URL: want \"https://host/path\""
	}
	return ""
}

// Invalid returns the trailers of given that are not added, each with why.
func Invalid(given []Given) []Given {
	var out []Given
	for _, g := range given {
		if g.Invalid != "" {
			out = append(out, g)
		}
	}
	return out
}

// trailerLines returns the unquoted trailer lines of a body, normalized
// to the canonical capitalization.
func trailerLines(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		m := trailerRE.FindStringSubmatch(strings.TrimRight(l, " \t\r"))
		if m == nil {
			continue
		}
		for _, k := range Kinds {
			if strings.EqualFold(k, m[1]) {
				out = append(out, k+": "+m[2])
			}
		}
	}
	return out
}

// Added is one trailer added to a patch description.
type Added struct {
	File    string `json:"file"`  // the patch description, relative to the spec directory
	Patch   int    `json:"patch"` // its number in the revision as posted
	ID      string `json:"id"`
	Stack   string `json:"stack,omitempty"` // the stacked series the revision is of ("" for the main series)
	Version int    `json:"version"`         // the revision the trailer is for
	Trailer string `json:"trailer"`
	Reply   string `json:"reply"`
	Who     string `json:"from"`           // the reply's sender
	When    string `json:"date,omitempty"` // the reply's date
	By      string `json:"matched_by"`     // "patch-id", "subject" or "cover letter"
}

// Unmatched is a trailer whose patch the revision does not have.
type Unmatched struct {
	Given
}

// Plan decides which trailers go to which patches of rev. ids maps a patch
// number of rev to its patch-id (nil when no tree was given). Of a
// stacked series (x86 v2), only its own patches, the ones it posted,
// take trailers.
func Plan(rev *spec.Revision, given []Given, ids map[int]string) ([]Added, []Given) {
	var added []Added
	var unmatched []Given
	seen := map[string]bool{}
	stack, patches := rev.StackName(), rev.Patches[rev.Own:] // Own: 0 for the main series
	add := func(p *spec.Patch, g Given, by string) {
		key := p.ID + "\x00" + g.Line
		if seen[key] || hasTrailer(p.Log, g.Line) {
			return
		}
		seen[key] = true
		added = append(added, Added{File: p.Src, Patch: p.Number - rev.Own, ID: p.ID, Stack: stack, Version: rev.Version, Trailer: g.Line, Reply: g.Reply, Who: g.Who, When: g.When, By: by})
	}
	for _, g := range given {
		if g.Invalid != "" {
			continue // see Invalid
		}
		if g.Target == 0 {
			for _, p := range patches {
				add(p, g, "cover letter")
			}
			continue
		}
		var match *spec.Patch
		by := ""
		if g.PatchID != "" {
			for _, p := range patches {
				if ids[p.Number] == g.PatchID {
					match, by = p, "patch-id"
				}
			}
		}
		if match == nil {
			for _, p := range patches {
				if strings.Join(strings.Fields(p.Subject), " ") == g.Title {
					match, by = p, "subject"
				}
			}
		}
		if match == nil {
			unmatched = append(unmatched, g)
			continue
		}
		add(match, g, by)
	}
	return added, unmatched
}

func hasTrailer(log, line string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.EqualFold(strings.TrimSpace(l), line) {
			return true
		}
	}
	return false
}

// Write adds the planned trailers to the patch descriptions under specDir,
// at the end of each commit message (spec.Writer's AddTrailer): every
// file changes, or none does. The caller holds the spec copy's lock
// (outdir.LockEdit), so that two runs do not both read the same
// descriptions and each write its own trailers over the other's.
func Write(specDir string, added []Added) error {
	w := spec.NewWriter(specDir)
	for _, a := range added {
		add := w.AddTrailer
		if a.Stack != "" {
			add = func(decl string, version int, line string) error {
				return w.AddStackedTrailer(decl, a.Stack, version, line)
			}
		}
		if err := add(a.File, a.Version, a.Trailer); err != nil {
			return err
		}
	}
	return w.Write()
}
