package objcode

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// compile compiles testdata/name.c as the kernel's objects are (-O2, no
// PIC) into a temporary directory.
func compile(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".o")
	b, err := exec.Command("gcc", "-O2", "-fno-pic", "-fno-asynchronous-unwind-tables", "-c", filepath.Join("testdata", name+".c"), "-o", out).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc (a test dependency): %v\n%s", err, b)
	}
	return out
}

// Each function's branches as gcc wrote them: a section-relative call
// to a static function elsewhere, an indirect call, a call to a function
// that does not return moved into f.cold, a tail call, returns.
func TestReadBranches(t *testing.T) {
	o, err := Read(context.Background(), compile(t, "branches"))
	if err != nil {
		t.Fatal(err)
	}
	local := func(n, sec string) Target { return Target{Name: n, Local: true, Section: sec} }
	tests := []struct {
		fn      string
		want    []Branch // calls and jumps to other functions, indirect ones, returns; not jumps inside fn
		returns bool
	}{
		{"f", []Branch{{Jump, local("f.cold", ".text.unlikely")}, {Call, local("helper", ".text.helper")}, {Kind: Indirect}, {Kind: Return}}, true},
		{"f.cold", []Branch{{Call, Target{Name: "ext_die"}}}, false},
		{"g", []Branch{{Call, Target{Name: "f"}}, {Kind: Return}, {Jump, Target{Name: "ext_tail"}}}, true},
		{"helper", []Branch{{Call, Target{Name: "ext_call"}}, {Kind: Return}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			var got []Branch
			for _, b := range o.Code[tt.fn] {
				if b.Target.Local && b.Target.Name == tt.fn {
					continue
				}
				got = append(got, b)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("branches = %+v\nwant %+v", got, tt.want)
			}
			if r := o.Returns(tt.fn); r != tt.returns {
				t.Errorf("Returns = %v, want %v", r, tt.returns)
			}
		})
	}
	if p := o.Parts("f"); !reflect.DeepEqual(p, []string{"f", "f.cold"}) {
		t.Errorf("Parts(f) = %q", p)
	}
	if weak, ok := o.Defines["g"]; !ok || weak {
		t.Errorf("Defines[g] = %v, %v: want a strong definition", weak, ok)
	}
	if _, ok := o.Defines["helper"]; ok {
		t.Error("a static function is among the object's global definitions")
	}
}

func TestSplitReloc(t *testing.T) {
	tests := []struct {
		in   string
		name string
		add  int64
	}{
		{"schedule-0x4", "schedule", -4},
		{".text+0x102", ".text", 0x102},
		{".text", ".text", 0},
		{"__x86_return_thunk-0x4", "__x86_return_thunk", -4},
		{"a-b", "a-b", 0},
	}
	for _, tt := range tests {
		n, a := splitReloc(tt.in)
		if n != tt.name || a != tt.add {
			t.Errorf("splitReloc(%q) = %q, %d; want %q, %d", tt.in, n, a, tt.name, tt.add)
		}
	}
}
