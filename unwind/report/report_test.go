package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"kpatch/unwind"
)

func trace(ips ...uint64) *unwind.Trace {
	t := &unwind.Trace{Kind: unwind.KindFP, Stop: unwind.StopWrongDirection}
	for i, ip := range ips {
		t.Entries = append(t.Entries, unwind.Entry{IP: ip, SP: 0x7000 + uint64(i)*16, FP: 0x7010 + uint64(i)*16})
	}
	return t
}

func TestCompareWithKernel(t *testing.T) {
	cfg, _ := unwind.X86_64(11, 14)
	for _, tc := range []struct {
		name     string
		walker   []uint64
		kernel   []uint64
		match    *bool
		mismatch int
		text     []string
	}{
		{"no kernel trace", []uint64{1, 2}, nil, nil, -1, []string{"#0   0x0000000000000001 ?? ?", "stop: wrong-direction (2 entries"}},
		{"equal", []uint64{1, 2}, []uint64{1, 2}, ptr(true), -1, []string{"kernel: same", "kernel: matches (2 entries)"}},
		{"differs", []uint64{1, 2, 3}, []uint64{1, 5, 3}, ptr(false), 1, []string{"kernel: 0x0000000000000005 DIFFERS", "differs from entry 1"}},
		{"kernel shorter", []uint64{1, 2}, []uint64{1}, ptr(false), 1, []string{"kernel: (none)"}},
		{"kernel longer", []uint64{1}, []uint64{1, 2}, ptr(false), 1, []string{"#1   (walker has no entry)  kernel: 0x0000000000000002 DIFFERS"}},
		{"kernel empty", []uint64{1}, []uint64{}, ptr(false), 0, []string{"kernel: differs from entry 0 (kernel 0 entries, walker 1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(trace(tc.walker...), nil, Options{Source: "snapshot", Patch: 14, Config: cfg, Kernel: tc.kernel})
			if (r.Match == nil) != (tc.match == nil) || r.Match != nil && *r.Match != *tc.match || r.Mismatch != tc.mismatch {
				t.Errorf("match %v mismatch %d, want %v %d", r.Match, r.Mismatch, tc.match, tc.mismatch)
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.text {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("text does not contain %q:\n%s", s, buf.String())
				}
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func TestJSON(t *testing.T) {
	cfg, _ := unwind.X86_64(11, 14)
	tr := trace(0x401000, 0xffffffffff600000)
	tr.Stop, tr.Fault = unwind.StopFaultRA, &unwind.FaultError{Addr: 0x10, Len: 8}
	r := New(tr, nil, Options{Source: "core", Patch: 14, Config: cfg, Compat: true, Kernel: []uint64{0x401000}})
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"addr": "0xffffffffff600000"`, `"mode": "compat"`, `"stop": "fault-ra"`, `"fault": "fault reading 8 bytes at 0x10"`, `"match": false`, `"max_entries": 511`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("JSON lacks %s:\n%s", s, buf.String())
		}
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Frames) != 2 || back.Frames[1].Addr != 0xffffffffff600000 || *back.Frames[0].Kernel != 0x401000 || back.Frames[1].Kernel != nil {
		t.Errorf("round trip: %+v", back.Frames)
	}
	var a Addr
	for _, bad := range []string{`12`, `"zz"`} {
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("address %s accepted", bad)
		}
	}
	// 32-bit addresses print with 8 digits.
	buf.Reset()
	r.WriteText(&buf)
	if !strings.HasPrefix(buf.String(), "#0   0x00401000 ") {
		t.Errorf("compat text: %q", buf.String())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	cfg, _ := unwind.X86_64(11, 14)
	r := New(trace(1, 2, 3), nil, Options{Config: cfg})
	if err := r.WriteText(failWriter{}); err == nil {
		t.Error("WriteText ignored a write error")
	}
}
