package oracle

import (
	"testing"
)

func TestParseSeed(t *testing.T) {
	th, err := ParseSeed()
	if err != nil {
		t.Fatal(err)
	}
	if th.Version != 11 || th.Total != 14 || len(th.Patches) != 14 || th.Cover == nil {
		t.Fatalf("got v%d, %d/%d patches, cover %v", th.Version, len(th.Patches), th.Total, th.Cover != nil)
	}
	tests := []struct {
		n      int
		title  string
		author string
		files  int
	}{
		{1, "unwind_user: Add user space unwinding API", "Josh Poimboeuf <jpoimboe@kernel.org>", 7},
		{4, "unwind_user/deferred: Add unwind_user_faultable()", "Steven Rostedt <rostedt@goodmis.org>", 6},
		{13, "perf/x86: Rename and move get_segment_base() and make it global", "Josh Poimboeuf <jpoimboe@kernel.org>", 3},
		{14, "unwind_user/x86: Enable compat mode frame pointer unwinding on x86", "Josh Poimboeuf <jpoimboe@kernel.org>", 5},
	}
	for _, tt := range tests {
		p := th.Patches[tt.n-1]
		if p.Title != tt.title || p.Author != tt.author || len(p.Files) != tt.files {
			t.Errorf("patch %d: got %q by %q with %d files", tt.n, p.Title, p.Author, len(p.Files))
		}
	}
	if len(th.Replies) == 0 {
		t.Error("no replies parsed")
	}
}

func TestCreatedFilesMatchIndexHashes(t *testing.T) {
	th, err := ParseSeed()
	if err != nil {
		t.Fatal(err)
	}
	files, err := CreatedFiles(th)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, vs := range files {
		n += len(vs)
	}
	// 11 created files, 39 versions named by index lines in the patches.
	if len(files) != 11 || n != 39 {
		t.Errorf("got %d files, %d versions; want 11 and 39", len(files), n)
	}
}
