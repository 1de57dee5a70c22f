package perfdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestRealRecords reads records a boot of Debian's 7.3 wrote
// (testdata/debian-7.3: samples and the deferred callchains of their
// cookies, as kpatch test qemu --kernel debian-7.3 printed them) and checks
// what the ABI promises of them: the cookie pairs them and carries the cpu
// (low 32 bits, cpu + 1) and an odd count; the deferred callchain starts at
// the sample's user ip; the registers are of the task's ABI (cs 0x33 or
// 0x23); the stack copy is no longer than asked; the record is
// PERF_RECORD_MISC_USER with the sample's task in its sample_id.
func TestRealRecords(t *testing.T) {
	dir := filepath.Join("testdata", "debian-7.3")
	b, err := os.ReadFile(filepath.Join(dir, "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		Name               string `json:"name"`
		ABI                uint64 `json:"abi"`
		SampleType         uint64 `json:"sample_type"`
		Regs               uint64 `json:"regs"`
		DeferredSampleType uint64 `json:"deferred_sample_type"`
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		t.Run(r.Name, func(t *testing.T) {
			sb, err := os.ReadFile(filepath.Join(dir, r.Name+".sample"))
			if err != nil {
				t.Fatal(err)
			}
			db, err := os.ReadFile(filepath.Join(dir, r.Name+".deferred"))
			if err != nil {
				t.Fatal(err)
			}
			sr, err := Parse(sb, Format{SampleType: r.SampleType, RegsUser: r.Regs, SampleIDAll: true})
			if err != nil {
				t.Fatal(err)
			}
			dr, err := Parse(db, Format{SampleType: r.DeferredSampleType, SampleIDAll: true})
			if err != nil {
				t.Fatal(err)
			}
			s, ok1 := sr.(*Sample)
			d, ok2 := dr.(*Deferred)
			if !ok1 || !ok2 {
				t.Fatalf("records are %T and %T", sr, dr)
			}
			if s.Cookie == 0 || s.Cookie != d.Cookie {
				t.Errorf("sample cookie %#x, deferred %#x", s.Cookie, d.Cookie)
			}
			if uint32(s.Cookie) != 1 || s.Cookie>>32&1 != 1 {
				t.Errorf("cookie %#x: want cpu 0 + 1 in the low word and an odd count", s.Cookie)
			}
			if len(s.User()) != 0 {
				t.Errorf("a deferred sample with %d user entries", len(s.User()))
			}
			if s.RegsABI != r.ABI {
				t.Errorf("regs ABI %d, want %d", s.RegsABI, r.ABI)
			}
			if cs := s.Regs[RegCS]; (r.ABI == RegsABI64) != (cs == 0x33) || (r.ABI == RegsABI32) != (cs == 0x23) {
				t.Errorf("cs %#x for ABI %d", cs, r.ABI)
			}
			if len(d.IPs) == 0 || d.IPs[0] != s.Regs[RegIP] {
				t.Errorf("deferred callchain %d entries, first %#x; the sample's user ip %#x", len(d.IPs), first(d.IPs), s.Regs[RegIP])
			}
			if uint64(len(s.Stack)) > s.StackSize || s.StackSize == 0 {
				t.Errorf("stack copy %d bytes of %d asked", len(s.Stack), s.StackSize)
			}
			if d.CPUMode() != MiscUser || d.Type != RecordCallchainDeferred {
				t.Errorf("deferred record type %d misc %d", d.Type, d.Misc)
			}
			if d.TID != s.TID || d.PID != s.PID {
				t.Errorf("deferred record of task %d/%d, sample of %d/%d", d.PID, d.TID, s.PID, s.TID)
			}
		})
	}
}

func first(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	return v[0]
}
