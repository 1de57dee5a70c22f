package patchmail

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/outdir"
)

// Filename is git format-patch's name for patch n of revision v ("v11-0001-
// Subject-words.patch", at most 64 bytes; no "vN-" for v <= 1).
func Filename(v, n int, subject string) string {
	var b strings.Builder
	space := 2
	for i := 0; i < len(subject); i++ {
		c := subject[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' {
			if space == 1 {
				b.WriteByte('-')
			}
			space = 0
			b.WriteByte(c)
			for c == '.' && i+1 < len(subject) && subject[i+1] == '.' {
				i++
			}
		} else {
			space |= 1
		}
	}
	name := fmt.Sprintf("%04d-%s", n, strings.TrimRight(b.String(), ".-"))
	if v > 1 {
		name = fmt.Sprintf("v%d-%s", v, name)
	}
	if max := 64 - len(".patch") - 1; len(name) > max {
		name = name[:max]
	}
	return name + ".patch"
}

// Text renders the patch as git format-patch writes it: the "From <commit>"
// line (zeros when the commit is unknown), From, Date, Subject and the
// threading headers that are known, the in-body From: line when the author
// is not the sender, the commit message, "---", the notes, the diffstat
// and the diff.
func (p *Patch) Text() string {
	var b strings.Builder
	c := p.Commit
	if c == "" {
		c = strings.Repeat("0", 40)
	}
	fmt.Fprintf(&b, "From %s Mon Sep 17 00:00:00 2001\n", c)
	if p.MessageID != "" {
		fmt.Fprintf(&b, "Message-Id: <%s>\n", p.MessageID)
	}
	if p.InReplyTo != "" {
		fmt.Fprintf(&b, "In-Reply-To: <%s>\n", p.InReplyTo)
	}
	from := p.From
	if from == "" || !strings.Contains(from, "@") {
		from = p.Author
	}
	fmt.Fprintf(&b, "From: %s\n", from)
	if p.Date != "" {
		fmt.Fprintf(&b, "Date: %s\n", p.Date)
	}
	fmt.Fprintf(&b, "Subject: %s\n\n", p.Subject)
	if p.Author != from {
		fmt.Fprintf(&b, "From: %s\n\n", p.Author)
	}
	b.WriteString(p.Log)
	b.WriteString("---\n")
	if p.Changelog != "" {
		b.WriteString(strings.TrimRight(p.Changelog, "\n") + "\n\n")
	}
	if p.Diffstat != "" {
		b.WriteString(strings.TrimRight(p.Diffstat, "\n") + "\n\n")
	}
	b.WriteString(p.Diff)
	b.WriteString("-- \nkpatch series import\n\n")
	return b.String()
}

// WriteDir writes the series' patches into dir, which must not exist, one
// format-patch file each (and the cover letter as NNNN 0000 when there is
// one), atomically (package outdir's Create: into a temporary directory
// renamed into place when complete). It returns the file names.
func (s *Series) WriteDir(dir string) ([]string, error) {
	var names []string
	err := outdir.Create(dir, func(tmp string) error {
		write := func(name, text string) error {
			names = append(names, filepath.Join(dir, name))
			return os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644)
		}
		if s.Cover != nil {
			var b strings.Builder
			fmt.Fprintf(&b, "From %s Mon Sep 17 00:00:00 2001\nFrom: %s\nSubject: %s\n\n%s", strings.Repeat("0", 40), s.Cover.From, s.Cover.Subject, s.Cover.Body)
			name := "0000-cover-letter.patch"
			if s.Version > 1 {
				name = fmt.Sprintf("v%d-%s", s.Version, name)
			}
			if err := write(name, b.String()); err != nil {
				return err
			}
		}
		for _, p := range s.Patches {
			if err := write(Filename(s.Version, p.Number, p.Title), p.Text()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}
