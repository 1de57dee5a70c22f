package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kpatch spec -v N writes revision N flattened: one NN-id.patch a patch in
// its order, guards resolved; a revision the spec lacks is refused.
func TestSpecFlattened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v11")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-v", "11", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 16 || names[12] != "13-x86-segment-base.patch" || names[15] != "series" {
		t.Errorf("wrote %v", names)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "14-x86-compat-fp.patch"))
	if strings.Contains(string(b), "{{") || strings.Contains(string(b), "insn_get_seg_base") {
		t.Errorf("v11's compat patch carries a guard or v12's code:\n%s", b)
	}
	stderr.Reset()
	if code := run([]string{"spec", "-v", "9", "-o", filepath.Join(t.TempDir(), "x")}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "v9") {
		t.Errorf("-v 9: exit %d, %q", code, stderr.String())
	}
}
