package hooks

import (
	"fmt"
	"regexp"
	"strings"
)

var kconfigTop = regexp.MustCompile(`^(config|menuconfig|choice|endchoice|menu|endmenu|if|endif|source|comment|mainmenu)\b`)

func (f lines) configAfter(sym string) (int, error) {
	re := regexp.MustCompile(`^(menu)?config\s+` + regexp.QuoteMeta(sym) + `\s*$`)
	i, err := f.unique(prefiltered(sym, re), 0, len(f))
	if err != nil {
		return 0, err
	}
	j := i + 1
	for j < len(f) && !kconfigTop.MatchString(f[j]) {
		j++
	}
	for j > i+1 && strings.HasPrefix(f[j-1], "#") {
		j--
	}
	return j, nil
}

var selectRE = regexp.MustCompile(`^\s*select\s+(\S+)`)

func (f lines) selectSorted(config, text string) (int, error) {
	m := selectRE.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("the text is not a select line")
	}
	re := regexp.MustCompile(`^config\s+` + regexp.QuoteMeta(config) + `\s*$`)
	i, err := f.unique(prefiltered(config, re), 0, len(f))
	if err != nil {
		return 0, err
	}
	end := i + 1
	for end < len(f) && !kconfigTop.MatchString(f[end]) {
		end++
	}
	return f.sortedAmong(i+1, end, m[1], func(l string) (string, bool) {
		if s := selectRE.FindStringSubmatch(l); s != nil {
			return s[1], true
		}
		return "", false
	})
}
