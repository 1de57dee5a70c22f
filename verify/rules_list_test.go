package verify

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"kpatch/spec"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the rule table of docs/verify.md")

const docsPath = "../docs/verify.md"

// TestRulesDoc: the rule table of docs/verify.md is the one RulesMarkdown
// makes from the rule list, and its NMI table the one NMIMarkdown makes
// from NMI_UNSAFE's.
func TestRulesDoc(t *testing.T) {
	for _, table := range []struct {
		name string
		want string
	}{{"rules", RulesMarkdown()}, {"nmi", NMIMarkdown()}} {
		b, err := os.ReadFile(docsPath)
		if err != nil {
			t.Fatal(err)
		}
		begin, end := "<!-- "+table.name+":begin -->\n", "<!-- "+table.name+":end -->"
		i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
		if i < 0 || j < i {
			t.Fatalf("%s: no %q ... %q markers", docsPath, begin, end)
		}
		got := string(b[i+len(begin) : j])
		if got == table.want {
			continue
		}
		if !*updateDocs {
			t.Fatalf("%s: the %s table is out of date: go test ./verify -run TestRulesDoc -update-docs", docsPath, table.name)
		}
		out := append(append(append([]byte{}, b[:i+len(begin)]...), table.want...), b[j:]...)
		if err := os.WriteFile(docsPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSeriesRules: the built-in spec declares this series' rules and
// words; a verify-rules line that is not a series rule is refused with
// its line.
func TestSeriesRules(t *testing.T) {
	r := builtinSeriesRules(t)
	for _, id := range []string{"X86_PREFIX", "TASK_CURRENT", "HEADER_GUARD_NAME"} {
		if !r.declares(id) {
			t.Errorf("the built-in spec does not declare %s", id)
		}
	}
	if r.Spelling["theses"] != "these" || r.Spelling["everytime"] != "every time" {
		t.Errorf("series words: %v", r.Spelling)
	}
	for _, tc := range []struct {
		rules []spec.RuleLine
		want  string
	}{
		{[]spec.RuleLine{{ID: "X86_PREFIX", Line: 1}, {ID: "LONG_LINE", Line: 2}}, "f:2: LONG_LINE applies to every series already"},
		{[]spec.RuleLine{{ID: "NO_SUCH", Line: 1}}, "f:1: unknown rule NO_SUCH"},
	} {
		if _, err := NewSeriesRules(&spec.VerifyRules{Source: "f", Rules: tc.rules}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.rules, err, tc.want)
		}
	}
}

// TestSeriesRulesScope: on the posted v11 without its spec only the
// kernel's rules run: no finding of a series rule, and the series' own
// misspellings are not reported; with the spec's rules they are.
func TestSeriesRulesScope(t *testing.T) {
	s := seed(t)
	scope := map[string]Scope{}
	for _, r := range Rules() {
		scope[r.ID] = r.Scope
	}
	count := func(fs []Finding) (series, theses int) {
		for _, f := range fs {
			if scope[f.ID] == SeriesScope {
				series++
			}
			if f.ID == "SPELLING" && strings.Contains(f.Message, `"theses"`) {
				theses++
			}
		}
		return
	}
	if n, th := count(Run(s, Options{})); n != 0 || th != 0 {
		t.Errorf("without the spec: %d findings of series rules, %d of theses", n, th)
	}
	if n, th := count(Run(s, seriesOpts(t))); n == 0 || th != 1 {
		t.Errorf("with the spec: %d findings of series rules, %d of theses", n, th)
	}
}

// TestCheckIgnoreIDs: --ignore takes verify's rules, checkpatch's types
// when they are known, and the COCCI_ IDs of the semantic patches; any
// other ID is refused with where the IDs are listed.
func TestCheckIgnoreIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		cp   map[string]bool
		fail string
	}{
		{[]string{"spelling", "TYPE_LIMITS", "NMI_UNSAFE"}, nil, ""},
		{[]string{"COCCI_UNSIGNED_LESSER_THAN_ZERO"}, nil, ""},
		{[]string{"ENOSYS"}, map[string]bool{"ENOSYS": true}, ""},
		{[]string{"ENOSYS"}, nil, "unknown rule ID ENOSYS: kpatch verify --rules lists verify's (checkpatch.pl's types are known with --checkpatch and --tree)"},
		{[]string{"NO_SUCH", "OTHER"}, map[string]bool{}, "unknown rule IDs NO_SUCH, OTHER"},
	} {
		err := CheckIgnore(c.ids, c.cp)
		switch {
		case c.fail == "" && err != nil:
			t.Errorf("%v: %v", c.ids, err)
		case c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)):
			t.Errorf("%v: %v, want %q", c.ids, err, c.fail)
		}
	}
}
