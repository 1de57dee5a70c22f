package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kpatch/plumbing/outdir"
	"kpatch/templates/linux"
)

// SeriesRulesFile is the file of a spec directory that declares what verify
// checks for that series beyond the kernel's rules.
const SeriesRulesFile = "verify-rules"

// SeriesRules is what a series' spec declares for verify: the rules of
// scope series (one review's points) that apply to it, and the series' own
// misspellings. The format, one directive a line, # comments:
//
//	rule X86_PREFIX
//	spelling theses||these
type SeriesRules struct {
	Source   string            // the file read
	Rules    map[string]bool   // rule IDs of scope series
	Spelling map[string]string // misspelling (lower case) -> correction
}

// declares reports whether r has rule id; a nil r declares none.
func (r *SeriesRules) declares(id string) bool { return r != nil && r.Rules[id] }

// words returns the series' misspellings; nil for a nil r.
func (r *SeriesRules) words() map[string]string {
	if r == nil {
		return nil
	}
	return r.Spelling
}

// LoadSeriesRules reads the verify-rules file of a spec directory (the
// built-in spec when specDir is ""). A spec without one declares nothing.
func LoadSeriesRules(specDir string) (*SeriesRules, error) {
	var fsys fs.FS = linux.FS
	name := SeriesRulesFile
	if specDir != "" {
		// A spec directory that is not there is refused as series.LoadSpec
		// refuses it: read as "no verify-rules", it would drop the series'
		// rules without a word.
		if st, err := os.Stat(specDir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--spec %s: %w", specDir, outdir.ErrNotDir)
		}
		fsys = os.DirFS(specDir)
		name = filepath.Join(specDir, SeriesRulesFile)
	}
	data, err := fs.ReadFile(fsys, SeriesRulesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &SeriesRules{Source: name, Rules: map[string]bool{}, Spelling: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseSeriesRules(name, data)
}

// ParseSeriesRules parses a verify-rules file; name is used in errors.
func ParseSeriesRules(name string, data []byte) (*SeriesRules, error) {
	r := &SeriesRules{Source: name, Rules: map[string]bool{}, Spelling: map[string]string{}}
	scope := map[string]Scope{}
	for _, rule := range Rules() {
		scope[rule.ID] = rule.Scope
	}
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
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: %q: want \"rule ID\" or \"spelling mistake||correction\"", name, n, strings.TrimSpace(line))
		}
		switch f[0] {
		case "rule":
			id := strings.ToUpper(f[1])
			switch scope[id] {
			case SeriesScope:
				r.Rules[id] = true
			case Kernel:
				return nil, fmt.Errorf("%s:%d: %s applies to every series already: remove the line", name, n, id)
			default:
				return nil, fmt.Errorf("%s:%d: unknown rule %s: kpatch verify --rules lists them", name, n, id)
			}
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
