package unwind

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Mapping is a file mapped into a user address space: bytes [Start, End)
// hold the file's bytes from Offset on, as in an NT_FILE note or
// /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Offset     uint64
	Path       string
}

// Snapshot is a captured user stack: the registers of a task and the
// bytes of its stack from the stack pointer up, with the trace the kernel
// produced for it when there is one. Its text form is described in the
// package documentation.
type Snapshot struct {
	// Regs are the registers; Regs.Compat is the mode.
	Regs Regs
	// Stack holds the captured stack memory.
	Stack Segments
	// Kernel is the kernel's trace, nil if the snapshot has none.
	Kernel []uint64
	// Maps are the task's file mappings, for symbols; may be empty.
	Maps []Mapping
	// Fields are the other key=value fields of the snapshot line, such
	// as tag=, pid= or comm=.
	Fields map[string]string
}

// SnapshotVersion is the version of the text form Snapshot writes.
const SnapshotVersion = 1

// Line layout of the text form: lines stay under 200 characters (but a
// map line with a long path) with a printk prefix of up to 40.
const (
	// StackChunk is the number of stack bytes per "stack:" line.
	StackChunk = 64
	// KernelPerLine is the number of entries per "kernel:" line.
	KernelPerLine = 8
)

// SyntaxError is an error in the text form of a snapshot, at a line.
type SyntaxError struct {
	Line int
	Msg  string
}

// Error reports the line and the problem.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("snapshot: line %d: %s", e.Line, e.Msg)
}

// Memory returns the snapshot's stack as a Memory.
func (s *Snapshot) Memory() Memory { return s.Stack }

// WriteTo writes s in the text form, one snapshot from its "snapshot:"
// line to its "end:" line.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriter(w)}
	mode := "64"
	if s.Regs.Compat {
		mode = "compat"
	}
	fmt.Fprintf(cw, "snapshot: v=%d mode=%s ip=%#x sp=%#x bp=%#x cs_base=%#x ss_base=%#x",
		SnapshotVersion, mode, s.Regs.IP, s.Regs.SP, s.Regs.FP, s.Regs.CSBase, s.Regs.SSBase)
	if s.Regs.Uprobe {
		fmt.Fprintf(cw, " uprobe=%s", hex.EncodeToString(s.Regs.UprobeInsn[:]))
	}
	keys := make([]string, 0, len(s.Fields))
	for k := range s.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.Fields[k]
		if !validKey(k) || knownKeys[k] || v == "" || strings.ContainsAny(v, " \t\r\n") {
			return cw.n, fmt.Errorf("snapshot: field %q=%q cannot be written", k, v)
		}
		fmt.Fprintf(cw, " %s=%s", k, v)
	}
	cw.WriteString("\n")
	for _, m := range s.Maps {
		if m.Path == "" || strings.ContainsAny(m.Path, "\r\n") {
			return cw.n, fmt.Errorf("snapshot: mapping at %#x: path %q cannot be written", m.Start, m.Path)
		}
		fmt.Fprintf(cw, "map: %#x %#x %#x %s\n", m.Start, m.End, m.Offset, m.Path)
	}
	total := 0
	for _, seg := range s.Stack {
		for off := 0; off < len(seg.Data); off += StackChunk {
			end := min(off+StackChunk, len(seg.Data))
			fmt.Fprintf(cw, "stack: %#x %s\n", seg.Addr+uint64(off), hex.EncodeToString(seg.Data[off:end]))
		}
		total += len(seg.Data)
	}
	for i := 0; i < len(s.Kernel); i += KernelPerLine {
		cw.WriteString("kernel:")
		for _, ip := range s.Kernel[i:min(i+KernelPerLine, len(s.Kernel))] {
			fmt.Fprintf(cw, " %#x", ip)
		}
		cw.WriteString("\n")
	}
	if s.Kernel != nil && len(s.Kernel) == 0 {
		cw.WriteString("kernel:\n")
	}
	fmt.Fprintf(cw, "end: stack=%d", total)
	if s.Kernel != nil {
		fmt.Fprintf(cw, " kernel=%d", len(s.Kernel))
	}
	cw.WriteString("\n")
	if cw.err != nil {
		return cw.n, cw.err
	}
	return cw.n, cw.w.(*bufio.Writer).Flush()
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

// Write writes p, counting bytes and keeping the first error.
func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// WriteString writes s.
func (c *countWriter) WriteString(s string) { c.Write([]byte(s)) }

