package buildtest

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/build.md's table of the configurations")

// TestConfigsDoc: docs/build.md's table of the configurations is the one
// ConfigsMarkdown makes from Configs; -update-docs rewrites it.
func TestConfigsDoc(t *testing.T) {
	const docs = "../docs/build.md"
	b, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := []byte("<!-- configs:begin -->\n"), []byte("<!-- configs:end -->")
	i, j := bytes.Index(b, begin), bytes.Index(b, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", docs, begin, end)
	}
	want := ConfigsMarkdown()
	if string(b[i+len(begin):j]) == want {
		return
	}
	if !*updateDocs {
		t.Fatalf("%s: the configurations' table is out of date: go test ./buildtest -run TestConfigsDoc -update-docs", docs)
	}
	out := append(append(append([]byte{}, b[:i+len(begin)]...), want...), b[j:]...)
	if err := os.WriteFile(docs, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConfigSets: "robot" is every configuration and "default" those
// marked Default, each in the order of Configs.
func TestConfigSets(t *testing.T) {
	robot, err := ExpandConfigs([]string{"robot"})
	if err != nil {
		t.Fatal(err)
	}
	if len(robot) != len(Configs) {
		t.Errorf("robot = %v, want all %d configurations", robot, len(Configs))
	}
	def, err := ExpandConfigs([]string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x86_64", "x86_64-noia32", "i386"}; !equalStrings(def, want) {
		t.Errorf("default = %v, want %v", def, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
