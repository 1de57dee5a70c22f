// Package oracle reads a posted patch series thread, such as
// shared/seed/unwind-v11-thread.txt, into structured patches, so that the
// series kpatch generates can be compared with what was really posted.
//
// The thread format is the one lore-style archives render: every message
// starts with its subject line, a blank line and the sender in brackets
// ("[Steven Rostedt]"), followed by the body. Patches are the messages whose
// subject is "[PATCH vN MM/TT] ..."; replies start with "Re:". An mbox of
// the thread, as b4 mbox or lore's t.mbox.gz gives it, is read too (see
// Text).
//
// Every diff in a patch names the git blob hashes of the file before and after
// it ("index a..b"), which makes the thread an oracle: a file the series
// creates can be rebuilt by applying the patches in order and checked byte
// for byte against those hashes (see CreatedFiles).
package oracle

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Thread is a parsed series thread: the cover letter, the patches in order
// and the replies.
type Thread struct {
	Version int      // the revision, from "[PATCH vN ...]"
	Total   int      // the number of patches announced in the subjects
	Cover   *Message // the 00/NN message, nil if absent
	Patches []*Patch // patches 1..Total, in order
	Replies []*Message
}

// Message is one message of the thread.
type Message struct {
	Subject string // the subject line as shown
	Sender  string // the name in brackets
	Body    string // everything after the sender line
	Line    int    // the line number of the subject in the thread
}

// Patch is one posted patch.
type Patch struct {
	Message
	Number    int    // MM in "[PATCH vN MM/TT]"
	Title     string // the subject without the "[PATCH ...]" prefix
	Author    string // the in-body From: line, or "" when the sender is the author
	Log       string // the commit message, including trailers
	Changelog string // the text between "---" and the diffstat, if any
	Diffstat  string // the diffstat block, summary and create-mode lines included
	Files     []*gitdiff.File
}

// ErrNoMessages is returned by Parse for text with no message of a thread
// in it: no "[PATCH vN MM/TT]" or "Re: [PATCH" subject line followed by a
// blank line and "[Sender]".
var ErrNoMessages = errors.New("oracle: no messages found")

var subjectRE = regexp.MustCompile(`^\[PATCH v(\d+) (\d+)/(\d+)\] (.*)$`)

