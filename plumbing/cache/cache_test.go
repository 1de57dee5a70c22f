package cache

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLayout(t *testing.T) {
	tests := []struct {
		name, kpatchCache, xdg string
		get                    func() (string, error)
		want                   string
	}{
		{"KPATCH_CACHE wins", "/c", "/x", Dir, "/c"},
		{"XDG_CACHE_HOME", "", "/x", Dir, "/x/kpatch"},
		{"tree", "/c", "", func() (string, error) { return TreeDir("linux-6.12") }, "/c/linux-6.12"},
		{"build root", "/c", "", BuildRoot, "/c/build"},
		{"boot tree", "/c", "", func() (string, error) { return BuildDir("x86_64-unwind") }, "/c/build/x86_64-unwind"},
		{"units", "/c", "", Units, "/c/verify/pp"},
		{"accel", "/c", "", AccelVerdicts, "/c/qemu-accel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KPATCH_CACHE", tt.kpatchCache)
			t.Setenv("XDG_CACHE_HOME", tt.xdg)
			got, err := tt.get()
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.FromSlash(tt.want) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRelativeCache: a relative KPATCH_CACHE is the folder of that name
// in the working directory, as the user meant it, made absolute at once;
// kept relative it named another folder for make, which runs in the
// unpacked source (a stray folder there, a build that fails).
func TestRelativeCache(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv("KPATCH_CACHE", "rel/cache")
	for name, get := range map[string]func() (string, error){"Dir": Dir, "BuildRoot": BuildRoot} {
		got, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(got) || !strings.HasPrefix(got, filepath.Join(wd, "rel", "cache")) {
			t.Errorf("%s = %s, want an absolute path under %s", name, got, filepath.Join(wd, "rel", "cache"))
		}
	}
}