var knownKeys = map[string]bool{"v": true, "mode": true, "ip": true, "sp": true, "bp": true, "cs_base": true, "ss_base": true, "uprobe": true}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// ErrNoSnapshot is returned by ParseSnapshot for input with no snapshot.
var ErrNoSnapshot = errors.New("no snapshot in input")

// ParseSnapshot parses the first snapshot in r. See ParseSnapshots.
func ParseSnapshot(r io.Reader) (*Snapshot, error) {
	var first *Snapshot
	err := parseSnapshots(r, func(s *Snapshot) bool { first = s; return false })
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, ErrNoSnapshot
	}
	return first, nil
}

// ParseSnapshots parses every snapshot in r, a console log for example.
// Lines are recognized by their tag ("snapshot:", "map:", "stack:",
// "kernel:", "end:") wherever it starts a word, so printk prefixes such as
// "[    1.234567] mod: " are skipped; lines without a tag, and tagged lines
// outside a snapshot, are ignored. A snapshot ends at its "end:" line, at
// the next "snapshot:" line or at the end of input. Errors are
// *SyntaxError.
func ParseSnapshots(r io.Reader) ([]*Snapshot, error) {
	var all []*Snapshot
	err := parseSnapshots(r, func(s *Snapshot) bool { all = append(all, s); return true })
	return all, err
}

type snapParser struct {
	s         *Snapshot
	line      int
	stackSegs []Segment
	stackLine map[uint64]int
}

func parseSnapshots(r io.Reader, yield func(*Snapshot) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var p *snapParser
	line := 0
	finish := func() (bool, error) {
		if p == nil {
			return true, nil
		}
		s, err := p.finish()
		p = nil
		if err != nil {
			return false, err
		}
		return yield(s), nil
	}
	for sc.Scan() {
		line++
		tag, rest := findTag(sc.Text())
		switch {
		case tag == "":
			continue
		case tag == "snapshot":
			if more, err := finish(); err != nil || !more {
				return err
			}
			p = &snapParser{s: &Snapshot{}, line: line, stackLine: map[uint64]int{}}
			if err := p.header(rest); err != nil {
				return &SyntaxError{Line: line, Msg: err.Error()}
			}
		case p == nil:
			continue
		case tag == "end":
			if err := p.end(rest); err != nil {
				return &SyntaxError{Line: line, Msg: err.Error()}
			}
			if more, err := finish(); err != nil || !more {
				return err
			}
		default:
			if err := p.body(tag, rest, line); err != nil {
				return &SyntaxError{Line: line, Msg: err.Error()}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("snapshot: after line %d: %w", line, err)
	}
	_, err := finish()
	return err
}

var tags = []string{"snapshot:", "stack:", "kernel:", "map:", "end:"}

// findTag finds the first tag that starts a word of line and returns it
// without its colon, with the text after it.
func findTag(line string) (string, string) {
	line = strings.TrimRight(line, "\r")
	for i := 0; i < len(line); i++ {
		if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' && line[i-1] != ']' {
			continue
		}
		for _, t := range tags {
			if strings.HasPrefix(line[i:], t) {
				return t[:len(t)-1], line[i+len(t):]
			}
		}
	}
	return "", ""
}

func parseHex(s string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil || t == "" {
		return 0, fmt.Errorf("%q is not a hexadecimal number", s)
	}
	return v, nil
}

