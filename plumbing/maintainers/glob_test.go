package maintainers

import (
	"regexp"
	"strings"
	"testing"
)

// TestGlobPrefixMatchesRegexp checks the glob matcher against the regular
// expression get_maintainer.pl builds from the same pattern.
func TestGlobPrefixMatchesRegexp(t *testing.T) {
	patterns := []string{"*", "*/", "drivers/*/foo", "arch/*/kvm/", "include/linux/unwind*.h", "a?c", "*.c", "x*y*z", "**", "drivers/net/*", "Documentation/*/*.rst"}
	paths := []string{"", "a", "abc", "axc/d", "drivers/net/x.c", "drivers/a/foo", "drivers/a/b/foo.c", "arch/x86/kvm/vmx.c",
		"include/linux/unwind_user.h", "include/linux/unwind.h", "include/linux/sched.h", "xyz", "x/y/z/w", "Documentation/a/b.rst"}
	for _, pat := range patterns {
		re := regexp.MustCompile("^" + strings.NewReplacer(".", `\.`, "*", ".*", "?", ".").Replace(pat))
		for _, path := range paths {
			if got, want := globPrefix(pat, path), re.MatchString(path); got != want {
				t.Errorf("globPrefix(%q, %q) = %v, the regexp says %v", pat, path, got, want)
			}
		}
	}
}
