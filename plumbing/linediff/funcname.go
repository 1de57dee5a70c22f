package linediff

import (
	"regexp"
)

// DefaultFuncName is git's built-in hunk-header rule (def_ff in xdiff):
// a line qualifies if it starts with an ASCII letter, '_' or '$'; the
// name is its first 80 bytes with trailing whitespace removed.
func DefaultFuncName(line []byte) ([]byte, bool) {
	if len(line) == 0 {
		return nil, false
	}
	c := line[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
		return nil, false
	}
	return trimName(line), true
}

// trimName cuts a function name to xdiff's 80-byte buffer and drops
// trailing whitespace, in that order, as git does.
func trimName(name []byte) []byte {
	if len(name) > funcNameMax {
		name = name[:funcNameMax]
	}
	for len(name) > 0 && isSpace(name[len(name)-1]) {
		name = name[:len(name)-1]
	}
	return name
}

// funcPattern is one line of a userdiff funcname pattern list.
type funcPattern struct {
	re     *regexp.Regexp
	negate bool
}

// patternFuncName builds a FuncNameFunc from a userdiff pattern list the
// way git's ff_regexp applies it: the first pattern that matches the line
// (without its line terminator) decides; a negated pattern rejects the
// line, otherwise the first capture group (or the whole match) is the
// name.
func patternFuncName(patterns []funcPattern) FuncNameFunc {
	return func(line []byte) ([]byte, bool) {
		if n := len(line); n > 0 && line[n-1] == '\n' {
			if n > 1 && line[n-2] == '\r' {
				line = line[:n-2]
			} else {
				line = line[:n-1]
			}
		}
		for _, p := range patterns {
			m := p.re.FindSubmatchIndex(line)
			if m == nil {
				continue
			}
			if p.negate {
				return nil, false
			}
			lo, hi := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				lo, hi = m[2], m[3]
			}
			return trimName(line[lo:hi]), true
		}
		return nil, false
	}
}

// The funcname patterns of git 2.39's built-in diff drivers that the
// Linux kernel's .gitattributes selects ("*.[ch] diff=cpp",
// "*.dts diff=dts", "*.dts[io] diff=dts", "*.rs diff=rust").
var (
	cppFuncName = patternFuncName([]funcPattern{
		{re: regexp.MustCompile(`^[ \t]*[A-Za-z_][A-Za-z_0-9]*:[[:space:]]*($|/[/*])`), negate: true},
		{re: regexp.MustCompile(`^((::[[:space:]]*)?[A-Za-z_].*)$`)},
	})
	dtsFuncName = patternFuncName([]funcPattern{
		{re: regexp.MustCompile(`;`), negate: true},
		{re: regexp.MustCompile(`=`), negate: true},
		{re: regexp.MustCompile(`^[ \t]*((/[ \t]*\{|&?[a-zA-Z_]).*)`)},
	})
	rustFuncName = patternFuncName([]funcPattern{
		{re: regexp.MustCompile(`^[\t ]*((pub(\([^\)]+\))?[\t ]+)?((async|const|unsafe|extern([\t ]+"[^"]+"))[\t ]+)?(struct|enum|union|mod|trait|fn|impl|macro_rules!)[< \t]+[^;]*)$`)},
	})
)

// CppFuncName is the hunk-header rule of git's built-in "cpp" diff driver:
// lines starting with an identifier (or "::"), except jump labels and
// access specifiers such as "out:" or "public:".
func CppFuncName(line []byte) ([]byte, bool) { return cppFuncName(line) }

// DtsFuncName is the hunk-header rule of git's built-in "dts" diff driver
// (device tree sources).
func DtsFuncName(line []byte) ([]byte, bool) { return dtsFuncName(line) }

// RustFuncName is the hunk-header rule of git's built-in "rust" diff
// driver.
func RustFuncName(line []byte) ([]byte, bool) { return rustFuncName(line) }

// DriverFuncName returns the hunk-header rule of the named built-in git
// diff driver ("cpp", "dts" or "rust"); any other name, including "",
// yields DefaultFuncName.
func DriverFuncName(driver string) FuncNameFunc {
	switch driver {
	case "cpp":
		return CppFuncName
	case "dts":
		return DtsFuncName
	case "rust":
		return RustFuncName
	}
	return DefaultFuncName
}

// KernelDriver returns the diff driver that the Linux kernel's top-level
// .gitattributes assigns to path ("cpp" for *.c and *.h, "dts" for
// *.dts, *.dtsi and *.dtso, "rust" for *.rs), or "" for the default.
// Patches generated inside a kernel tree use these drivers for their hunk
// headers.
func KernelDriver(path string) string {
	base := path
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			base = path[i+1:]
			break
		}
	}
	ext := ""
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] == '.' {
			ext = base[i:]
			break
		}
	}
	switch ext {
	case ".c", ".h":
		return "cpp"
	case ".dts", ".dtsi", ".dtso":
		return "dts"
	case ".rs":
		return "rust"
	}
	return ""
}
