package buildtest

import "testing"

func TestCompilerCommand(t *testing.T) {
	for _, tc := range []struct{ cc, command, compiler string }{
		{"", "", "gcc"},
		{"gcc", "gcc", "gcc"},
		{"distcc", "distcc gcc", "gcc"},
		{"icecc", "icecc gcc", "gcc"},
		{"/usr/bin/ccache", "/usr/bin/ccache gcc", "gcc"},
		{"ccache  gcc-12", "ccache gcc-12", "gcc-12"},
		{"ccache distcc gcc", "ccache distcc gcc", "gcc"},
		{"distcc x86_64-linux-gnu-gcc", "distcc x86_64-linux-gnu-gcc", "x86_64-linux-gnu-gcc"},
		{"clang", "clang", "clang"},
	} {
		if got := CompilerCommand(tc.cc); got != tc.command {
			t.Errorf("CompilerCommand(%q) = %q, want %q", tc.cc, got, tc.command)
		}
		if got := compiler(tc.cc); got != tc.compiler {
			t.Errorf("compiler(%q) = %q, want %q", tc.cc, got, tc.compiler)
		}
	}
}
