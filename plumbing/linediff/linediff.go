package linediff

import (
	"bytes"
	"strconv"
	"strings"
)

// DefaultContext is the number of context lines git diff shows by default.
const DefaultContext = 3

// funcNameMax is the size of xdiff's function-name buffer: names in hunk
// headers are cut to this many bytes.
const funcNameMax = 80

// hunkHeaderMax is the size of the buffer xdiff formats hunk headers in.
const hunkHeaderMax = 128

// FuncNameFunc decides whether line (a record of the old file, including
// its trailing newline if any) is a "function line" for hunk headers. It
// returns the text to show and true, or false to keep searching upwards.
// The returned text must already be cut to 80 bytes and trimmed the way git
// does; DefaultFuncName and CppFuncName do so.
type FuncNameFunc func(line []byte) (name []byte, ok bool)

// Options tunes UnifiedWith.
type Options struct {
	// Context is the number of context lines around each change, as in
	// git diff -U<n>. Zero means no context (-U0); use DefaultContext
	// for git's default.
	Context int
	// InterHunkContext merges hunks separated by up to
	// 2*Context+InterHunkContext unchanged lines (diff.interHunkContext,
	// 0 by default).
	InterHunkContext int
	// FuncName picks the text after the "@@ ... @@" of each hunk header.
	// Nil means DefaultFuncName, git's built-in rule used when no diff
	// driver with a funcname pattern applies to the path.
	FuncName FuncNameFunc
}

// DefaultOptions returns the options git diff and git format-patch use by
// default: 3 lines of context and the built-in function-name rule.
func DefaultOptions() Options {
	return Options{Context: DefaultContext}
}

// KernelOptions returns the options git uses for path inside a Linux
// kernel tree: DefaultOptions with the hunk-header rule of the diff
// driver that the kernel's .gitattributes assigns to path (see
// KernelDriver).
func KernelOptions(path string) Options {
	opt := DefaultOptions()
	opt.FuncName = DriverFuncName(KernelDriver(path))
	return opt
}

// binarySniffLen is how much of a file git inspects to decide whether it
// is binary (FIRST_FEW_BYTES).
const binarySniffLen = 8000

