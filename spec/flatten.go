package spec

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Flatten writes revision r out as one reads it, with every guard resolved:
// "series" (its header and cover letter as written), one "NN-id.patch" a
// patch in order (header, commit message, the notes below "---", the edits
// after "=== edits"; a fold lists its folded patches in a "Folds:" line),
// and under "files/" every created file as it is after the last patch. The
// result is for reading and for diffing two revisions, not for loading.
func (r *Revision) Flatten() (map[string][]byte, error) {
	series, err := fs.ReadFile(r.spec.fsys, r.Dir+"/series")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{"series": series}
	for _, p := range r.Patches {
		var b strings.Builder
		fmt.Fprintf(&b, "Author: %s\nSubject: %s\n", p.Author, p.Subject)
		if len(p.Folded) > 0 {
			fmt.Fprintf(&b, "Folds: %s\n", strings.Join(p.Folded, ", "))
		}
		b.WriteString("\n" + p.Log)
		if p.Changelog != "" {
			b.WriteString("---\n" + p.Changelog)
		}
		if len(p.Edits) > 0 {
			b.WriteString("=== edits\n")
			for i, e := range p.Edits {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString(editLine(e) + "\n")
				for _, l := range strings.SplitAfter(e.Text, "\n") {
					if l != "" {
						b.WriteString("+" + l)
					}
				}
			}
		}
		out[fmt.Sprintf("%02d-%s.patch", p.Number, p.ID)] = []byte(b.String())
	}
	for _, path := range r.spec.CreatedFiles() {
		data, ok, err := r.Render(path, len(r.Patches))
		if err != nil {
			return nil, err
		}
		if ok {
			out["files/"+path] = data
		}
	}
	return out, nil
}

// editLine writes an edit's "@ PATH: OP ARGS" line as parseEditLine reads it.
func editLine(e Edit) string {
	words := []string{e.Op}
	for _, a := range e.Args {
		if a == "" || strings.ContainsAny(a, " \"\\\t") {
			a = strconv.Quote(a)
		}
		words = append(words, a)
	}
	return "@ " + e.Path + ": " + strings.Join(words, " ")
}
