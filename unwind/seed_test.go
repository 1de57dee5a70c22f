package unwind

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/internal/oracle"
)

// The seed is the v11 thread (cover letter, 14 patches, review). Tests that
// need the kernel sources of the series rebuild them from it with
// go-gitdiff; oracle.SeedPath finds it ($KPATCH_SEED overrides).

var (
	patchStart = regexp.MustCompile(`(?m)^\[PATCH v11 (\d\d)/14\]`)
	mailStart  = regexp.MustCompile(`(?m)^(\[PATCH|Re: \[PATCH)`)
)

type seedTree struct {
	once    sync.Once
	err     error
	patches map[int]string
}

var seed seedTree

// seedPatches returns the text of patches 1 to 14, by number.
func seedPatches(t testing.TB) map[int]string {
	t.Helper()
	seed.once.Do(func() {
		data, err := oracle.ReadSeed() // the text form, also for an mbox seed
		if err != nil {
			seed.err = err
			return
		}
		text := string(data)
		seed.patches = map[int]string{}
		for _, loc := range patchStart.FindAllStringSubmatchIndex(text, -1) {
			n, _ := strconv.Atoi(text[loc[2]:loc[3]])
			if n == 0 {
				continue // the cover letter, with the v10..v11 diff
			}
			body := text[loc[1]:]
			if next := mailStart.FindStringIndex(body); next != nil {
				body = body[:next[0]]
			}
			seed.patches[n] = body
		}
		for n := 1; n <= 14; n++ {
			if _, ok := seed.patches[n]; !ok {
				seed.err = fmt.Errorf("seed: patch %d/14 not found", n)
			}
		}
	})
	if seed.err != nil {
		t.Fatal(seed.err) // the seed is the specification: missing, it fails
	}
	return seed.patches
}

// seedFiles returns the files the series creates, as they are after
// patches 1 to upto. Files the series only modifies are not tracked.
func seedFiles(t testing.TB, upto int) map[string][]byte {
	t.Helper()
	patches := seedPatches(t)
	files := map[string][]byte{}
	for n := 1; n <= upto; n++ {
		diffs, _, err := gitdiff.Parse(strings.NewReader(patches[n]))
		if err != nil {
			t.Fatalf("seed patch %d: %v", n, err)
		}
		for _, f := range diffs {
			old, tracked := files[f.OldName]
			if !f.IsNew && !tracked {
				continue
			}
			var out bytes.Buffer
			if err := gitdiff.Apply(&out, bytes.NewReader(old), f); err != nil {
				t.Fatalf("seed patch %d: applying %s: %v", n, f.NewName, err)
			}
			if f.IsDelete {
				delete(files, f.OldName)
				continue
			}
			files[f.NewName] = out.Bytes()
		}
	}
	return files
}

func TestSeedReconstruction(t *testing.T) {
	files := seedFiles(t, 14)
	for _, name := range []string{
		"kernel/unwind/user.c",
		"kernel/unwind/deferred.c",
		"include/linux/unwind_user.h",
		"include/linux/unwind_user_types.h",
		"arch/x86/include/asm/unwind_user.h",
		"arch/x86/include/asm/unwind_user_types.h",
	} {
		if len(files[name]) == 0 {
			t.Errorf("%s missing after patch 14", name)
		}
	}
	// The testdata copies of the x86 header are the seed's.
	for _, c := range []struct {
		patch int
		file  string
	}{{12, "testdata/unwind_user.h.12"}, {14, "testdata/unwind_user.h.14"}} {
		want := seedFiles(t, c.patch)["arch/x86/include/asm/unwind_user.h"]
		got, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from arch/x86/include/asm/unwind_user.h after patch %d", c.file, c.patch)
		}
	}
}
