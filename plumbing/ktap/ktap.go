package ktap

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Status is the outcome of one test.
type Status int

// The possible test outcomes.
const (
	NoResult Status = iota // the test never printed a result line
	Pass                   // "ok"
	Fail                   // "not ok"
	Skip                   // "ok ... # SKIP" or "not ok ... # SKIP"
)

// String returns "PASS", "FAIL", "SKIP" or "NO RESULT".
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	}
	return "NO RESULT"
}

// Line is one line of the input, with its 1-based line number, after the
// printk timestamp and the KTAP prefix have been removed.
type Line struct {
	N    int
	Text string
}

// Test is one test: a leaf result, or a block with a plan and subtests.
// The value returned by Parse is a root whose Subtests are the top-level
// tests.
type Test struct {
	Name      string  // from the result line, or "# Subtest:" for a block
	Number    int     // the number on the result line
	Status    Status  // outcome; NoResult if no result line was seen
	Directive string  // text after "#" on the result line, e.g. "SKIP no compat"
	Line      int     // line number of the result line (0 if none)
	Expected  int     // count from the plan line, or -1 if no plan
	Log       []Line  // diagnostics and other lines printed before the result
	Subtests  []*Test // nested tests, in order
	Problems  []string
}

// ProblemCount returns the number of parse problems in t and its subtests.
func (t *Test) ProblemCount() int {
	n := len(t.Problems)
	for _, s := range t.Subtests {
		n += s.ProblemCount()
	}
	return n
}

// Find returns the first test, in depth-first order, named name, or nil.
func (t *Test) Find(name string) *Test {
	for _, s := range t.Subtests {
		if s.Name == name {
			return s
		}
		if f := s.Find(name); f != nil {
			return f
		}
	}
	return nil
}

// Counts returns how many leaf tests under t passed, failed, were skipped
// or never reported. A test with subtests counts through its subtests.
func (t *Test) Counts() (pass, fail, skip, none int) {
	for _, s := range t.Subtests {
		if len(s.Subtests) > 0 {
			p, f, k, n := s.Counts()
			pass, fail, skip, none = pass+p, fail+f, skip+k, none+n
			if s.Status == NoResult {
				none++
			}
			continue
		}
		switch s.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		case Skip:
			skip++
		default:
			none++
		}
	}
	return
}

var (
	timestampRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[\s*[0-9]+\.[0-9]+\] ?`) })
	versionRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(K?TAP) version ([0-9]+)\s*$`) })
	planRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*1\.\.([0-9]+)\s*$`) })
	resultRE    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(ok|not ok) ([0-9]+)(?: -)?(?: ([^#]*?))?\s*(?:#\s*(.*))?$`)
	})
	subtestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*# Subtest: (.*)$`) })
	diagRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#`) })
)

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

type kind int

const (
	kNoise kind = iota
	kVersion
	kPlan
	kResult
	kSubtest
	kDiag
)

func classify(s string) kind {
	switch {
	case versionRE().MatchString(s):
		return kVersion
	case planRE().MatchString(s):
		return kPlan
	case resultRE().MatchString(s):
		return kResult
	case subtestRE().MatchString(s):
		return kSubtest
	case diagRE().MatchString(s):
		return kDiag
	}
	return kNoise
}

// ExtractLines reads r and returns the KTAP lines: from the first
// "KTAP version"/"TAP version" line on, with printk timestamps and the
// prefix found before that first version line removed. Lines before it
// are dropped. The line numbers are those of r.
func ExtractLines(r io.Reader) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	var out []Line
	prefix, started := "", false
	for n := 1; sc.Scan(); n++ {
		s := strings.TrimRight(sc.Text(), "\r")
		s = timestampRE().ReplaceAllString(s, "")
		if !started {
			i := strings.Index(s, "TAP version ")
			if i < 0 {
				continue
			}
			if i > 0 && s[i-1] == 'K' {
				i--
			}
			started, prefix = true, s[:i]
			s = s[i:]
		} else {
			s = strings.TrimPrefix(s, prefix)
		}
		out = append(out, Line{N: n, Text: s})
	}
	return out, sc.Err()
}

// Parse reads a console log or a KTAP stream and returns the root test.
// Malformed KTAP is reported in the Problems of the tests concerned; an
// error is returned only if r cannot be read.
func Parse(r io.Reader) (*Test, error) {
	lines, err := ExtractLines(r)
	if err != nil {
		return nil, err
	}
	return ParseLines(lines), nil
}

