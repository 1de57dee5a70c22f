package spec

import (
	"io/fs"
	"regexp"
)

// stackedDeclName matches a patch declared by a stacked series, in its
// own folder: NAME-vN/<id>.patch (x86-6.19-v1/perf-deferred.patch). Such a
// patch is one that no revision of the main series has; its guards see
// the prerequisite's version, as the stacked series' render does.
var stackedDeclName = regexp.MustCompile(`^[a-z0-9][a-z0-9.]*(?:-[a-z0-9.]+)*-v\d+/([a-z0-9][a-z0-9-]*)\.patch$`)

// stackedDeclFiles returns the declarations in the folders of stacked
// series.
func stackedDeclFiles(fsys fs.FS) ([]string, error) {
	return fs.Glob(fsys, "*-v*/*.patch")
}

// declID returns the id of the patch declared in the file f, vN/<id>.patch
// or NAME-vN/<id>.patch.
func declID(f string) (string, bool) {
	if m := declName.FindStringSubmatch(f); m != nil {
		return m[2], true
	}
	if m := stackedDeclName.FindStringSubmatch(f); m != nil {
		return m[1], true
	}
	return "", false
}
