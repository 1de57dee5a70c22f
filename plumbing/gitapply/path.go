package gitapply

import "strings"

// Git's file modes.
const (
	modeType    = 0o170000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeDir     = 0o040000
)

// ValidPath reports whether git accepts path (of a file of the given git
// mode) in a patch, as git 2.39's verify_path does on Linux with its
// defaults (core.protectNTFS on, core.protectHFS off): no empty, "." or
// ".." component, no absolute path, no ".git" component in any case or in
// NTFS's spellings of it (".git.", "git~1", ".git::$INDEX_ALLOCATION"),
// and no symlink named .gitmodules.
func ValidPath(path string, mode uint32) bool {
	p := path
	for {
		// at the start of a component
		if isNTFSDotGit(p) || mode&modeType == modeSymlink && isNTFSDotGitmodules(p) {
			return false
		}
		if p == "" {
			return false // an empty path, or one ending in "/"
		}
		c := p[0]
		p = p[1:]
		if c == '/' || c == '.' && !verifyDotfile(p, mode) {
			return false
		}
		// the rest of the component
		for {
			if p == "" {
				return true
			}
			c, p = p[0], p[1:]
			if c == '/' {
				break
			}
			if c == '\\' && (isNTFSDotGit(p) || mode&modeType == modeSymlink && isNTFSDotGitmodules(p)) {
				return false
			}
		}
	}
}

// verifyDotfile checks the component after its leading '.' (rest), as
// git's verify_dotfile: ".", "..", ".git" (any case) are refused, and
// ".gitmodules" for a symlink.
func verifyDotfile(rest string, mode uint32) bool {
	if rest == "" || rest[0] == '/' {
		return false // "."
	}
	switch rest[0] {
	case 'g', 'G':
		if len(rest) < 3 || rest[1] != 'i' && rest[1] != 'I' || rest[2] != 't' && rest[2] != 'T' {
			break
		}
		if len(rest) == 3 || rest[3] == '/' {
			return false
		}
		if mode&modeType == modeSymlink {
			r := rest[3:]
			if len(r) >= 7 && strings.EqualFold(r[:7], "modules") && (len(r) == 7 || r[7] == '/') {
				return false
			}
		}
	case '.':
		if len(rest) == 1 || rest[1] == '/' {
			return false
		}
	}
	return true
}

// at returns s[i], or 0 past its end (git reads the NUL there).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isNTFSDotGit is git's is_ntfs_dotgit: name starts with a component
// that NTFS reads as ".git" (".git" or "git~1", any case, followed by
// spaces and dots, or a stream name after ':').
func isNTFSDotGit(name string) bool {
	i := 0
	lower := func(j int) byte { return at(name, j) | 0x20 }
	switch c := at(name, 0); {
	case c == '.':
		if lower(1) != 'g' || lower(2) != 'i' || lower(3) != 't' {
			return false
		}
		i = 4
	case c|0x20 == 'g':
		if lower(1) != 'i' || lower(2) != 't' || at(name, 3) != '~' || at(name, 4) != '1' {
			return false
		}
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		c := at(name, i)
		if c == 0 || c == '\\' || c == '/' || c == ':' {
			return true
		}
		if c != '.' && c != ' ' {
			return false
		}
	}
}

// isNTFSDotGitmodules is git's is_ntfs_dotgitmodules: ".gitmodules" as
// NTFS may spell it (its short names "gitmod~N" and "gi7eba~N").
func isNTFSDotGitmodules(name string) bool {
	return isNTFSDotGeneric(name, "gitmodules", "gi7eba")
}

// isNTFSDotGeneric is git's is_ntfs_dot_generic.
func isNTFSDotGeneric(name, dotgit, shortPrefix string) bool {
	onlySpacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			c := at(name, i)
			if c == 0 || c == ':' {
				return true
			}
			if c != ' ' && c != '.' {
				return false
			}
		}
	}
	n := len(dotgit)
	if at(name, 0) == '.' && len(name) >= n+1 && strings.EqualFold(name[1:n+1], dotgit) {
		return onlySpacesAndPeriods(n + 1)
	}
	if len(name) >= 8 && strings.EqualFold(name[:6], dotgit[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return onlySpacesAndPeriods(8)
	}
	sawTilde := false
	for i := 0; i < 8; i++ {
		c := at(name, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if c := at(name, i); c < '1' || c > '9' {
				return false
			}
			sawTilde = true
		case i >= 6:
			return false
		case c&0x80 != 0:
			return false
		case lowerASCII(c) != shortPrefix[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(8)
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
