package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"

	"kpatch/plumbing/outdir"
)

// Writer changes the files of a series description in a directory (a
// copy kpatch spec -o DIR wrote) through the parts of the format: a
// revision's header fields, its cover letter and notes, the trailers and
// message of a patch declaration, the template of a created file, a new
// revision's folder. It is the one writer of the format: kpatch revision
// new, kpatch trailers and the weave tools change a spec only through it.
//
// The changes are kept until Write, which writes them all at once, and
// only when the description loads with them. The caller holds the
// directory's lock (outdir.LockEdit) from before the first change, so that
// what it changes is what the last run wrote.
type Writer struct {
	dir    string
	files  map[string][]byte    // the new content of each file changed, by slash path
	order  []string             // the files changed, in the order first changed
	added  map[string][]trailer // trailers for a declaration, placed by Write
	newRev string               // the revision folder the writer creates, "" for none
}

// trailer is a trailer line added to a declaration for revision version
// and later, of the stacked series stack ("" for the main series).
type trailer struct {
	stack   string
	version int
	line    string
}

// NewWriter returns a writer of the series description in dir.
func NewWriter(dir string) *Writer {
	return &Writer{dir: dir, files: map[string][]byte{}, added: map[string][]trailer{}}
}

// read returns the content of the file at p (slash-separated, relative to
// the directory) as the writer has it.
func (w *Writer) read(p string) ([]byte, error) {
	if err := w.placeTrailers(p); err != nil {
		return nil, err
	}
	if data, ok := w.files[p]; ok {
		return data, nil
	}
	return os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(p)))
}

// set records the new content of the file at p.
func (w *Writer) set(p string, data []byte) {
	if _, ok := w.files[p]; !ok {
		w.order = append(w.order, p)
	}
	w.files[p] = data
}

// AddRevision starts the folder of a new revision, name ("v17"), with the
// series file and the order of the revision in folder from: the new
// revision lists the same patches, and its header and cover letter are
// from's until changed. Write creates the folder at once.
func (w *Writer) AddRevision(from, name string) error {
	if w.newRev != "" {
		return fmt.Errorf("%s: one new revision a write (%s is started)", name, w.newRev)
	}
	if !revFolder.MatchString(name) {
		return fmt.Errorf("%q: a revision folder is named vN or NAME-vN", name)
	}
	if _, err := os.Stat(filepath.Join(w.dir, name)); err == nil {
		return fmt.Errorf("%s: %w", filepath.Join(w.dir, name), outdir.ErrExists)
	}
	for _, f := range []string{"series", "order"} {
		data, err := w.read(from + "/" + f)
		if err != nil {
			return err
		}
		w.set(name+"/"+f, data)
	}
	w.newRev = name
	return nil
}

// revFolder matches the name of a revision's folder.
var revFolder = regexp.MustCompile(`^([a-z0-9][a-z0-9.-]*-)?v[0-9]+$`)

// SetField sets the header field key of the revision in folder rev (its
// series file) to value: its line is replaced, or added at the end of the
// header when the header has none.
func (w *Writer) SetField(rev, key, value string) error {
	src := rev + "/series"
	data, err := w.read(src)
	if err != nil {
		return err
	}
	if key == "" || strings.ContainsAny(key, ": \t\n") || strings.Contains(value, "\n") {
		return fmt.Errorf("%s: %q: %q: a header field is one line, \"Key: value\"", src, key, value)
	}
	w.set(src, []byte(setField(string(data), key, value)))
	return nil
}

// setField sets a field of a series file's header, the lines before the
// first blank one.
func setField(text, key, value string) string {
	header, rest, hasRest := strings.Cut(text, "\n\n")
	lines := strings.Split(header, "\n")
	field := key + ": " + value
	found := false
	out := lines[:0]
	for _, l := range lines {
		if k, _, ok := strings.Cut(l, ":"); ok && k == key {
			if found {
				continue // said twice: the one value replaces both
			}
			found = true
			l = field
		}
		out = append(out, l)
	}
	if !found {
		out = append(out, field)
	}
	header = strings.Join(out, "\n")
	if !hasRest {
		return header
	}
	return header + "\n\n" + rest
}

// changesLine starts a "Changes since vN" section of a cover letter.
var changesLine = regexp.MustCompile(`(?m)^Changes (since|in) v\d+`)

// AddCoverChanges adds section, a "Changes since vN" section ending in a
// blank line, to the cover letter of the revision in folder rev: above its
// newest such section (the way maintainers stack them), or at its end when
// it has none.
func (w *Writer) AddCoverChanges(rev, section string) error {
	src := rev + "/series"
	data, err := w.read(src)
	if err != nil {
		return err
	}
	header, cover, ok := strings.Cut(string(data), "\n\n")
	if !ok {
		return fmt.Errorf("%s: no blank line after the header: the cover letter follows it", src)
	}
	w.set(src, []byte(header+"\n\n"+addCoverSection(cover, section)))
	return nil
}

