package verify

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kpatch/internal/testenv"
)

// TestLongLineAsCheckpatch: LONG_LINE reports the lines the tree's
// checkpatch.pl reports as LONG_LINE, LONG_LINE_COMMENT or
// LONG_LINE_STRING, no more and no fewer, on real 6.12 files with many
// long lines (log calls ending in a string, strings alone, comments)
// each created by a patch. Its exemption was "two quotes and no ';'":
// it reported lines checkpatch lets be (a MODULE_* or log call that ends
// in a string) and missed lines checkpatch reports (an argument line with
// two strings).
func TestLongLineAsCheckpatch(t *testing.T) {
	perl := testenv.Tool(t, "perl", "perl")
	tree := debianTree(t)
	files := []string{"drivers/net/ethernet/intel/iavf/iavf_virtchnl.c", "drivers/iommu/arm/arm-smmu/arm-smmu.c"}
	least := 1
	if !testing.Short() { // checkpatch.pl takes half a minute on it
		files, least = append(files, "drivers/gpu/drm/amd/pm/amdgpu_pm.c"), 50
	}
	s := creationSeries(t, files, treeFiles(t, tree, files))
	mine := map[string]bool{}
	for _, f := range only(Run(s, Options{}), "LONG_LINE") {
		mine[fmt.Sprintf("%s:%d", f.File, f.Line)] = true
	}
	theirs := map[string]bool{}
	at := regexp.MustCompile(`^#\d+: FILE: (\S+):(\d+):`)
	for _, p := range s.Patches {
		cmd := exec.Command(perl, tree+"/scripts/checkpatch.pl", "--no-tree", "--show-types", "--no-summary", "--no-color", "-")
		cmd.Stdin = strings.NewReader(p.Mail)
		out, _ := cmd.Output() // exit 1: it found something
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		long := false
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "WARNING:") || strings.HasPrefix(l, "ERROR:") || strings.HasPrefix(l, "CHECK:") {
				long = strings.HasPrefix(l, "WARNING:LONG_LINE")
				continue
			}
			if m := at.FindStringSubmatch(l); m != nil && long {
				n, _ := strconv.Atoi(m[2])
				theirs[fmt.Sprintf("%s:%d", m[1], n)] = true
				long = false
			}
		}
	}
	if len(theirs) < least {
		t.Fatalf("checkpatch.pl reported only %d long lines: the test tests little", len(theirs))
	}
	var extra, missed []string
	for k := range mine {
		if !theirs[k] {
			extra = append(extra, k)
		}
	}
	for k := range theirs {
		if !mine[k] {
			missed = append(missed, k)
		}
	}
	sort.Strings(extra)
	sort.Strings(missed)
	if len(extra)+len(missed) > 0 {
		t.Errorf("LONG_LINE of %d lines, checkpatch's %d: only verify's %v; only checkpatch's %v", len(mine), len(theirs), extra, missed)
	}
}
