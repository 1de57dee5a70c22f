package boottest

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"kpatch/plumbing/ktap"
	"kpatch/plumbing/perfdata"
	"kpatch/unwind"
)

// PerfPair is a sample and the deferred record of its cookie as the guest
// printed them (perf_deferred.c's print_pair), parsed with package
// perfdata.
type PerfPair struct {
	ID, Tag  string
	Sample   *perfdata.Sample
	Deferred *perfdata.Deferred
}

// ParsePerfPairs reads the pairs of a case's log: a "perf-pair:" line with
// the formats, the records' bytes in "perf-sample:" and "perf-deferred:"
// lines (offset, hex), and a "perf-end:" line with their sizes. A pair
// whose lines are missing, out of order or inconsistent is an error.
func ParsePerfPairs(log []ktap.Line) ([]*PerfPair, error) {
	var out []*PerfPair
	var cur *perfPairText
	for _, l := range log {
		d := strings.TrimSpace(l.Text)
		if !strings.HasPrefix(d, "# perf-") {
			continue
		}
		tag, rest, _ := strings.Cut(strings.TrimPrefix(d, "# "), ": ")
		switch tag {
		case "perf-pair":
			if cur != nil {
				return nil, fmt.Errorf("line %d: pair id=%s has no perf-end line", l.N, cur.fields["id"])
			}
			cur = &perfPairText{fields: perfFields(rest), line: l.N}
		case "perf-sample", "perf-deferred":
			if cur == nil {
				return nil, fmt.Errorf("line %d: %s outside a pair", l.N, tag)
			}
			off, hx, ok := strings.Cut(rest, " ")
			o, err := strconv.Atoi(off)
			// A kernel message may land after the hex, before the
			// line's end; the sizes on perf-end say whether bytes were
			// lost.
			if i := strings.Index(hx, "["); i >= 0 && timestampRE().MatchString(hx[i:]) {
				hx = hx[:i]
			}
			b, herr := hex.DecodeString(strings.TrimSpace(hx))
			buf := &cur.sample
			if tag == "perf-deferred" {
				buf = &cur.deferred
			}
			if !ok || err != nil || herr != nil || o != len(*buf) {
				return nil, fmt.Errorf("line %d: bad %s line (offset %q, %d bytes so far)", l.N, tag, off, len(*buf))
			}
			*buf = append(*buf, b...)
		case "perf-end":
			if cur == nil {
				return nil, fmt.Errorf("line %d: perf-end outside a pair", l.N)
			}
			p, err := cur.finish(perfFields(rest))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", l.N, err)
			}
			out = append(out, p)
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: pair id=%s has no perf-end line (console cut?)", cur.line, cur.fields["id"])
	}
	return out, nil
}

type perfPairText struct {
	fields           map[string]string
	sample, deferred []byte
	line             int
}

func perfFields(s string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

func perfHexField(m map[string]string, k string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(m[k], "0x"), 16, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s=%q: %v", k, m[k], err)
	}
	return v, nil
}

func (t *perfPairText) finish(end map[string]string) (*PerfPair, error) {
	id := t.fields["id"]
	if end["id"] != id {
		return nil, fmt.Errorf("perf-end id=%s closes pair id=%s", end["id"], id)
	}
	if end["sample"] != strconv.Itoa(len(t.sample)) || end["deferred"] != strconv.Itoa(len(t.deferred)) {
		return nil, fmt.Errorf("pair id=%s: %d and %d bytes, perf-end says %s and %s (lines lost)", id, len(t.sample), len(t.deferred), end["sample"], end["deferred"])
	}
	st, err := perfHexField(t.fields, "sample_type")
	if err != nil {
		return nil, err
	}
	regs, err := perfHexField(t.fields, "regs")
	if err != nil {
		return nil, err
	}
	dst, err := perfHexField(t.fields, "deferred_sample_type")
	if err != nil {
		return nil, err
	}
	sr, err := perfdata.Parse(t.sample, perfdata.Format{SampleType: st, RegsUser: regs, SampleIDAll: true})
	if err != nil {
		return nil, fmt.Errorf("pair id=%s: sample: %w", id, err)
	}
	dr, err := perfdata.Parse(t.deferred, perfdata.Format{SampleType: dst, SampleIDAll: true})
	if err != nil {
		return nil, fmt.Errorf("pair id=%s: deferred record: %w", id, err)
	}
	s, ok := sr.(*perfdata.Sample)
	if !ok {
		return nil, fmt.Errorf("pair id=%s: the sample is not PERF_RECORD_SAMPLE", id)
	}
	d, ok := dr.(*perfdata.Deferred)
	if !ok {
		return nil, fmt.Errorf("pair id=%s: the deferred record is not PERF_RECORD_CALLCHAIN_DEFERRED", id)
	}
	if s.Cookie == 0 || s.Cookie != d.Cookie {
		return nil, fmt.Errorf("pair id=%s: sample cookie %#x, deferred record's %#x", id, s.Cookie, d.Cookie)
	}
	return &PerfPair{ID: id, Tag: t.fields["tag"], Sample: s, Deferred: d}, nil
}

// Snapshot is the pair as the walker takes it: the sample's user registers
// and stack copy, and the deferred record's entries as the kernel's trace.
func (p *PerfPair) Snapshot() (*unwind.Snapshot, error) {
	s := p.Sample
	if s.RegsABI == perfdata.RegsABINone {
		return nil, fmt.Errorf("sample has no user registers")
	}
	ip, okIP := s.Regs[perfdata.RegIP]
	sp, okSP := s.Regs[perfdata.RegSP]
	bp, okBP := s.Regs[perfdata.RegBP]
	if !okIP || !okSP || !okBP {
		return nil, fmt.Errorf("sample lacks ip, sp or bp among its user registers")
	}
	stack, err := unwind.NewSegments(unwind.Segment{Addr: sp, Data: s.Stack})
	if err != nil {
		return nil, err
	}
	kernel := append([]uint64{}, p.Deferred.IPs...)
	return &unwind.Snapshot{
		Regs:   unwind.Regs{IP: ip, SP: sp, FP: bp, Compat: s.RegsABI == perfdata.RegsABI32},
		Stack:  stack,
		Kernel: kernel,
		Fields: map[string]string{"id": p.ID, "tag": p.Tag, "cookie": fmt.Sprintf("%#x", s.Cookie)},
	}, nil
}
