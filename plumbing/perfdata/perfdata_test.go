package perfdata

import (
	"os/exec"

	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kpatch/plumbing/cache"
)

// rec builds a record as the kernel writes it: the header, then the u64
// fields in order; raw appends bytes as they are (a stack copy).
type rec struct {
	typ  uint32
	misc uint16
	body []byte
}

func (r *rec) u64(v ...uint64) *rec {
	for _, x := range v {
		r.body = binary.LittleEndian.AppendUint64(r.body, x)
	}
	return r
}

func (r *rec) raw(b []byte) *rec { r.body = append(r.body, b...); return r }

func (r *rec) bytes() []byte {
	b := binary.LittleEndian.AppendUint32(nil, r.typ)
	b = binary.LittleEndian.AppendUint16(b, r.misc)
	b = binary.LittleEndian.AppendUint16(b, uint16(8+len(r.body)))
	return append(b, r.body...)
}

const (
	stAll  = SampleIP | SampleTID | SampleTime | SampleCallchain | SampleRegsUser | SampleStackUser
	regsBP = 1<<RegBP | 1<<RegSP | 1<<RegIP | 1<<RegFlags | 1<<RegCS | 1<<RegSS
)

func stack(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// TestParse reads records built by the ABI of include/uapi/linux/perf_event.h
// (6.19): what each field holds, and the errors of records that lie about
// their size.
func TestParse(t *testing.T) {
	f := Format{SampleType: stAll, RegsUser: regsBP, SampleIDAll: true}
	tid := uint64(7)<<32 | 7
	cookie := uint64(0x1_0000_0001)
	deferredChain := []uint64{ContextKernel, 0xffffffff81000010, 0xffffffff81000020, ContextUserDeferred, cookie}
	sample := func(chain []uint64, stackSize uint64, dyn []byte) []byte {
		r := (&rec{typ: RecordSample, misc: MiscKernel}).u64(0xffffffff81000010, tid, 1234, uint64(len(chain))).u64(chain...)
		r.u64(RegsABI64, 0x7ffc0010, 0x7ffc0000, 0x401136, 0x246, 0x33, 0x2b)
		r.u64(stackSize)
		pad := make([]byte, stackSize)
		copy(pad, dyn)
		return r.raw(pad).u64(uint64(len(dyn))).bytes()
	}
	tests := []struct {
		name    string
		in      []byte
		f       Format
		want    Record
		wantErr string
	}{
		{
			name: "sample with a deferred cookie",
			in:   sample(deferredChain, 64, stack(40)),
			f:    f,
			want: &Sample{Header: Header{RecordSample, MiscKernel, uint16(8 + 8*4 + 8*5 + 8*7 + 8 + 64 + 8)}, IP: 0xffffffff81000010, PID: 7, TID: 7, Time: 1234,
				Callchain: deferredChain, Cookie: cookie, RegsABI: RegsABI64,
				Regs:      map[int]uint64{RegBP: 0x7ffc0010, RegSP: 0x7ffc0000, RegIP: 0x401136, RegFlags: 0x246, RegCS: 0x33, RegSS: 0x2b},
				StackSize: 64, Stack: stack(40)},
		},
		{
			name: "deferred callchain with its sample_id",
			in:   (&rec{typ: RecordCallchainDeferred, misc: MiscUser}).u64(cookie, 3, 0x401136, 0x401150, 0x401170, tid, 99).bytes(),
			f:    f,
			want: &Deferred{Header: Header{RecordCallchainDeferred, MiscUser, 8 + 8*7}, Cookie: cookie, IPs: []uint64{0x401136, 0x401150, 0x401170},
				SampleID: SampleID{PID: 7, TID: 7, Time: 99}},
		},
		{
			name: "lost",
			in:   (&rec{typ: RecordLost}).u64(5, 12, tid, 100).bytes(),
			f:    f,
			want: &Lost{Header: Header{RecordLost, 0, 8 + 8*4}, ID: 5, Lost: 12, SampleID: SampleID{PID: 7, TID: 7, Time: 100}},
		},
		{
			name: "exit is read as another record",
			in:   (&rec{typ: RecordExit}).u64(1, 2, 3).bytes(),
			f:    f,
			want: &Other{Header: Header{RecordExit, 0, 32}, Data: (&rec{}).u64(1, 2, 3).body},
		},
		{
			name:    "deferred record shorter than its nr",
			in:      (&rec{typ: RecordCallchainDeferred}).u64(cookie, 100, 1, 2).bytes(),
			f:       f,
			wantErr: "deferred callchain of 100 entries",
		},
		{
			name:    "stack copy larger than the record",
			in:      (&rec{typ: RecordSample}).u64(1, tid, 1, 0, RegsABINone, 4096, 0).bytes(),
			f:       f,
			wantErr: "want 4096",
		},
		{
			name:    "dyn_size above size",
			in:      (&rec{typ: RecordSample}).u64(1, tid, 1, 0, RegsABINone, 8, 0, 16).bytes(),
			f:       f,
			wantErr: "dyn_size 16 larger than its size 8",
		},
		{
			name:    "bytes left over",
			in:      (&rec{typ: RecordCallchainDeferred}).u64(cookie, 0, tid, 1, 42).bytes(),
			f:       f,
			wantErr: "8 bytes left over",
		},
		{
			name:    "unknown sample type",
			in:      (&rec{typ: RecordSample}).u64(1).bytes(),
			f:       Format{SampleType: 1 << 10},
			wantErr: "bits 0x400 are not read",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in, tt.f)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestSampleContexts: the kernel and user parts of a callchain, and no user
// entries when the user part was deferred.
func TestSampleContexts(t *testing.T) {
	s := &Sample{Callchain: []uint64{ContextKernel, 1, 2, ContextUser, 3, 4, 5}}
	if k, u := s.Kernel(), s.User(); !reflect.DeepEqual(k, []uint64{1, 2}) || !reflect.DeepEqual(u, []uint64{3, 4, 5}) {
		t.Errorf("kernel %v user %v", k, u)
	}
	s = &Sample{Callchain: []uint64{ContextKernel, 1, ContextUserDeferred, 0x100000001}}
	if u := s.User(); len(u) != 0 {
		t.Errorf("deferred sample has user entries %v", u)
	}
}

// TestRecords splits a ring whose second record wraps around the end of
// the data area, and stops at a record whose size overruns head.
func TestRecords(t *testing.T) {
	f := Format{SampleType: SampleTID | SampleTime, SampleIDAll: true}
	a := (&rec{typ: RecordCallchainDeferred}).u64(0x100000001, 1, 0x401000, 1, 2).bytes() // 48 bytes
	b := (&rec{typ: RecordLost}).u64(1, 3, 1, 2).bytes()                                  // 40 bytes
	// 128 bytes: a at 60..108, b at 108..148, wrapping at 128.
	data := make([]byte, 128)
	tail := uint64(1000*128 + 60)
	for i, c := range append(append([]byte{}, a...), b...) {
		data[(tail+uint64(i))%128] = c
	}
	head := tail + uint64(len(a)+len(b))
	recs, err := Records(data, tail, head, f)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if d, ok := recs[0].(*Deferred); !ok || d.Cookie != 0x100000001 || !reflect.DeepEqual(d.IPs, []uint64{0x401000}) {
		t.Errorf("first: %+v", recs[0])
	}
	if l, ok := recs[1].(*Lost); !ok || l.Lost != 3 {
		t.Errorf("second (wrapped): %+v", recs[1])
	}
	if _, err := Records(data, tail, tail+40, f); !errors.Is(err, ErrShort) {
		t.Errorf("head inside a record: %v", err)
	}
	if _, err := Records(make([]byte, 48), 0, 8, f); err == nil {
		t.Error("a ring of 48 bytes accepted")
	}
}

// TestABIConstants checks the numbers against the header as merged: the
// uapi perf_event.h hunk of 6.19's "perf: Support deferred user unwind"
// in ../shared, and the whole header of the Debian 7.3 tree when the cache
// has it (kpatch test qemu --kernel debian-7.3 makes it).
func TestABIConstants(t *testing.T) {
	patch := filepath.Join("..", "..", "..", "shared", "revisions", "x86-6.19", "0014-perf-Support-deferred-user-unwind.patch")
	b, err := os.ReadFile(patch)
	if err != nil {
		t.Fatalf("%v (../shared is the project's test data)", err)
	}
	text := string(b)
	text = text[strings.Index(text, "diff --git a/include/uapi/linux/perf_event.h"):]
	text = text[:strings.Index(text[1:], "diff --git")+1]
	// The hunk takes defer_callchain and defer_output from the low end of
	// __reserved_1, the last field of the 64-bit word: 26 bits before it.
	m := regexp.MustCompile(`(?m)^-\s+__reserved_1\s*:\s*(\d+);`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("0014: no removed __reserved_1 line")
	}
	if first := 64 - mustAtoi(m[1]); first != BitDeferCallchain || first+1 != BitDeferOutput {
		t.Errorf("0014: the reserved bits began at %d; want defer_callchain %d, defer_output %d", first, BitDeferCallchain, BitDeferOutput)
	}
	if !regexp.MustCompile(`(?m)^\+\s+defer_callchain:\s*1,[^\n]*\n\+\s+defer_output\s*:\s*1,`).MatchString(text) {
		t.Error("0014: defer_callchain and defer_output are not the two new 1-bit fields, in that order")
	}
	checkRecord(t, "0014", text)

	c, err := cache.TreeDir("linux-7.3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c, ".git", "kpatch-complete")); err != nil {
		t.Logf("no Debian 7.3 tree in the cache (%s): its whole header not checked", c)
		return
	}
	out, err := exec.Command("git", "-C", c, "show", "v7.3:include/uapi/linux/perf_event.h").Output()
	if err != nil {
		t.Fatal(err)
	}
	h := string(out)
	word := h[strings.Index(h, "disabled       :"):]
	bit := 0
	pos := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:__u64\s+)?([a-z_0-9]+)\s*:\s*([0-9]+)[,;]`).FindAllStringSubmatch(word, -1) {
		pos[m[1]] = bit
		bit += mustAtoi(m[2])
		if m[1] == "__reserved_1" {
			break
		}
	}
	if pos["defer_callchain"] != BitDeferCallchain || pos["defer_output"] != BitDeferOutput || bit != 64 {
		t.Errorf("7.3: defer_callchain at bit %d, defer_output at %d, word of %d bits; want %d, %d, 64",
			pos["defer_callchain"], pos["defer_output"], bit, BitDeferCallchain, BitDeferOutput)
	}
	checkRecord(t, "7.3", h)
}

// checkRecord checks the record type, the context and the record's layout.
func checkRecord(t *testing.T, name, text string) {
	t.Helper()
	if m := regexp.MustCompile(`PERF_RECORD_CALLCHAIN_DEFERRED\s*=\s*(\d+)`).FindStringSubmatch(text); m == nil || m[1] != strconv.Itoa(RecordCallchainDeferred) {
		t.Errorf("%s: PERF_RECORD_CALLCHAIN_DEFERRED = %v, want %d", name, m, RecordCallchainDeferred)
	}
	if m := regexp.MustCompile(`PERF_CONTEXT_USER_DEFERRED\s*=\s*\(__u64\)-(\d+)`).FindStringSubmatch(text); m == nil || ^uint64(mustAtoi(m[1])-1) != ContextUserDeferred {
		t.Errorf("%s: PERF_CONTEXT_USER_DEFERRED = %v, want -640", name, m)
	}
	if !regexp.MustCompile(`u64\s+cookie;\s*\n.*u64\s+nr;\s*\n.*u64\s+ips\[nr\];\s*\n.*struct sample_id\s+sample_id;`).MatchString(text) {
		t.Errorf("%s: the deferred record is not header, cookie, nr, ips[nr], sample_id", name)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}
