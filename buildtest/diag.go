package buildtest

import (
	"strconv"
	"strings"
	"sync"

	"regexp"
)

// Diag is one diagnostic of the compiler, sparse or objtool.
type Diag struct {
	File     string   `json:"file"` // relative to the source tree when inside it
	Line     int      `json:"line,omitempty"`
	Col      int      `json:"col,omitempty"`
	Severity string   `json:"severity"` // "error" or "warning"
	Message  string   `json:"message"`
	Context  []string `json:"context,omitempty"` // the source excerpt that follows
}

// String prints the diagnostic as the compiler does, on one line.
func (d Diag) String() string {
	loc := d.File
	if d.Line > 0 {
		loc += ":" + strconv.Itoa(d.Line)
	}
	return loc + ": " + d.Severity + ": " + d.Message
}

var (
	hexRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`0x[0-9a-f]+`) })
	quoteRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`:\d+(:\d+)?`) })
)

// Key is the diagnostic with line and column numbers (and objtool's
// offsets) removed, to compare a warning with the base's.
func (d Diag) Key() string {
	m := hexRE().ReplaceAllString(d.Message, "0x")
	m = quoteRE().ReplaceAllString(m, ":")
	return d.File + ": " + d.Severity + ": " + m
}

// objResult is what compiling one object gave.
type objResult struct {
	Failed   bool
	Errors   []Diag
	Warnings []Diag
}

var (
	stepLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s{2}([A-Z][A-Z0-9_-]{1,9})(?: \[M\])?\s+(\S+)$`) })
	diagRE     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(.+?):(\d+):(?:(\d+):)? (warning|error|fatal error): (.*)$`)
	})
	objtoolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\S+\.o): (warning|error): (objtool: .*)$`) })
	makeErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*\* \[[^\]]*?: ([^\]\s]+\.o)\] Error`) })
)

// outputParser splits make's output (run with --output-sync=target, so a
// recipe's lines are together) into the diagnostics of each object.
type outputParser struct {
	rel     func(string) string // compiler path -> source-relative path
	cur     string              // object of the current recipe
	check   bool                // in its sparse (CHECK) part
	last    *Diag
	results map[string]*objResult
	// compiled are the objects make compiled (a step line named them),
	// warnings or not.
	compiled map[string]bool
}

func newOutputParser(rel func(string) string) *outputParser {
	return &outputParser{rel: rel, results: map[string]*objResult{}, compiled: map[string]bool{}}
}

func (p *outputParser) result(obj string) *objResult {
	r := p.results[obj]
	if r == nil {
		r = &objResult{}
		p.results[obj] = r
	}
	return r
}

// line consumes one line of output.
func (p *outputParser) line(l string) {
	if m := stepLineRE().FindStringSubmatch(l); m != nil {
		p.last = nil
		p.check = m[1] == "CHECK"
		switch t := m[2]; {
		case strings.HasSuffix(t, ".o"):
			p.cur = t
			p.compiled[t] = true
		case p.check && strings.HasSuffix(t, ".c"):
			p.cur = p.objOf(t)
		default:
			p.cur = ""
		}
		return
	}
	if m := makeErrRE().FindStringSubmatch(l); m != nil {
		r := p.result(m[1])
		r.Failed = true
		return
	}
	var d Diag
	if m := diagRE().FindStringSubmatch(l); m != nil {
		d.File = p.rel(m[1])
		d.Line, _ = strconv.Atoi(m[2])
		d.Col, _ = strconv.Atoi(m[3])
		d.Severity = m[4]
		if d.Severity == "fatal error" {
			d.Severity = "error"
		}
		d.Message = m[5]
	} else if m := objtoolRE().FindStringSubmatch(l); m != nil {
		d = Diag{File: p.rel(m[1]), Severity: m[2], Message: m[3]}
	} else {
		if p.last != nil && strings.HasPrefix(l, " ") && len(p.last.Context) < 4 {
			p.last.Context = append(p.last.Context, l)
		}
		return
	}
	if p.cur == "" {
		return
	}
	r := p.result(p.cur)
	if p.check {
		// sparse: its "error"s do not fail the build (make C=1 goes on);
		// they are compared with the base like warnings.
		d.Message = "sparse: " + strings.TrimPrefix(d.Severity+": ", "warning: ") + d.Message
		d.Severity = "warning"
	}
	if d.Severity == "error" {
		r.Errors = append(r.Errors, d)
		r.Failed = true
		p.last = &r.Errors[len(r.Errors)-1]
	} else {
		r.Warnings = append(r.Warnings, d)
		p.last = &r.Warnings[len(r.Warnings)-1]
	}
}

// objOf maps the source path of a CHECK line to its object.
func (p *outputParser) objOf(src string) string {
	s := p.rel(src)
	return strings.TrimSuffix(s, ".c") + ".o"
}