// ParseFile reads a thread from a file.
func ParseFile(path string) (*Thread, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse splits a thread into messages and parses every patch. The thread
// is in the text form described in the package documentation, or an mbox
// (b4 mbox, lore's t.mbox.gz, gzip-compressed or not; see Text).
func Parse(data []byte) (*Thread, error) {
	data, err := Text(data)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var msgs []*Message
	for i := 0; i+2 < len(lines); i++ {
		subj := strings.TrimSuffix(lines[i], "\n")
		if !(subjectRE.MatchString(subj) || strings.HasPrefix(subj, "Re: [PATCH")) {
			continue
		}
		// A message header: subject, blank, "[Sender]" (the cover letter
		// repeats its subject once before).
		j := i + 1
		if strings.TrimSpace(lines[j]) != "" {
			continue
		}
		if strings.TrimSuffix(lines[j+1], "\n") == subj {
			continue // the first of the cover letter's two subject lines
		}
		snd := strings.TrimSpace(lines[j+1])
		if !strings.HasPrefix(snd, "[") || !strings.HasSuffix(snd, "]") {
			continue
		}
		if len(msgs) > 0 {
			prev := msgs[len(msgs)-1]
			prev.Body = strings.Join(lines[prev.Line+2:i], "")
		}
		msgs = append(msgs, &Message{Subject: subj, Sender: snd[1 : len(snd)-1], Line: i + 1})
		i = j + 1
	}
	if len(msgs) == 0 {
		return nil, ErrNoMessages
	}
	last := msgs[len(msgs)-1]
	last.Body = strings.Join(lines[last.Line+2:], "")
	for _, m := range msgs {
		m.Body = strings.TrimPrefix(m.Body, "\n")
	}

	t := &Thread{}
	for _, m := range msgs {
		sm := subjectRE.FindStringSubmatch(m.Subject)
		if sm == nil {
			t.Replies = append(t.Replies, m)
			continue
		}
		t.Version, _ = strconv.Atoi(sm[1])
		n, _ := strconv.Atoi(sm[2])
		t.Total, _ = strconv.Atoi(sm[3])
		if n == 0 {
			t.Cover = m
			continue
		}
		p, err := parsePatch(m, n, sm[4])
		if err != nil {
			return nil, err
		}
		t.Patches = append(t.Patches, p)
	}
	for i, p := range t.Patches {
		if p.Number != i+1 {
			return nil, fmt.Errorf("oracle: patch %d found where %d was expected (line %d)", p.Number, i+1, p.Line)
		}
	}
	return t, nil
}

func parsePatch(m *Message, n int, title string) (*Patch, error) {
	p := &Patch{Message: *m, Number: n, Title: title}
	body := m.Body
	if strings.HasPrefix(body, "From: ") {
		nl := strings.IndexByte(body, '\n')
		p.Author = strings.TrimPrefix(body[:nl], "From: ")
		body = strings.TrimPrefix(body[nl+1:], "\n")
	}
	sep := strings.Index(body, "\n---\n")
	if sep < 0 {
		return nil, fmt.Errorf("oracle: patch %d (line %d): no \"---\" line", n, m.Line)
	}
	p.Log = body[:sep+1]
	rest := body[sep+len("\n---\n"):]
	diffAt := strings.Index(rest, "\ndiff --git ")
	if diffAt < 0 {
		return nil, fmt.Errorf("oracle: patch %d (line %d): no diff", n, m.Line)
	}
	head := rest[:diffAt+1]
	// The diffstat is the last paragraph before the diff that is made of
	// " path | N +-" lines; what comes before it is the changelog.
	paras := strings.Split(strings.TrimSuffix(head, "\n"), "\n\n")
	p.Diffstat = paras[len(paras)-1] + "\n"
	if len(paras) > 1 {
		p.Changelog = strings.Join(paras[:len(paras)-1], "\n\n") + "\n"
	}
	files, _, err := gitdiff.Parse(strings.NewReader(rest[diffAt+1:]))
	if err != nil {
		return nil, fmt.Errorf("oracle: patch %d (line %d): %w", n, m.Line, err)
	}
	p.Files = files
	return p, nil
}

// BlobHash returns the git blob hash of content, as in "index" lines.
func BlobHash(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Version is the content of a created file after one patch.
type Version struct {
	Patch   int    // the patch that produced it
	Hash    string // the abbreviated blob hash the patch names ("index ..b")
	Content []byte
}

// CreatedFiles rebuilds every file that the series creates, after each patch
// that touches it, by applying the patches in order. It checks each result
// against the blob hash the patch names and fails on the first mismatch.
func (t *Thread) CreatedFiles() (map[string][]Version, error) {
	cur := map[string][]byte{}
	out := map[string][]Version{}
	for _, p := range t.Patches {
		for _, f := range p.Files {
			if !f.IsNew {
				if _, ok := cur[f.OldName]; !ok {
					continue // a pre-existing file of the tree
				}
			}
			var dst bytes.Buffer
			if err := gitdiff.Apply(&dst, bytes.NewReader(cur[f.OldName]), f); err != nil {
				return nil, fmt.Errorf("oracle: patch %d: applying %s: %w", p.Number, f.NewName, err)
			}
			got := BlobHash(dst.Bytes())
			if !strings.HasPrefix(got, f.NewOIDPrefix) {
				return nil, fmt.Errorf("oracle: patch %d: %s has blob %s, the patch says %s", p.Number, f.NewName, got[:12], f.NewOIDPrefix)
			}
			cur[f.NewName] = dst.Bytes()
			out[f.NewName] = append(out[f.NewName], Version{Patch: p.Number, Hash: f.NewOIDPrefix, Content: dst.Bytes()})
		}
	}
	return out, nil
}

// Text returns a thread in the text form Parse reads: data as it is, or
// the messages of an mbox rendered in that form (data may be
// gzip-compressed, as lore's t.mbox.gz is).
func Text(data []byte) ([]byte, error) {
	if isGzip(data) {
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, fmt.Errorf("oracle: gzip: %w", err)
		}
	}
	if isMbox(data) {
		return fromMbox(data)
	}
	return data, nil
}

// SeedName is the file name of the posted v11 thread in shared/seed.
const SeedName = "unwind-v11-thread.txt"

// SeedMessageID is the Message-Id of the v11 cover letter as posted to
// lore.kernel.org; the seed is its thread.
const SeedMessageID = "20250625225600.555017347@goodmis.org"

// ErrNoSeed is returned by SeedPath when the posted v11 thread is missing.
var ErrNoSeed = errors.New("the posted v11 thread, the specification the tests check kpatch against, is missing")

// SeedHelp says where the seed comes from and how to point the tests at
// it: the one text the README and every failing test give.
const SeedHelp = "save the thread of lore Message-Id <" + SeedMessageID + "> as ../shared/seed/" + SeedName +
	" beside the repository (from its directory: mkdir -p ../shared/seed && b4 mbox -o ../shared/seed -n " + SeedName + " " + SeedMessageID +
	"; or download https://lore.kernel.org/all/" + SeedMessageID + "/t.mbox.gz and gunzip it to that name)" +
	", or save it anywhere and set KPATCH_SEED to its path"

// SeedPath finds the posted v11 thread: $KPATCH_SEED if set, else
// shared/seed/unwind-v11-thread.txt in the working directory or any of its
// parents (the repository's checkout has shared/ beside it). A missing
// thread is ErrNoSeed, with SeedHelp.
func SeedPath() (string, error) {
	if p := os.Getenv("KPATCH_SEED"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("oracle: KPATCH_SEED=%s: %w: %s", p, ErrNoSeed, SeedHelp)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "seed", SeedName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("oracle: no shared/seed/%s above the working directory and KPATCH_SEED is not set: %w: %s", SeedName, ErrNoSeed, SeedHelp)
		}
		dir = parent
	}
}

// ParseSeed finds the posted v11 thread with SeedPath and parses it.
func ParseSeed() (*Thread, error) {
	p, err := SeedPath()
	if err != nil {
		return nil, err
	}
	return ParseFile(p)
}

// ReadSeed finds the posted v11 thread with SeedPath and returns it in the
// text form (see Text).
func ReadSeed() ([]byte, error) {
	p, err := SeedPath()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return Text(data)
}