// addCoverSection puts the new section before the first "Changes since"
// section of a cover letter, or at its end.
func addCoverSection(text, section string) string {
	if loc := changesLine.FindStringIndex(text); loc != nil {
		return text[:loc[0]] + section + text[loc[0]:]
	}
	return strings.TrimRight(text, "\n") + "\n\n" + strings.TrimRight(section, "\n") + "\n"
}

// SetNotes sets the notes below "---" of patch id in the revision in
// folder rev (rev/<id>.notes).
func (w *Writer) SetNotes(rev, id, notes string) {
	w.set(rev+"/"+id+".notes", []byte(notes))
}

// Literal returns template text that renders as text: every "{{" is
// written as {{"{{"}}, so that nothing in it is read as an action.
func Literal(text string) string {
	return strings.ReplaceAll(text, "{{", `{{"{{"}}`)
}

// AddTrailer adds line, a trailer ("Reviewed-by: Name <address>"), to the
// commit message of the patch declared in decl (vN/<id>.patch) for
// revision version and later. The line is text: it renders as given,
// whatever it holds (Literal). The declaration is in the folder of the
// first revision that has the patch: a trailer given to a later revision
// is guarded by it ({{if ge .Version N}}), so that the revisions posted
// before stay as they were. Write places every trailer of a declaration
// at the end of its commit message, in the order added, those for one
// revision together.
func (w *Writer) AddTrailer(decl string, version int, line string) error {
	if m := declName.FindStringSubmatch(decl); m == nil {
		return fmt.Errorf("%s: not a patch declaration (vN/<id>.patch)", decl)
	}
	return w.addTrailer(decl, trailer{"", version, line})
}

// AddStackedTrailer is AddTrailer for revision version of the stacked
// series stack (x86 v3): the declaration is where its patch was first
// declared (a main revision's folder, vN/<id>.patch, or a stacked one's,
// NAME-vN/<id>.patch). The trailer is guarded by the stacked series'
// name and version ({{if and (eq .Stack "x86") (ge .StackVersion 3)}}),
// so that neither the main series nor the stacked revisions posted
// before change; in the folder of that very revision it needs no guard.
func (w *Writer) AddStackedTrailer(decl, stack string, version int, line string) error {
	if declName.FindStringSubmatch(decl) == nil && stackedDeclName.FindStringSubmatch(decl) == nil {
		return fmt.Errorf("%s: not a patch declaration (vN/<id>.patch or NAME-vN/<id>.patch)", decl)
	}
	if stack == "" {
		return fmt.Errorf("%s: no stacked series named", decl)
	}
	return w.addTrailer(decl, trailer{stack, version, line})
}

func (w *Writer) addTrailer(decl string, t trailer) error {
	if strings.Contains(t.line, "\n") {
		return fmt.Errorf("%s: %q: a trailer is one line", decl, t.line)
	}
	w.added[decl] = append(w.added[decl], t)
	return nil
}

// placeTrailers puts the trailers added to the declaration at p into its
// text.
func (w *Writer) placeTrailers(p string) error {
	added := w.added[p]
	if len(added) == 0 {
		return nil
	}
	delete(w.added, p)
	data, err := w.read(p)
	if err != nil {
		return err
	}
	folder, _, _ := strings.Cut(p, "/")
	declared := 0
	if m := declName.FindStringSubmatch(p); m != nil {
		declared, _ = strconv.Atoi(m[1])
	}
	var lines []string
	for i := 0; i < len(added); {
		j := i
		for j < len(added) && added[j].version == added[i].version && added[j].stack == added[i].stack {
			j++
		}
		guard := ""
		if st := added[i].stack; st != "" {
			if folder != fmt.Sprintf("%s-v%d", st, added[i].version) {
				guard = fmt.Sprintf("{{if and (eq .Stack %q) (ge .StackVersion %d)}}", st, added[i].version)
			}
		} else if added[i].version > declared {
			guard = fmt.Sprintf("{{if ge .Version %d}}", added[i].version)
		}
		guarded := guard != ""
		if guarded {
			lines = append(lines, guard)
		}
		for _, t := range added[i:j] {
			lines = append(lines, Literal(t.line))
		}
		if guarded {
			lines = append(lines, "{{end}}")
		}
		i = j
	}
	text, err := insertTrailers(string(data), lines)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	w.set(p, []byte(text))
	return nil
}