func (p *snapParser) header(rest string) error {
	s := p.s
	seen := map[string]bool{}
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !validKey(k) {
			return fmt.Errorf("%q is not a key=value field", f)
		}
		if seen[k] {
			return fmt.Errorf("field %s given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "v":
			if v != strconv.Itoa(SnapshotVersion) {
				err = fmt.Errorf("version %q: only %d is known", v, SnapshotVersion)
			}
		case "mode":
			switch v {
			case "64":
			case "compat", "32":
				s.Regs.Compat = true
			default:
				err = fmt.Errorf("mode %q: want 64 or compat", v)
			}
		case "ip":
			s.Regs.IP, err = parseHex(v)
		case "sp":
			s.Regs.SP, err = parseHex(v)
		case "bp", "fp":
			if seen["bp"] && seen["fp"] {
				return errors.New("both bp= and fp= given")
			}
			s.Regs.FP, err = parseHex(v)
		case "cs_base":
			s.Regs.CSBase, err = parseHex(v)
		case "ss_base":
			s.Regs.SSBase, err = parseHex(v)
		case "uprobe":
			var insn []byte
			insn, err = hex.DecodeString(v)
			if err == nil && (len(insn) == 0 || len(insn) > 16) {
				err = fmt.Errorf("%d bytes: want 1 to 16 bytes of the probed instruction", len(insn))
			}
			s.Regs.Uprobe = err == nil
			copy(s.Regs.UprobeInsn[:], insn)
		default:
			if s.Fields == nil {
				s.Fields = map[string]string{}
			}
			s.Fields[k] = v
		}
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	for _, k := range []string{"mode", "ip", "sp"} {
		if !seen[k] {
			return fmt.Errorf("snapshot line has no %s=", k)
		}
	}
	if !seen["bp"] && !seen["fp"] {
		return errors.New("snapshot line has no bp=")
	}
	return nil
}

func (p *snapParser) body(tag, rest string, line int) error {
	s := p.s
	fields := strings.Fields(rest)
	switch tag {
	case "stack":
		if len(fields) < 2 {
			return errors.New("stack line needs an address and bytes")
		}
		addr, err := parseHex(fields[0])
		if err != nil {
			return err
		}
		data, err := hex.DecodeString(strings.Join(fields[1:], ""))
		if err != nil {
			return fmt.Errorf("stack bytes: %v", err)
		}
		if addr+uint64(len(data))-1 < addr {
			return fmt.Errorf("stack bytes at %#x wrap around the address space", addr)
		}
		// Extend the previous segment when contiguous.
		if n := len(p.stackSegs); n > 0 && p.stackSegs[n-1].End() == addr {
			p.stackSegs[n-1].Data = append(p.stackSegs[n-1].Data, data...)
		} else {
			p.stackSegs = append(p.stackSegs, Segment{Addr: addr, Data: data})
			p.stackLine[addr] = line
		}
	case "kernel":
		if s.Kernel == nil {
			s.Kernel = []uint64{}
		}
		for _, f := range fields {
			ip, err := parseHex(f)
			if err != nil {
				return fmt.Errorf("kernel entry: %v", err)
			}
			s.Kernel = append(s.Kernel, ip)
		}
	case "map":
		if len(fields) < 4 {
			return errors.New("map line needs start, end, offset and path")
		}
		var v [3]uint64
		for i := range v {
			var err error
			if v[i], err = parseHex(fields[i]); err != nil {
				return err
			}
		}
		if v[1] <= v[0] {
			return fmt.Errorf("map end %#x is not above start %#x", v[1], v[0])
		}
		// The path is the rest of the line after the offset.
		path := rest
		for range 3 {
			path = strings.TrimLeft(path, " \t")
			path = path[strings.IndexAny(path, " \t"):]
		}
		s.Maps = append(s.Maps, Mapping{Start: v[0], End: v[1], Offset: v[2], Path: strings.TrimSpace(path)})
	}
	return nil
}

func (p *snapParser) end(rest string) error {
	wantStack, wantKernel := -1, -1
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return fmt.Errorf("end field %q: want stack=N or kernel=N", f)
		}
		switch k {
		case "stack":
			wantStack = n
		case "kernel":
			wantKernel = n
		default:
			return fmt.Errorf("end field %q: want stack=N or kernel=N", f)
		}
	}
	got := 0
	for _, seg := range p.stackSegs {
		got += len(seg.Data)
	}
	if wantStack >= 0 && got != wantStack {
		return fmt.Errorf("snapshot from line %d has %d stack bytes, end line says %d (lines lost?)", p.line, got, wantStack)
	}
	if wantKernel >= 0 && len(p.s.Kernel) != wantKernel {
		return fmt.Errorf("snapshot from line %d has %d kernel entries, end line says %d (lines lost?)", p.line, len(p.s.Kernel), wantKernel)
	}
	return nil
}

func (p *snapParser) finish() (*Snapshot, error) {
	segs, err := NewSegments(p.stackSegs...)
	if err != nil {
		// Find the line of the later of the overlapping segments.
		sort.Slice(p.stackSegs, func(i, j int) bool { return p.stackSegs[i].Addr < p.stackSegs[j].Addr })
		for i := 1; i < len(p.stackSegs); i++ {
			if p.stackSegs[i].Addr < p.stackSegs[i-1].End() {
				return nil, &SyntaxError{Line: p.stackLine[p.stackSegs[i].Addr], Msg: fmt.Sprintf("stack bytes at %#x overlap earlier ones", p.stackSegs[i].Addr)}
			}
		}
		return nil, &SyntaxError{Line: p.line, Msg: err.Error()}
	}
	p.s.Stack = segs
	return p.s, nil
}
