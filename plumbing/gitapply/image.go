package gitapply

import (
	"bytes"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// image is a file as git apply holds it while it applies hunks: its lines
// (each with its '\n', but for a last line without one), with what each
// came from.
type image struct {
	lines []imageLine
}

type imageLine struct {
	text    []byte
	hash    uint32
	patched bool // written by a hunk: later hunks cannot match it
	orig    int  // the line's number in the file before the patch, 0 when a hunk wrote it
	hunk    int  // for a line a hunk wrote: that hunk's index and the line's index in its postimage
	post    int
}

// hashLine is git's hash_line (kept to the 24 bits git keeps): the
// line's bytes but its whitespace. It filters candidates before the exact
// comparison, and decides with it whether a last line without a newline
// matches a longer one.
func hashLine(b []byte) uint32 {
	var h uint32
	for _, c := range b {
		if !isSpace(c) {
			h = h*3 + uint32(c)
		}
	}
	return h & 0xffffff
}

// isSpace is git's isspace: space, \t, \n, \v, \f, \r.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// splitLines splits b into lines, each with its '\n' (the last may lack
// it).
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

func newImage(content []byte) *image {
	img := &image{}
	for i, l := range splitLines(content) {
		img.lines = append(img.lines, imageLine{text: l, hash: hashLine(l), orig: i + 1})
	}
	return img
}

// bytes returns the image's content.
func (img *image) bytes() []byte {
	n := 0
	for _, l := range img.lines {
		n += len(l.text)
	}
	out := make([]byte, 0, n)
	for _, l := range img.lines {
		out = append(out, l.text...)
	}
	return out
}

// fragment is one hunk as apply_one_fragment prepares it.
type fragment struct {
	frag     *gitdiff.TextFragment
	oldpos   int // the header's positions, as git reads them (swapped by Reverse)
	newpos   int
	leading  int
	trailing int
	pre      [][]byte // the lines it expects (context and removed)
	post     [][]byte // the lines it leaves (context and added)
	preHash  []uint32
}

// prepareFragment builds the preimage and postimage of f, as
// apply_one_fragment does: a line followed by "\ No newline at end of
// file" has no '\n' (go-gitdiff has already cut it), removed and added
// lines swap in reverse.
func prepareFragment(f *gitdiff.TextFragment, reverse bool) *fragment {
	fr := &fragment{frag: f, oldpos: int(f.OldPosition), newpos: int(f.NewPosition),
		leading: int(f.LeadingContext), trailing: int(f.TrailingContext)}
	if reverse {
		fr.oldpos, fr.newpos = fr.newpos, fr.oldpos
	}
	for _, l := range f.Lines {
		op := l.Op
		if reverse {
			switch op {
			case gitdiff.OpAdd:
				op = gitdiff.OpDelete
			case gitdiff.OpDelete:
				op = gitdiff.OpAdd
			}
		}
		text := []byte(l.Line)
		switch op {
		case gitdiff.OpContext:
			fr.pre = append(fr.pre, text)
			fr.post = append(fr.post, text)
		case gitdiff.OpDelete:
			fr.pre = append(fr.pre, text)
		case gitdiff.OpAdd:
			fr.post = append(fr.post, text)
		}
	}
	for _, l := range fr.pre {
		fr.preHash = append(fr.preHash, hashLine(l))
	}
	return fr
}

// match is git's match_fragment without whitespace correction: whether
// fr's preimage is at line at (0-based) of img.
func (img *image) match(fr *fragment, at int, matchBeginning, matchEnd bool) bool {
	n := len(fr.pre)
	if n+at > len(img.lines) {
		return false // past the end: only --whitespace=fix matches there
	}
	if matchEnd && n+at != len(img.lines) {
		return false
	}
	if matchBeginning && at != 0 {
		return false
	}
	for i := 0; i < n; i++ {
		l := &img.lines[at+i]
		if l.patched || l.hash != fr.preHash[i] {
			return false
		}
	}
	// memcmp of the preimage's bytes with the image's from that line: every
	// line equal, but the preimage's last may be a prefix of the image's
	// when it has no newline (and, with matchEnd, the bytes must end
	// together).
	for i := 0; i < n; i++ {
		p, t := fr.pre[i], img.lines[at+i].text
		if i == n-1 && (len(p) == 0 || p[len(p)-1] != '\n') {
			if !bytes.HasPrefix(t, p) || matchEnd && len(t) != len(p) {
				return false
			}
			continue
		}
		if !bytes.Equal(p, t) {
			return false
		}
	}
	return true
}

// findPos is git's find_pos: the line (0-based) at which fr's preimage is
// found nearest to line, trying line, line+1, line-1, line+2, ...; -1
// when it is nowhere.
func (img *image) findPos(fr *fragment, line int, matchBeginning, matchEnd bool) int {
	nr := len(img.lines)
	if matchBeginning {
		line = 0
	} else if matchEnd {
		line = nr - len(fr.pre)
	}
	if line < 0 || line > nr {
		line = nr
	}
	backwards, forwards, current := line, line, line
	for i := 0; ; i++ {
		if img.match(fr, current, matchBeginning, matchEnd) {
			return current
		}
	again:
		if backwards == 0 && forwards == nr {
			return -1
		}
		if i&1 != 0 {
			if backwards == 0 {
				i++
				goto again
			}
			backwards--
			current = backwards
		} else {
			if forwards == nr {
				i++
				goto again
			}
			forwards++
			current = forwards
		}
	}
}

// update replaces fr's preimage at line at with its postimage, marking
// the new lines as written by hunk k (git's update_image).
func (img *image) update(fr *fragment, k, at int) {
	post := make([]imageLine, len(fr.post))
	for j, l := range fr.post {
		post[j] = imageLine{text: l, hash: hashLine(l), patched: true, hunk: k, post: j}
	}
	rest := img.lines[at+len(fr.pre):]
	lines := make([]imageLine, 0, len(img.lines)-len(fr.pre)+len(post))
	lines = append(lines, img.lines[:at]...)
	lines = append(lines, post...)
	lines = append(lines, rest...)
	img.lines = lines
}
