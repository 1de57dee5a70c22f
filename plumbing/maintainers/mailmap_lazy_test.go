package maintainers

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestMailmapLazyMatches maps, through the Debian 6.12 tree's .mailmap,
// every address written in it and in MAINTAINERS (with and without their
// names, and changed in case) and checks that the lazy Mailmap maps each
// as the one ParseMailmap reads whole does.
func TestMailmapLazyMatches(t *testing.T) {
	dir := testenv.KernelTree(t)
	mm, err := os.ReadFile(filepath.Join(dir, ".mailmap"))
	if err != nil {
		t.Fatal(err)
	}
	maint, err := os.ReadFile(filepath.Join(dir, "MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	eager := ParseMailmap(mm)
	lazy := ParseMailmapLazy(mm)
	var emails []string
	addr := regexp.MustCompile(`([^<>\n]*)<([^<>\n]+@[^<>\n]+)>`)
	for _, text := range []string{string(mm), string(maint)} {
		for _, m := range addr.FindAllStringSubmatch(text, -1) {
			name := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(m[1], "M:"), "R:"))
			emails = append(emails, m[2], name+" <"+m[2]+">", strings.ToUpper(m[2]), "Someone Else <"+m[2]+">")
		}
	}
	emails = append(emails, "", "no-at-sign", "a <b> <c@d>", "<x@y>")
	mapped := 0
	for _, e := range emails {
		want := eager.mapEmail(e)
		if got := lazy.mapEmail(e); got != want {
			t.Errorf("%q maps to %q lazily, %q read whole", e, got, want)
		}
		if want != formatEmail(parseEmail(e)) {
			mapped++
		}
	}
	if len(emails) < 20000 || mapped < 500 {
		t.Fatalf("only %d addresses, %d changed by the mailmap", len(emails), mapped)
	}
}
