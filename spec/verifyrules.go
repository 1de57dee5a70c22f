package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// VerifyRulesFile is the file of a series description that says what
// kpatch verify checks for the series beyond the kernel's rules.
const VerifyRulesFile = "verify-rules"

// VerifyRules is what a series description declares for kpatch verify in
// its verify-rules file: the rules of scope series (one review's points)
// that apply to it, and the series' own misspellings. The format, one
// directive a line, # comments:
//
//	rule X86_PREFIX
//	spelling theses||these
//	spelling everytime||every time
//
// Load reads the directives; verify checks that each rule is one of its
// rules of scope series. A spec without the file declares nothing.
type VerifyRules struct {
	Source   string            // the file, as errors name it
	Rules    []RuleLine        // the rule lines, in order
	Spelling map[string]string // misspelling (lower case) -> correction
}

// RuleLine is one "rule ID" line of a verify-rules file.
type RuleLine struct {
	ID   string // in upper case
	Line int
}

// loadVerifyRules reads the verify-rules file of fsys, if it has one.
func loadVerifyRules(fsys fs.FS) (*VerifyRules, error) {
	data, err := fs.ReadFile(fsys, VerifyRulesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &VerifyRules{Source: VerifyRulesFile, Spelling: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseVerifyRules(VerifyRulesFile, data)
}

// parseVerifyRules parses a verify-rules file; name is used in errors.
func parseVerifyRules(name string, data []byte) (*VerifyRules, error) {
	r := &VerifyRules{Source: name, Spelling: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "spelling" && len(f) > 2 {
			// a correction of several words, as spelling.txt's "alot||a lot"
			f = []string{f[0], strings.Join(f[1:], " ")}
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: %q: want \"rule ID\" or \"spelling mistake||correction\"", name, n, strings.TrimSpace(line))
		}
		switch f[0] {
		case "rule":
			r.Rules = append(r.Rules, RuleLine{ID: strings.ToUpper(f[1]), Line: n})
		case "spelling":
			bad, good, ok := strings.Cut(f[1], "||")
			if !ok || bad == "" || good == "" {
				return nil, fmt.Errorf("%s:%d: %q: write spelling mistake||correction, as scripts/spelling.txt does", name, n, f[1])
			}
			r.Spelling[strings.ToLower(bad)] = good
		default:
			return nil, fmt.Errorf("%s:%d: unknown directive %q: want rule or spelling", name, n, f[0])
		}
	}
	return r, sc.Err()
}