// IsBinary reports whether git treats data as binary: it has a NUL byte
// in its first 8000 bytes. git diff prints "Binary files differ" instead
// of hunks for such files; Unified does not check this itself.
func IsBinary(data []byte) bool {
	if len(data) > binarySniffLen {
		data = data[:binarySniffLen]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// Unified returns the hunks of the change from old to new as git diff writes them
// (everything after the "+++ b/path" line), and the number of added and deleted lines.
// It returns "" for identical inputs.
func Unified(old, new []byte) (hunks string, added, deleted int) {
	return UnifiedWith(old, new, DefaultOptions())
}

// UnifiedWith is Unified with explicit options.
func UnifiedWith(old, new []byte, opt Options) (hunks string, added, deleted int) {
	if bytes.Equal(old, new) {
		return "", 0, 0
	}
	if opt.Context < 0 {
		opt.Context = 0
	}
	if opt.InterHunkContext < 0 {
		opt.InterHunkContext = 0
	}
	if opt.FuncName == nil {
		opt.FuncName = DefaultFuncName
	}
	if opt.Context == 0 {
		// git's xdi_diff drops most of the common tail when no
		// context is requested (trim_common_tail).
		old, new = trimCommonTail(old, new)
	}
	e := computeEnv(old, new)
	defer e.release()
	changes := e.script()
	for _, c := range changes {
		added += c.NewLines
		deleted += c.OldLines
	}
	// strings.Builder: the hunks are returned without a copy. Sized for
	// the lines split around the changes, which hold every line a hunk
	// shows unless the hunks reach far into the common lines.
	var buf strings.Builder
	buf.Grow(e.a.hi - e.a.lo + e.b.hi - e.b.lo + len(e.a.lines) + len(e.b.lines) + 64*len(changes))
	e.emit(&buf, changes, opt)
	return buf.String(), added, deleted
}

// Change is one block of the edit script: OldLines lines of the old file
// starting at the 0-based line OldStart are replaced by NewLines lines of
// the new file starting at NewStart. A pure insertion has OldLines == 0
// (OldStart is then the old line before which it happens), and likewise
// for deletions.
type Change struct {
	OldStart, OldLines int
	NewStart, NewLines int
}

// Changes returns the edit script git computes from old to new, after
// its sliding heuristics, in file order. It is empty for identical
// inputs.
func Changes(old, new []byte) []Change {
	if bytes.Equal(old, new) {
		return nil
	}
	e := computeEnv(old, new)
	defer e.release()
	return e.script()
}

// computeEnv runs the whole xdiff pipeline up to the final change marks.
func computeEnv(old, new []byte) *env {
	e := prepare(old, new)
	e.diff()
	compact(&e.a, &e.b)
	compact(&e.b, &e.a)
	return e
}

// script collects the change marks into an edit script
// (xdl_build_script).
func (e *env) script() []Change {
	a, b := &e.a, &e.b
	var rev []Change
	i1, i2 := a.n(), b.n()
	for i1 >= 0 || i2 >= 0 {
		if (i1 >= 0 && a.changed(i1-1)) || (i2 >= 0 && b.changed(i2-1)) {
			l1 := i1
			for i1 > 0 && a.changed(i1-1) {
				i1--
			}
			l2 := i2
			for i2 > 0 && b.changed(i2-1) {
				i2--
			}
			rev = append(rev, Change{OldStart: i1, OldLines: l1 - i1, NewStart: i2, NewLines: l2 - i2})
		}
		i1--
		i2--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// trimCommonTail mirrors trim_common_tail of git's xdiff-interface.c:
// identical trailing 1024-byte blocks are cut off, keeping the end of the
// line that straddles the cut.
func trimCommonTail(a, b []byte) ([]byte, []byte) {
	const blk = 1024
	trimmed := 0
	smaller := min(len(a), len(b))
	ap, bp := len(a), len(b)
	for blk+trimmed <= smaller && bytes.Equal(a[ap-blk:ap], b[bp-blk:bp]) {
		trimmed += blk
		ap -= blk
		bp -= blk
	}
	recovered := 0
	for recovered < trimmed {
		c := a[ap+recovered]
		recovered++
		if c == '\n' {
			break
		}
	}
	return a[:len(a)-(trimmed-recovered)], b[:len(b)-(trimmed-recovered)]
}

// hunkEnd returns the index of the last change that belongs to the hunk
// starting with changes[first] (xdl_get_hunk without ignorable changes).
func hunkEnd(changes []Change, first int, maxCommon int) int {
	last := first
	for i := first + 1; i < len(changes); i++ {
		prev := changes[i-1]
		if changes[i].OldStart-(prev.OldStart+prev.OldLines) > maxCommon {
			break
		}
		last = i
	}
	return last
}

// emit writes the hunks of the edit script (xdl_emit_diff).
func (e *env) emit(buf *strings.Builder, changes []Change, opt Options) {
	a, b := &e.a, &e.b
	ctx := opt.Context
	maxCommon := 2*ctx + opt.InterHunkContext
	funcPrev := -1
	var funcName []byte

	for first := 0; first < len(changes); {
		last := hunkEnd(changes, first, maxCommon)
		xch, xche := changes[first], changes[last]

		s1 := max(xch.OldStart-ctx, 0)
		s2 := max(xch.NewStart-ctx, 0)
		lctx := ctx
		lctx = min(lctx, a.n()-(xche.OldStart+xche.OldLines))
		lctx = min(lctx, b.n()-(xche.NewStart+xche.NewLines))
		e1 := xche.OldStart + xche.OldLines + lctx
		e2 := xche.NewStart + xche.NewLines + lctx

		// The function line is searched upwards from the line before
		// the hunk, stopping where the previous search started; if
		// nothing is found the previous name is kept.
		for l := s1 - 1; l != funcPrev && l >= 0 && l < a.n(); l-- {
			if name, ok := opt.FuncName(a.line(l)); ok {
				funcName = name
				break
			}
		}
		funcPrev = s1 - 1

		writeHunkHeader(buf, s1+1, e1-s1, s2+1, e2-s2, funcName)

		for ; s2 < xch.NewStart; s2++ {
			writeRecord(buf, ' ', b.line(s2))
		}
		s1 = xch.OldStart
		for i := first; ; i++ {
			c := changes[i]
			for ; s1 < c.OldStart && s2 < c.NewStart; s1, s2 = s1+1, s2+1 {
				writeRecord(buf, ' ', b.line(s2))
			}
			for s1 = c.OldStart; s1 < c.OldStart+c.OldLines; s1++ {
				writeRecord(buf, '-', a.line(s1))
			}
			for s2 = c.NewStart; s2 < c.NewStart+c.NewLines; s2++ {
				writeRecord(buf, '+', b.line(s2))
			}
			if i == last {
				break
			}
			s1 = c.OldStart + c.OldLines
			s2 = c.NewStart + c.NewLines
		}
		for s2 = xche.NewStart + xche.NewLines; s2 < e2; s2++ {
			writeRecord(buf, ' ', b.line(s2))
		}
		first = last + 1
	}
}

// writeHunkHeader writes "@@ -s1,c1 +s2,c2 @@ func\n" with git's
// conventions for counts of 0 and 1 (xdl_emit_hunk_hdr).
func writeHunkHeader[W hunkWriter](buf W, s1, c1, s2, c2 int, funcName []byte) {
	var tmp [24]byte
	start := buf.Len()
	buf.WriteString("@@ -")
	if c1 == 0 {
		s1--
	}
	buf.Write(strconv.AppendInt(tmp[:0], int64(s1), 10))
	if c1 != 1 {
		buf.WriteByte(',')
		buf.Write(strconv.AppendInt(tmp[:0], int64(c1), 10))
	}
	buf.WriteString(" +")
	if c2 == 0 {
		s2--
	}
	buf.Write(strconv.AppendInt(tmp[:0], int64(s2), 10))
	if c2 != 1 {
		buf.WriteByte(',')
		buf.Write(strconv.AppendInt(tmp[:0], int64(c2), 10))
	}
	buf.WriteString(" @@")
	if len(funcName) > 0 {
		// xdiff formats the header in a 128-byte buffer, cutting
		// the name if the line numbers are long.
		buf.WriteByte(' ')
		if room := hunkHeaderMax - (buf.Len() - start) - 1; len(funcName) > room {
			funcName = funcName[:room]
		}
		// git's diff.c (sane_truncate_line) then cuts the header
		// line at the first byte that does not start a whole, valid
		// UTF-8 sequence.
		buf.Write(funcName[:gitUTF8Prefix(funcName)])
	}
	buf.WriteByte('\n')
}

// hunkWriter is what the hunks are written into (emit's strings.Builder).
type hunkWriter interface {
	Len() int
	Write([]byte) (int, error)
	WriteByte(byte) error
	WriteString(string) (int, error)
}

// writeRecord writes one diff line; a line without a final newline is
// followed by git's "\ No newline at end of file" marker.
func writeRecord(buf *strings.Builder, prefix byte, line []byte) {
	buf.WriteByte(prefix)
	buf.Write(line)
	if len(line) > 0 && line[len(line)-1] != '\n' {
		buf.WriteString("\n\\ No newline at end of file\n")
	}
}

// gitUTF8Prefix returns the length of the longest prefix of b that git's
// pick_one_utf8_char (utf8.c) reads as whole UTF-8 characters. It is
// stricter than Go's utf8.Valid only in refusing U+FFFE and U+FFFF.
func gitUTF8Prefix(b []byte) int {
	i := 0
	for i < len(b) {
		n := gitUTF8Len(b[i:])
		if n == 0 {
			return i
		}
		i += n
	}
	return i
}

// gitUTF8Len returns the length of the UTF-8 character at the start of s,
// or 0 if git takes it as invalid: a stray continuation byte, a sequence
// cut short, an overlong form, a surrogate, U+FFFE or U+FFFF, or a code
// point beyond U+10FFFF.
func gitUTF8Len(s []byte) int {
	cont := func(i int) bool { return i < len(s) && s[i]&0xc0 == 0x80 }
	switch c := s[0]; {
	case c < 0x80:
		return 1
	case c&0xe0 == 0xc0:
		if !cont(1) || c&0xfe == 0xc0 {
			return 0
		}
		return 2
	case c&0xf0 == 0xe0:
		if !cont(1) || !cont(2) ||
			c == 0xe0 && s[1]&0xe0 == 0x80 ||
			c == 0xed && s[1]&0xe0 == 0xa0 ||
			c == 0xef && s[1] == 0xbf && s[2]&0xfe == 0xbe {
			return 0
		}
		return 3
	case c&0xf8 == 0xf0:
		if !cont(1) || !cont(2) || !cont(3) ||
			c == 0xf0 && s[1]&0xf0 == 0x80 ||
			c == 0xf4 && s[1] > 0x8f || c > 0xf4 {
			return 0
		}
		return 4
	}
	return 0
}
