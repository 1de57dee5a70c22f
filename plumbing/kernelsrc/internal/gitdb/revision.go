package gitdb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors ResolveCommit ends with (besides ErrDamaged).
var (
	ErrUnknownRevision = errors.New("unknown revision")
	ErrNotCommit       = errors.New("not a commit")
	ErrAmbiguous       = errors.New("ambiguous revision")
	ErrUnsupported     = errors.New("revision syntax kpatch does not read")
)

// minAbbrev is the shortest hex prefix git takes for an object id.
const minAbbrev = 4

// ResolveCommit resolves rev to a commit as `git rev-parse --verify
// REV^{commit}` does: a full or abbreviated object id (abbreviations
// looked up in every object directory, alternates included; an ambiguous
// one refused unless only one candidate is a commit or a tag of one), a
// reference name completed as git does (NAME, refs/NAME, refs/tags/NAME,
// refs/heads/NAME, refs/remotes/NAME, refs/remotes/NAME/HEAD), "@" for HEAD,
// git describe's NAME-gHEX, followed by any of ^, ^N, ~, ~N, ^{}, ^{commit},
// ^{tag}, ^{tree}, ^{blob}, ^{object}. A result that is not a commit (a tree,
// a blob, REV:PATH) is refused. Reflog and search forms (@{...}, :/TEXT,
// ^{/TEXT}) are refused as unsupported, and ranges (A..B, ^A, A^!) as not
// one revision.
func (db *DB) ResolveCommit(rev string) (Hash, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.resolveCommit(rev)
}

func (db *DB) resolveCommit(rev string) (Hash, error) {
	if rev == "" {
		return Hash{}, fmt.Errorf("%w: empty", ErrUnknownRevision)
	}
	switch {
	case strings.Contains(rev, "@{"):
		return Hash{}, fmt.Errorf("%w: reflog and upstream forms (@{...})", ErrUnsupported)
	case strings.Contains(rev, "^{/") || strings.HasPrefix(rev, ":/"):
		return Hash{}, fmt.Errorf("%w: commit message searches (:/TEXT, ^{/TEXT})", ErrUnsupported)
	case strings.Contains(rev, ".."):
		return Hash{}, fmt.Errorf("%w: a range names several commits, not one", ErrUnknownRevision)
	case strings.HasPrefix(rev, "^") || strings.HasPrefix(rev, "-"):
		return Hash{}, fmt.Errorf("%w: %q is not a revision", ErrUnknownRevision, rev)
	case strings.Contains(rev, ":"):
		return Hash{}, fmt.Errorf("%w: REV:PATH names a file or directory of a tree", ErrNotCommit)
	}
	i := strings.IndexAny(rev, "^~")
	if i < 0 {
		i = len(rev)
	}
	name, ops := rev[:i], rev[i:]
	h, err := db.resolveName(name)
	if err != nil {
		return Hash{}, err
	}
	cur := name
	for ops != "" {
		var n int
		var peel string
		isPeel := false
		op := ops[0]
		ops = ops[1:]
		switch {
		case op == '^' && strings.HasPrefix(ops, "{"):
			end := strings.IndexByte(ops, '}')
			if end < 0 {
				return Hash{}, fmt.Errorf("%w: %q has an unclosed ^{", ErrUnknownRevision, rev)
			}
			peel, ops, isPeel = ops[1:end], ops[end+1:], true
		default:
			j := 0
			for j < len(ops) && ops[j] >= '0' && ops[j] <= '9' {
				j++
			}
			n = 1
			if j > 0 {
				v, err := strconv.Atoi(ops[:j])
				if err != nil {
					return Hash{}, fmt.Errorf("%w: %q: number out of range", ErrUnknownRevision, rev)
				}
				n = v
			}
			ops = ops[j:]
			if len(ops) > 0 && ops[0] != '^' && ops[0] != '~' {
				return Hash{}, fmt.Errorf("%w: %q is not a revision (%q after %s)", ErrUnknownRevision, rev, ops, string(op))
			}
		}
		switch {
		case isPeel:
			h, err = db.peel(h, cur, peel)
			cur += "^{" + peel + "}"
		case op == '^':
			h, err = db.parent(h, cur, n)
			cur += "^" + strconv.Itoa(n)
		case n == 0:
			h, err = db.parent(h, cur, 0) // ~0, like ^0, peels to the commit
			cur += "~0"
		default:
			for k := 0; k < n && err == nil; k++ {
				h, err = db.parent(h, cur, 1)
				cur += "^"
			}
		}
		if err != nil {
			return Hash{}, err
		}
	}
	return db.peel(h, rev, "commit")
}

