// Command remessage rewrites the patch declarations of a spec from the
// commit messages of posted revisions: for each revision given with
// -posted (git format-patch files, one a patch in the order of the
// revision's order file), the subject, author and message of each patch
// are taken as posted, its "Changes since" notes are moved out of the
// message into vN/<id>.notes, and each declaration's header and message
// become one text guarded by revision (the other revisions render as
// before). Declarations of patches the spec lists but does not declare yet
// are written into the folder of the first revision that lists them. The
// edits of a declaration are kept as written.
//
//	go run ./internal/weave/remessage -spec templates/linux -posted 13=../shared/revisions/v13
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"kpatch/internal/weave"
	"kpatch/spec"
)

type message struct {
	author, subject, log string
}

func main() {
	specDir := flag.String("spec", "templates/linux", "the spec to rewrite")
	posted := weave.RevisionDirs{}
	flag.Var(posted, "posted", "N=DIR: revision N's posted patches (repeatable)")
	flag.Parse()
	if err := run(*specDir, posted); err != nil {
		fmt.Fprintln(os.Stderr, "remessage:", err)
		os.Exit(1)
	}
}

var (
	trailer = regexp.MustCompile(`^(Signed-off-by|Co-developed-by|Cc|Link|Reviewed-by|Reviewed-By|Acked-by|Tested-by|Suggested-by|Reported-by|Fixes): `)
	changes = regexp.MustCompile(`^Chang(es|se) since v\d+`)
)

// splitNotes moves the "Changes since" paragraphs out of a commit message.
func splitNotes(log string) (msg, notes string) {
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	var m, n []string
	in := false
	for i, l := range lines {
		switch {
		case changes.MatchString(l):
			in = true
		case in && trailer.MatchString(l) && i > 0 && lines[i-1] == "":
			in = false
		}
		if in {
			n = append(n, l)
		} else {
			m = append(m, l)
		}
	}
	return strings.Join(m, "\n") + "\n", strings.TrimRight(strings.Join(n, "\n"), "\n")
}

func readPosted(path string) (message, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return message{}, err
	}
	head, body, _ := strings.Cut(string(b), "\n\n")
	head = strings.ReplaceAll(head, "\n ", " ")
	var m message
	for _, l := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(l, ": ")
		switch k {
		case "From":
			m.author = v
		case "Subject":
			m.subject = regexp.MustCompile(`^\[PATCH[^]]*\] `).ReplaceAllString(v, "")
		}
	}
	log, _, _ := strings.Cut(body, "\n---\n")
	m.log = log + "\n"
	return m, nil
}

func run(specDir string, posted map[int]string) error {
	sp, err := spec.Load(os.DirFS(specDir))
	if err != nil {
		return err
	}
	w := spec.NewWriter(specDir)
	// msgs[id][version]
	msgs := map[string]map[int]message{}
	decls := map[string]string{} // id -> declaration path
	firstVersion := map[string]int{}
	for _, r := range sp.Revisions {
		var files []string
		if dir, ok := posted[r.Version]; ok {
			ents, err := os.ReadDir(dir)
			if err != nil {
				return err
			}
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".patch") {
					files = append(files, filepath.Join(dir, e.Name()))
				}
			}
			sort.Strings(files)
			if len(files) != len(r.Patches) {
				return fmt.Errorf("v%d: %d posted patches, the order has %d", r.Version, len(files), len(r.Patches))
			}
		}
		for i, p := range r.Patches {
			if msgs[p.ID] == nil {
				msgs[p.ID] = map[int]message{}
				firstVersion[p.ID] = r.Version
			}
			if p.Src != "" {
				decls[p.ID] = p.Src
			}
			if files == nil {
				msgs[p.ID][r.Version] = message{p.Author, p.Subject, p.Log}
				continue
			}
			m, err := readPosted(files[i])
			if err != nil {
				return err
			}
			msg, notes := splitNotes(m.log)
			m.log = msg
			msgs[p.ID][r.Version] = m
			if notes != "" {
				w.SetNotes(r.Dir, p.ID, notes+"\n")
			}
		}
	}
	var versions []int
	for _, r := range sp.Revisions {
		versions = append(versions, r.Version)
	}
	for id, byV := range msgs {
		path := decls[id]
		if path == "" {
			path = fmt.Sprintf("v%d/%s.patch", firstVersion[id], id)
		}
		text, err := declaration(id, versions, byV)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if err := w.SetMessage(path, text); err != nil {
			return err
		}
	}
	return w.Write()
}

// declaration writes the header and message of one patch, guarded by
// revision where they differ.
func declaration(id string, versions []int, byV map[int]message) (string, error) {
	field := func(get func(message) string) string {
		var order []string
		groups := map[string][]int{}
		for _, v := range versions {
			m, ok := byV[v]
			if !ok {
				continue
			}
			s := spec.Literal(get(m)) // a subject or name is text
			if groups[s] == nil {
				order = append(order, s)
			}
			groups[s] = append(groups[s], v)
		}
		if len(order) == 1 {
			return order[0]
		}
		var b strings.Builder
		for i, s := range order {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "{{if %s}}", versionTest(groups[s]))
			case i == len(order)-1:
				b.WriteString("{{else}}")
			default:
				fmt.Fprintf(&b, "{{else if %s}}", versionTest(groups[s]))
			}
			b.WriteString(s)
		}
		return b.String() + "{{end}}"
	}
	var revs []weave.Rev
	for _, v := range versions {
		m, ok := byV[v]
		if !ok {
			revs = append(revs, weave.Rev{Version: v, IDs: []string{"-"}})
			continue
		}
		revs = append(revs, weave.Rev{Version: v, IDs: []string{id}, Created: 1, States: []string{m.log}})
	}
	log, err := weave.Revisions(revs)
	if err != nil {
		return "", err
	}
	log = strings.SplitN(log, "\n", 2)[1] // the {{created}} line
	return "Author: " + field(func(m message) string { return m.author }) + "\n" +
		"Subject: " + field(func(m message) string { return m.subject }) + "\n\n" + log, nil
}

// versionTest is a test of .Version for exactly the versions of set that
// follow one another: eq, or a range.
func versionTest(set []int) string {
	if len(set) == 1 {
		return fmt.Sprintf("eq .Version %d", set[0])
	}
	for i := 1; i < len(set); i++ {
		if set[i] != set[i-1]+1 {
			var eqs []string
			for _, v := range set {
				eqs = append(eqs, fmt.Sprintf("(eq .Version %d)", v))
			}
			return "or " + strings.Join(eqs, " ")
		}
	}
	return fmt.Sprintf("and (ge .Version %d) (le .Version %d)", set[0], set[len(set)-1])
}