// ParseLines parses lines already extracted by ExtractLines.
func ParseLines(lines []Line) *Test {
	p := &parser{lines: lines}
	root := &Test{Name: "", Expected: -1, Status: NoResult}
	if len(lines) == 0 {
		root.Problems = append(root.Problems, "no KTAP version line found")
		return root
	}
	p.block(root, 0)
	for p.i < len(p.lines) { // trailing lines at a lower indentation than anything
		root.Log = append(root.Log, p.lines[p.i])
		p.i++
	}
	p.finish(root)
	return root
}

type parser struct {
	lines []Line
	i     int
}

// block parses the header, plan and children of t, whose lines are at
// indentation ind, up to the first structural line less indented.
func (p *parser) block(t *Test, ind int) {
	t.Expected = -1
	var pending *Test // a nested block waiting for its result line
	var log []Line    // lines waiting for the next result line
	sawVersion := false
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		k := classify(l.Text)
		in := indentOf(l.Text)
		if k == kNoise || (k == kDiag && in >= ind) {
			log = append(log, l)
			p.i++
			continue
		}
		if in < ind {
			break
		}
		if in > ind && (k == kVersion || k == kSubtest) {
			if pending != nil {
				pending.Problems = append(pending.Problems, fmt.Sprintf("line %d: subtest has no result line", l.N))
				t.Subtests = append(t.Subtests, pending)
			}
			pending = &Test{Name: "", Status: NoResult}
			pending.Log = log
			log = nil
			p.block(pending, in)
			continue
		}
		if in > ind {
			// A plan or result more indented than this block without a
			// version line: treat as a nested block all the same.
			if pending == nil {
				pending = &Test{Status: NoResult, Log: log}
				log = nil
				pending.Problems = append(pending.Problems, fmt.Sprintf("line %d: indented lines without a KTAP version line", l.N))
				p.block(pending, in)
				continue
			}
			t.Problems = append(t.Problems, fmt.Sprintf("line %d: unexpected indentation: %q", l.N, l.Text))
			p.i++
			continue
		}
		p.i++
		switch k {
		case kVersion:
			if sawVersion || len(t.Subtests) > 0 {
				t.Problems = append(t.Problems, fmt.Sprintf("line %d: unexpected version line", l.N))
			}
			sawVersion = true
			if m := versionRE().FindStringSubmatch(l.Text); m[1] == "KTAP" && m[2] != "1" {
				t.Problems = append(t.Problems, fmt.Sprintf("line %d: unsupported KTAP version %s", l.N, m[2]))
			}
		case kSubtest:
			t.Name = subtestRE().FindStringSubmatch(l.Text)[1]
		case kPlan:
			if t.Expected >= 0 {
				t.Problems = append(t.Problems, fmt.Sprintf("line %d: second plan line", l.N))
			}
			t.Expected, _ = strconv.Atoi(planRE().FindStringSubmatch(l.Text)[1])
		case kResult:
			m := resultRE().FindStringSubmatch(l.Text)
			c := pending
			pending = nil
			if c == nil {
				c = &Test{Expected: -1}
			}
			c.Log = append(c.Log, log...)
			log = nil
			num, _ := strconv.Atoi(m[2])
			name := strings.TrimSpace(m[3])
			if c.Name != "" && name != c.Name {
				c.Problems = append(c.Problems, fmt.Sprintf("line %d: result name %q differs from subtest name %q", l.N, name, c.Name))
			}
			c.Name, c.Number, c.Line = name, num, l.N
			c.Directive = strings.TrimSpace(m[4])
			switch {
			case strings.HasPrefix(strings.ToUpper(c.Directive), "SKIP"):
				c.Status = Skip
			case m[1] == "ok":
				c.Status = Pass
			default:
				c.Status = Fail
			}
			if want := len(t.Subtests) + 1; num != want {
				t.Problems = append(t.Problems, fmt.Sprintf("line %d: test number %d, expected %d", l.N, num, want))
			}
			t.Subtests = append(t.Subtests, c)
		}
	}
	if pending != nil {
		pending.Problems = append(pending.Problems, "no result line: the test never reported (crash or timeout?)")
		pending.Log = append(pending.Log, log...)
		log = nil
		t.Subtests = append(t.Subtests, pending)
	}
	t.Log = append(t.Log, log...)
	if !sawVersion && ind > 0 {
		t.Problems = append(t.Problems, "subtest without a KTAP version line")
	}
}

// finish checks plans against counts, recursively.
func (p *parser) finish(t *Test) {
	if t.Expected < 0 {
		t.Problems = append(t.Problems, "no plan line")
	} else if t.Expected != len(t.Subtests) {
		t.Problems = append(t.Problems, fmt.Sprintf("plan says %d tests, %d reported", t.Expected, len(t.Subtests)))
	}
	for _, s := range t.Subtests {
		if len(s.Subtests) > 0 || s.Expected >= 0 {
			p.finish(s)
		}
	}
}
