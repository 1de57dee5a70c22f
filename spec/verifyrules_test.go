package spec_test

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"kpatch/spec"
	"kpatch/templates/linux"
)

// TestVerifyRules: Load reads the verify-rules file of a spec, the
// built-in one's included; a malformed line is refused with its line.
func TestVerifyRules(t *testing.T) {
	sp, err := spec.Load(linux.FS)
	if err != nil {
		t.Fatal(err)
	}
	if r := sp.VerifyRules; len(r.Rules) < 3 || r.Spelling["theses"] != "these" || r.Source != "verify-rules" {
		t.Errorf("the built-in verify-rules: %+v", r)
	}
	tests := []struct {
		text  string
		rules []spec.RuleLine
		words map[string]string
		err   string
	}{
		{text: "# comment\n\nrule x86_prefix # the review's\nspelling Theses||these\n",
			rules: []spec.RuleLine{{ID: "X86_PREFIX", Line: 3}}, words: map[string]string{"theses": "these"}},
		{text: "spelling everytime||every time\n", words: map[string]string{"everytime": "every time"}},
		{text: "spelling theses\n", err: "verify-rules:1: \"theses\": write spelling mistake||correction"},
		{text: "rule A\nword x y\n", err: "verify-rules:2: \"word x y\": want"},
		{text: "# comment\nrules X86_PREFIX\n", err: "verify-rules:2: unknown directive \"rules\""},
	}
	for _, tc := range tests {
		f := modelFS()
		f["verify-rules"] = &fstest.MapFile{Data: []byte(tc.text)}
		sp, err := spec.Load(f)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if !reflect.DeepEqual(sp.VerifyRules.Rules, tc.rules) || !reflect.DeepEqual(sp.VerifyRules.Spelling, tc.words) {
			t.Errorf("%q: %+v", tc.text, sp.VerifyRules)
		}
	}
	// A spec without the file declares nothing.
	sp, err = spec.Load(modelFS())
	if err != nil || len(sp.VerifyRules.Rules) != 0 || len(sp.VerifyRules.Spelling) != 0 {
		t.Errorf("no verify-rules: %+v, %v", sp.VerifyRules, err)
	}
}
