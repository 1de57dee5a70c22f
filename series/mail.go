package series

import (
	"fmt"
	netmail "net/mail"
	"sort"
	"strings"
	"time"

	"kpatch/plumbing/diffstat"
	"kpatch/plumbing/linediff"
	"kpatch/plumbing/mail"
	"kpatch/plumbing/outdir"
	"kpatch/plumbing/patchid"
)

// Signature ends every message, as git's version does for format-patch.
const Signature = "kpatch"

// abbrev is the length of abbreviated hashes: the kernel's core.abbrev.
const abbrev = 12

// Message is one mail of the series.
type Message struct {
	Number   int    // 0 for the cover letter
	Filename string // as git format-patch names it
	Text     string // the whole message, starting with the "From <sha>" line
}

// Diff returns the git diff of one file change, from "diff --git" on, and
// its diffstat entry. It is made on first use and kept.
func (s *Series) Diff(f *FileChange) (text string, stat diffstat.File) {
	f.once.Do(func() { f.diff, f.stat = s.makeDiff(f) })
	return f.diff, f.stat
}

// makeDiff is Diff without keeping the result.
func (s *Series) makeDiff(f *FileChange) (text string, stat diffstat.File) {
	opt := linediff.DefaultOptions()
	opt.FuncName = linediff.DriverFuncName(linediff.KernelDriver(f.Path))
	hunks, add, del := linediff.UnifiedWith(f.Old, f.New, opt)
	var b strings.Builder
	b.Grow(len(hunks) + 4*len(f.Path) + 160) // the header lines and the hunks, in one piece
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n", f.Path, f.Path)
	newHash := f.id().String()[:abbrev]
	stat = diffstat.File{Path: f.Path, Created: f.Created, Mode: "100644"}
	if f.Created {
		fmt.Fprintf(&b, "new file mode 100644\nindex %s..%s\n--- /dev/null\n", strings.Repeat("0", abbrev), newHash)
	} else {
		stat.Mode = s.Tree.Mode(f.Path)
		fmt.Fprintf(&b, "index %s..%s %s\n--- a/%s\n", f.oldID().String()[:abbrev], newHash, stat.Mode, f.Path)
	}
	fmt.Fprintf(&b, "+++ b/%s\n", f.Path)
	b.WriteString(hunks)
	stat.Added, stat.Deleted = add, del
	return b.String(), stat
}

// messageID returns the Message-Id of message n (0: the cover letter).
// It depends on the series description only, so the same series generated
// against another base keeps its threading.
func (s *Series) messageID(n int) string {
	r := s.Revision
	return fmt.Sprintf("<%s-v%d-%d@%s>", r.ChangeID, r.Version, n, r.MessageIDDomain)
}

func (s *Series) subjectPrefix(n int) string {
	total := len(s.Patches)
	w := len(fmt.Sprint(total))
	return fmt.Sprintf("[PATCH v%d %0*d/%d]", s.Revision.Version, w, n, total)
}

// header is the header of message n as git format-patch writes it (see
// mail.Header): threaded to the cover letter, marked 8-bit when eightBit
// (git does when a commit message is not ASCII).
func (s *Series) header(sha string, n int, from string, date time.Time, prefix, title string, to, cc []string, eightBit bool) mail.Header {
	h := mail.Header{Commit: sha, MessageID: s.messageID(n), From: from, Date: date.Format(mail.DateLayout),
		Prefix: prefix, Title: title, EightBit: eightBit, To: to, Cc: cc}
	if n > 0 {
		h.InReplyTo = s.messageID(0)
	}
	return h
}

// patchMessage renders patch p as git format-patch writes it, once the
// mail is prepared (prepareMail).
func (s *Series) patchMessage(p *Patch) Message {
	var diffs strings.Builder
	var stats []diffstat.File
	for _, f := range p.Files {
		d, st := s.Diff(f)
		diffs.WriteString(d)
		stats = append(stats, st)
	}
	h := s.header(p.commit, p.Number, p.Author, p.Date, s.subjectPrefix(p.Number), p.Subject, p.To, p.Cc, !mail.IsASCII(p.Subject+p.Log))
	text := mail.FormatPatch(h, mail.Body{Log: p.Log, Notes: p.Changelog, Diffstat: diffstat.Format(stats, diffstat.MailWidth),
		Diff: diffs.String(), Signature: Signature})
	if p.InBase && p.Changelog == "" {
		// git format-patch --always writes no "---" for an empty
		// commit.
		text = strings.Replace(text, "\n---\n-- \n", "\n-- \n", 1)
	}
	return Message{Number: p.Number, Filename: s.filename(p.Number, p.Subject), Text: text}
}

// filename is git format-patch's name for patch n of this revision.
func (s *Series) filename(n int, subject string) string {
	if v := s.Revision.Version; v == 1 {
		// git format-patch -v1 names the files v1-NNNN-*, as its
		// subjects say [PATCH v1 N/M]; mail.Filename leaves the v1
		// out.
		return mail.RerollFilename(v, n, subject)
	}
	return mail.Filename(s.Revision.Version, n, subject)
}