// resolveName resolves the part of a revision before its ^ and ~ suffixes.
func (db *DB) resolveName(name string) (Hash, error) {
	if name == "@" {
		name = "HEAD"
	}
	if h, ok := ParseHash(name); ok {
		return h, nil
	}
	if validRefName(name) {
		for _, full := range []string{name, "refs/" + name, "refs/tags/" + name, "refs/heads/" + name, "refs/remotes/" + name, "refs/remotes/" + name + "/HEAD"} {
			h, ok, err := db.ref(full, 0)
			if err != nil {
				return Hash{}, err
			}
			if !ok {
				continue
			}
			if _, err := db.find(h); err != nil {
				if errors.Is(err, ErrNotFound) {
					return Hash{}, fmt.Errorf("%w: %s points to object %s, which is missing", ErrDamaged, full, h)
				}
				return Hash{}, fmt.Errorf("%w: %s: %s", ErrDamaged, full, stripDamaged(err))
			}
			return h, nil
		}
	}
	hx := name
	if i := strings.LastIndex(name, "-g"); i >= 0 && isHex(name[i+2:]) && len(name)-i-2 >= minAbbrev {
		hx = name[i+2:] // git describe's output: TAG-N-gHEX
	}
	if !isHex(hx) || len(hx) < minAbbrev || len(hx) > 40 {
		return Hash{}, fmt.Errorf("%w: no tag, branch or object named %q", ErrUnknownRevision, name)
	}
	if h, ok := ParseHash(hx); ok {
		return h, nil
	}
	cands, err := db.findPrefixLocked(hx, 100)
	if err != nil {
		return Hash{}, err
	}
	if len(cands) == 0 {
		return Hash{}, fmt.Errorf("%w: no tag, branch or object named %q", ErrUnknownRevision, name)
	}
	if len(cands) == 1 {
		return cands[0], nil
	}
	// git prefers the one candidate that is a commit or a tag of one.
	var commits []Hash
	for _, c := range cands {
		if t, err := db.peelType(c); err == nil && t == Commit {
			commits = append(commits, c)
		}
	}
	if len(commits) == 1 {
		return commits[0], nil
	}
	var list []string
	for _, c := range cands {
		t, _, err := db.read(c)
		what := "unreadable"
		if err == nil {
			what = t.String()
		}
		list = append(list, c.String()[:12]+" "+what)
		if len(list) == 4 {
			list = append(list, "...")
			break
		}
	}
	return Hash{}, fmt.Errorf("%w: short object id %s matches %d objects (%s); give more digits", ErrAmbiguous, hx, len(cands), strings.Join(list, ", "))
}

// peelType returns the type h peels to (following tags).
func (db *DB) peelType(h Hash) (Type, error) {
	for i := 0; i < 10; i++ {
		t, data, err := db.read(h)
		if err != nil || t != Tag {
			return t, err
		}
		if h, _, err = ParseTag(data); err != nil {
			return 0, err
		}
	}
	return 0, errors.New("tags nested too deep")
}

// peel follows tags from h until an object of type want ("" for the first
// non-tag, "object" for h itself).
func (db *DB) peel(h Hash, what, want string) (Hash, error) {
	wantType, typed := typeByName(want)
	if want != "" && want != "object" && !typed {
		return Hash{}, fmt.Errorf("%w: ^{%s}: not an object type", ErrUnknownRevision, want)
	}
	for depth := 0; ; depth++ {
		t, data, err := db.read(h)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return Hash{}, fmt.Errorf("%w: no object %s", ErrUnknownRevision, h)
			}
			return Hash{}, err
		}
		if want == "object" || (typed && t == wantType) || (want == "" && t != Tag) {
			if t == Commit {
				if _, err := ParseCommit(data); err != nil {
					return Hash{}, fmt.Errorf("%w: commit %s: %v", ErrDamaged, h, err)
				}
			}
			return h, nil
		}
		if t == Commit && want == "tree" {
			c, err := ParseCommit(data)
			if err != nil {
				return Hash{}, fmt.Errorf("%w: commit %s: %v", ErrDamaged, h, err)
			}
			h = c.Tree // a commit peels to its tree
			continue
		}
		if t != Tag || depth > 10 {
			article := "a"
			if want == "object" || want == "" {
				article = "an"
			}
			return Hash{}, fmt.Errorf("%w: %s is a %s (%s), not %s %s", ErrNotCommit, what, t, h.String()[:12], article, want)
		}
		next, _, err := ParseTag(data)
		if err != nil {
			return Hash{}, fmt.Errorf("%w: tag %s: %v", ErrDamaged, h, err)
		}
		if _, err := db.find(next); errors.Is(err, ErrNotFound) {
			return Hash{}, fmt.Errorf("%w: tag %s points to object %s, which is missing", ErrDamaged, h, next)
		}
		h = next
	}
}

// parent returns the n-th parent of the commit h peels to (n 0: itself).
func (db *DB) parent(h Hash, what string, n int) (Hash, error) {
	h, err := db.peel(h, what, "commit")
	if err != nil || n == 0 {
		return h, err
	}
	_, data, err := db.read(h)
	if err != nil {
		return Hash{}, err
	}
	c, err := ParseCommit(data)
	if err != nil {
		return Hash{}, fmt.Errorf("%w: commit %s: %v", ErrDamaged, h, err)
	}
	if n > len(c.Parents) {
		return Hash{}, fmt.Errorf("%w: %s (%s) has %d parent(s), no parent %d", ErrUnknownRevision, what, h.String()[:12], len(c.Parents), n)
	}
	return c.Parents[n-1], nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// validRefName reports whether name may be (the tail of) a reference name
// by git's check-ref-format rules, so that it is looked up as one.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "//") || strings.Contains(name, "..") ||
		strings.Contains(name, "@{") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}
