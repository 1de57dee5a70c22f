package verify

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"kpatch/plumbing/kernelsrc"
)

// WriteRules lists every rule, one line each: ID, severity, scope and why
// reviewers care (kpatch verify --rules).
func WriteRules(w io.Writer) error {
	var b strings.Builder
	width := 0
	for _, r := range Rules() {
		width = max(width, len(r.ID))
	}
	fmt.Fprintf(&b, "%-*s  %-8s %-7s %s\n", width, "ID", "SEVERITY", "SCOPE", "WHY")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "%-*s  %-8s %-7s %s\n", width, r.ID, r.Severity, r.Scope, r.Why)
	}
	b.WriteString("\nscope kernel: every series; scope series: only a series whose spec declares it (verify-rules)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// RulesMarkdown is the rule table of docs/verify.md, made from the same
// list as WriteRules.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| ID | severity | scope | why |\n|---|---|---|---|\n")
	for _, r := range Rules() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.ID, r.Severity, r.Scope, strings.ReplaceAll(r.Why, "|", `\|`))
	}
	return b.String()
}

// CheckIgnore refuses an ID of --ignore that is neither a verify rule nor
// one of checkpatch's types (nil when there is no checkpatch.pl to take
// them from), naming it and where the IDs are listed.
func CheckIgnore(ids []string, checkpatchTypes map[string]bool) error {
	known := RuleIDs()
	var bad []string
	for _, id := range ids {
		id = strings.ToUpper(strings.TrimSpace(id))
		if id != "" && !known[id] && !checkpatchTypes[id] && !strings.HasPrefix(id, "COCCI_") {
			bad = append(bad, id)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	s := ""
	if len(bad) > 1 {
		s = "s"
	}
	hint := "kpatch verify --rules lists verify's"
	if checkpatchTypes == nil {
		hint += " (checkpatch.pl's types are known with --checkpatch and --tree)"
	} else {
		hint += "; checkpatch.pl --list-types lists checkpatch's"
	}
	return fmt.Errorf("--ignore: unknown rule ID%s %s: %s", s, strings.Join(bad, ", "), hint)
}

// checkpatchTypeRE is how checkpatch.pl reports: ERROR("TYPE", ...),
// WARN("TYPE", ...), CHK("TYPE", ...); its --list-types reads itself so.
var checkpatchTypeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(?:ERROR|WARN|CHK)\(\s*"([A-Z0-9_]+)"`) })

// CheckpatchTypes returns the message types of the tree's
// scripts/checkpatch.pl.
func CheckpatchTypes(t *kernelsrc.Tree) (map[string]bool, error) {
	src, err := t.ReadFile("scripts/checkpatch.pl")
	if err != nil {
		return nil, fmt.Errorf("reading scripts/checkpatch.pl of the tree: %w", err)
	}
	out := map[string]bool{}
	for _, m := range checkpatchTypeRE().FindAllSubmatch(src, -1) {
		out[string(m[1])] = true
	}
	return out, nil
}