// coverMessage renders the cover letter, once the mail is prepared
// (prepareMail): the revision's text, the shortlog grouped by author, the
// diffstat of the whole series and the base commit.
func (s *Series) coverMessage() Message {
	r := s.Revision
	var b strings.Builder
	tip := ""
	if n := len(s.Patches); n > 0 {
		tip = s.Patches[n-1].commit
	}
	// git marks the cover letter 8-bit when any commit is not ASCII.
	eightBit := !mail.IsASCII(r.From + r.Subject + r.Cover)
	for _, p := range s.Patches {
		eightBit = eightBit || !mail.IsASCII(p.Author+p.Subject+p.Log)
	}
	h := s.header(tip, 0, r.From, r.Date, s.subjectPrefix(0), r.Subject, s.To, s.Cc, eightBit)
	b.WriteString(h.String())
	b.WriteString(strings.TrimRight(r.Cover, "\n") + "\n\n")
	b.WriteString(s.Shortlog())
	b.WriteString("\n")
	b.WriteString(diffstat.Format(s.TotalStat(), diffstat.MailWidth))
	b.WriteString("\n")
	if s.Tree.IsGit() {
		fmt.Fprintf(&b, "\nbase-commit: %s\n", s.Tree.Commit)
		// A stacked series names the patches it needs between the base and
		// its first patch, as git format-patch --base does (and b4 reads).
		for _, p := range s.prerequisites {
			fmt.Fprintf(&b, "prerequisite-patch-id: %s\n", s.PatchID(p))
		}
	}
	b.WriteString("-- \n" + Signature + "\n\n")
	return Message{Number: 0, Filename: fmt.Sprintf("v%d-0000-cover-letter.patch", r.Version), Text: b.String()}
}

// Shortlog groups the subjects by author as git shortlog does in a cover
// letter: authors sorted by name, subjects in series order, wrapped at 72.
func (s *Series) Shortlog() string {
	byAuthor := map[string][]string{}
	var names []string
	for _, p := range s.Patches {
		name := p.Author
		if a, err := netmail.ParseAddress(p.Author); err == nil {
			name = a.Name
		}
		if byAuthor[name] == nil {
			names = append(names, name)
		}
		byAuthor[name] = append(byAuthor[name], p.Subject)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s (%d):\n", n, len(byAuthor[n]))
		for _, subj := range byAuthor[n] {
			b.WriteString(mail.Wrap(subj, "  ", "    ", 72))
		}
	}
	return b.String()
}

// TotalStat returns the diffstat entries of the whole series: base to tip.
func (s *Series) TotalStat() []diffstat.File {
	first := map[string]*FileChange{}
	touches := map[string]int{}
	var paths []string
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if first[f.Path] == nil {
				first[f.Path] = f
				paths = append(paths, f.Path)
			}
			touches[f.Path]++
		}
	}
	sort.Strings(paths)
	var out []diffstat.File
	for _, path := range paths {
		f := first[path]
		if touches[path] == 1 {
			_, st := s.Diff(f) // one patch: its diff is the series'
			out = append(out, st)
			continue
		}
		_, st := s.makeDiff(&FileChange{Path: path, Old: f.Old, New: s.final[path], Created: f.Created, prev: f.prev, baseID: f.baseID, haveBase: f.haveBase})
		out = append(out, st)
	}
	return out
}

// Messages returns the cover letter and the patches, in order, as git
// format-patch --cover-letter --thread writes them.
func (s *Series) Messages() ([]Message, error) {
	if err := s.prepareMail(); err != nil {
		return nil, err
	}
	out := []Message{s.coverMessage()}
	for _, p := range s.Patches {
		out = append(out, s.patchMessage(p))
	}
	return out, nil
}

// Files returns the messages as the files of an output directory.
func Files(msgs []Message) []outdir.File {
	files := make([]outdir.File, len(msgs))
	for i, m := range msgs {
		files[i] = outdir.File{Name: m.Filename, Text: m.Text}
	}
	return files
}

// WriteDir writes every message into dir as its own file with package
// outdir: dir ends up holding this series or, after a failure, the one it
// held before, never a mix; series files of earlier runs are removed, and
// other files are refused (outdir.ErrForeign).
func WriteDir(dir string, msgs []Message) ([]string, error) {
	return outdir.Write(dir, Files(msgs), outdir.Options{})
}

// Mbox concatenates the messages as git format-patch --stdout does.
func Mbox(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text)
	}
	return b.String()
}

// PatchID returns git patch-id --stable of p's diff.
func (s *Series) PatchID(p *Patch) string {
	p.idOnce.Do(func() {
		var d strings.Builder
		for _, f := range p.Files {
			text, _ := s.Diff(f)
			d.WriteString(text)
		}
		p.id = patchid.Stable(d.String())
	})
	return p.id
}