// insertTrailers puts lines after the last line of the commit message of a
// declaration's text, which ends at "=== edits" or the end of the file.
func insertTrailers(text string, lines []string) (string, error) {
	_, body, ok := strings.Cut(text, "\n\n")
	if !ok {
		return "", fmt.Errorf("no blank line after the header")
	}
	start := len(text) - len(body)
	end := len(text)
	for _, sep := range []string{"\n---\n", "\n=== edits\n"} {
		if i := strings.Index(body, sep); i >= 0 && start+i+1 < end {
			end = start + i + 1
		}
	}
	if strings.HasPrefix(body, "---\n") || strings.HasPrefix(body, "=== edits\n") {
		return "", fmt.Errorf("empty commit message")
	}
	msg := strings.TrimRight(text[:end], "\n")
	return msg + "\n" + strings.Join(lines, "\n") + "\n" + text[end:], nil
}

// SetMessage replaces the header and commit message of the patch declared
// in decl (vN/<id>.patch) with text, a template of the declaration's
// language (see Patch declarations) that ends in a newline, and keeps its
// edits as written. A declaration that does not exist yet is text.
func (w *Writer) SetMessage(decl, text string) error {
	if declName.FindStringSubmatch(decl) == nil {
		return fmt.Errorf("%s: not a patch declaration (vN/<id>.patch)", decl)
	}
	old, err := w.read(decl)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, edits, ok := strings.Cut(string(old), "\n=== edits\n"); ok {
		text += "=== edits\n" + edits
	}
	w.set(decl, []byte(text))
	return nil
}

// SetTemplate sets the template of the created file at p, the path in the
// kernel tree (files/<p>.tmpl).
func (w *Writer) SetTemplate(p, text string) {
	w.set("files/"+p+".tmpl", []byte(text))
}

// Files returns the files Write changes or adds, relative to the
// directory, in the order first changed.
func (w *Writer) Files() []string {
	for p := range w.added {
		w.placeTrailers(p) // an error is Write's to report
	}
	return slices.Clone(w.order)
}

// Write writes the changes: the new revision's folder, if any, at once
// (outdir.Create), and every other file changed all at once (outdir's
// ReplaceFiles), each only after the series description has loaded with
// every change. When it does not load, or the folder cannot be made,
// nothing is written; when replacing the other files fails, the new
// folder is removed again.
func (w *Writer) Write() error {
	for p := range w.added {
		if err := w.placeTrailers(p); err != nil {
			return err
		}
	}
	if len(w.order) == 0 {
		return nil
	}
	fsys, err := w.overlay()
	if err != nil {
		return err
	}
	if _, err := Load(fsys); err != nil {
		return fmt.Errorf("with these changes the series description does not load: %w", err)
	}
	var changes []outdir.Change
	for _, p := range w.order {
		if w.newRev == "" || !strings.HasPrefix(p, w.newRev+"/") {
			changes = append(changes, outdir.Change{Path: p, Data: w.files[p]})
		}
	}
	if w.newRev != "" {
		dst := filepath.Join(w.dir, w.newRev)
		err := outdir.Create(dst, func(tmp string) error {
			for _, p := range w.order {
				if rel, ok := strings.CutPrefix(p, w.newRev+"/"); ok {
					if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(rel)), w.files[p], 0o644); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			if err := replace(w.dir, changes); err != nil {
				os.RemoveAll(dst)
				return err
			}
		}
		return nil
	}
	return replace(w.dir, changes)
}

// readFollowing reads the regular files under dir/p into m, following
// symbolic links; seen holds the folders on the way, to stop at a cycle.
func readFollowing(dir, p string, m fstest.MapFS, seen []os.FileInfo) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	st, err := os.Stat(full)
	if err != nil {
		return err
	}
	for _, s := range seen {
		if os.SameFile(s, st) {
			return nil
		}
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		return err
	}
	seen = append(seen, st)
	for _, e := range ents {
		q := path.Join(p, e.Name())
		info, err := os.Stat(filepath.Join(full, e.Name())) // through a link
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			if err := readFollowing(dir, q, m, seen); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			data, err := os.ReadFile(filepath.Join(full, e.Name()))
			if err != nil {
				return err
			}
			m[q] = &fstest.MapFile{Data: data}
		}
	}
	return nil
}

// replace writes changes under dir all at once, making the folders of new
// files first.
func replace(dir string, changes []outdir.Change) error {
	for _, c := range changes {
		if d := path.Dir(c.Path); d != "." {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
				return err
			}
		}
	}
	return outdir.ReplaceFiles(dir, changes)
}

// overlay returns the series description as it is with the changes: the
// directory's files, and the changed ones over them. Symbolic links are
// followed, to files and to folders, as the loader (and so gen) follows
// them; a link back to a folder on the way (a cycle) is not.
func (w *Writer) overlay() (fs.FS, error) {
	m := fstest.MapFS{}
	if err := readFollowing(w.dir, ".", m, nil); err != nil {
		return nil, err
	}
	for p, data := range w.files {
		m[p] = &fstest.MapFile{Data: data}
	}
	return m, nil
}
