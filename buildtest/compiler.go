package buildtest

import "strings"

// wrappers are the compiler wrappers --cc may name alone: each runs the
// compiler given after it (ccache and distcc on this machine, distcc and
// icecc on a farm of helpers).
var wrappers = map[string]bool{"ccache": true, "distcc": true, "icecc": true}

// CompilerCommand returns the command make's CC runs for --cc: a wrapper
// named alone ("distcc", "icecc", "ccache") wraps gcc, as kbuild's own
// default compiler is gcc ("icecc" alone would take the first flag for the
// compiler); anything else is used as given.
func CompilerCommand(cc string) string {
	f := strings.Fields(cc)
	if len(f) == 1 && wrappers[baseName(f[0])] {
		return f[0] + " gcc"
	}
	return strings.Join(f, " ")
}

// compiler returns the compiler of a CC command, the wrappers before it
// left out: they do not change what it produces.
func compiler(cc string) string {
	f := strings.Fields(CompilerCommand(cc))
	for len(f) > 1 && wrappers[baseName(f[0])] {
		f = f[1:]
	}
	if len(f) == 0 {
		return "gcc"
	}
	return f[0]
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
