package buildtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// hookSelects are the symbols HookKconfig selects.
var hookSelects = sync.OnceValue(func() []string { return kconfigSelects([]byte(HookKconfig))[HookSymbol] })

// forcedOnly says, of a configuration built with the test-only hook on,
// which of the symbols the hook selects are on only because of it at
// this step: no symbol of the tree that selects them is set in the
// configuration now (config, without the CONFIG_ prefix). The code they
// gate is then compiled here though no configuration of the tree
// compiles it yet, as UNWIND_USER before the x86 patches select
// HAVE_UNWIND_USER_FP. "" when the hook is off or nothing is forced.
func forcedOnly(src string, config map[string]string) string {
	if config[HookSymbol] != "y" {
		return ""
	}
	var forced []string
	var sel map[string][]string
	for _, s := range hookSelects() {
		if config[s] != "y" {
			continue
		}
		if sel == nil {
			sel = treeSelects(src)
		}
		on := false
		var by []string
		for _, x := range sel[s] {
			if x == HookSymbol {
				continue
			}
			by = append(by, x+"="+valueOr(config[x], "n"))
			on = on || config[x] == "y" || config[x] == "m"
		}
		if !on {
			why := "nothing in the tree selects it"
			if len(by) > 0 {
				sort.Strings(by)
				why = "of the symbols that select it, " + strings.Join(by, ", ")
			}
			forced = append(forced, fmt.Sprintf("%s is on only because the test-only %s selects it (%s): no configuration of the tree compiles what it gates at this patch", s, HookSymbol, why))
		}
	}
	return strings.Join(forced, "; ")
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// treeSelects reads the Kconfig files under src (HookDir's aside): for
// each symbol, the symbols whose entries select it.
func treeSelects(src string) map[string][]string {
	out := map[string][]string{}
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", HookDir, "Documentation", "tools", "scripts":
				if p != src {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), "Kconfig") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for target, by := range kconfigSelects(b) {
			for _, x := range by {
				out[x] = appendUnique(out[x], target)
			}
		}
		return nil
	})
	return out
}

var (
	kconfigEntryRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$`) })
	kconfigSelectRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*select\s+([A-Za-z0-9_]+)`) })
)

// kconfigSelects returns, for each entry of a Kconfig file, the symbols
// it selects (conditions aside).
func kconfigSelects(b []byte) map[string][]string {
	out := map[string][]string{}
	entry := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := kconfigEntryRE().FindStringSubmatch(line); m != nil {
			entry = m[1]
			continue
		}
		if m := kconfigSelectRE().FindStringSubmatch(line); m != nil && entry != "" {
			out[entry] = appendUnique(out[entry], m[1])
		}
	}
	return out
}
