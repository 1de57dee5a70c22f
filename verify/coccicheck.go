package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// coccinelleWhy is the Why of Coccinelle's findings.
const coccinelleWhy = "the kernel's own semantic patches (scripts/coccinelle, make coccicheck) find it: the kernel test robot and maintainers run them"

// coccinelleSame maps the semantic patches that report what a verify rule
// reports to that rule.
var coccinelleSame = map[string]string{"tests/unsigned_lesser_than_zero.cocci": "TYPE_LIMITS"}

var (
	coccinelleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\S+?):(\d+):(\d+)(?:-\d+)?: (.*)$`) })
	statePrefix    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^p(\d+)/`) })
)

// DefaultSpatchTimeout bounds one run of spatch (one semantic patch on a
// series' files): the slowest of 6.12's 73 takes seconds on v16, so a run
// still going after this is stuck, and is stopped and counted as failed.
const DefaultSpatchTimeout = 3 * time.Minute

// Coccicheck runs the semantic patches of the tree's scripts/coccinelle on
// the C files of s as make coccicheck MODE=report runs them (each with the
// Options its header gives, those whose Requires: spatch does not meet
// left out), on every .c and .h file a patch adds or changes as it is after
// that patch, and returns own with what they report on the lines each patch
// adds. A report verify's own rules make at the same place is left out;
// the others are warnings named COCCI_ and the semantic patch's name
// (COCCI_UNSIGNED_LESSER_THAN_ZERO). A semantic patch spatch fails on
// (or that runs longer than opt.SpatchTimeout) is named in the report's
// note; when spatch fails on every one, no Coccinelle check ran and
// that is a COCCI_FAILED error.
func Coccicheck(ctx context.Context, s *Series, own []Finding, opt Options) ([]Finding, error) {
	if s.Tree == nil {
		return nil, errors.New("--coccicheck runs the tree's scripts/coccinelle: give the tree with --tree")
	}
	spatch, err := exec.LookPath("spatch")
	if err != nil {
		return nil, errors.New("--coccicheck needs Coccinelle's spatch: install it (apt-get install coccinelle)")
	}
	version := spatchVersion(ctx, spatch)
	dir, err := os.MkdirTemp("", "kpatch-coccicheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	write := func(p string, c []byte) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, c, 0o644)
	}
	cocci, err := s.cocciFiles("scripts/coccinelle")
	if err != nil {
		return nil, fmt.Errorf("--coccicheck: %w", err)
	}
	if len(cocci) == 0 {
		return nil, fmt.Errorf("--coccicheck: the tree %s has no scripts/coccinelle/*.cocci", s.Tree.Dir)
	}
	states := 0
	for _, p := range s.Patches {
		for _, f := range p.Files {
			if !isC(f.Path) || !f.Known || f.Deleted || len(f.Added) == 0 {
				continue
			}
			if err := write(filepath.Join(dir, "src", fmt.Sprintf("p%04d", p.Number), filepath.FromSlash(f.Path)), f.New); err != nil {
				return nil, err
			}
			states++
		}
	}
	if states == 0 {
		return own, nil
	}
	type result struct {
		rel string
		out []byte
		err error
	}
	var (
		mu      sync.Mutex
		results []result
		skipped []string
		wg      sync.WaitGroup
	)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	timeout := opt.SpatchTimeout
	if timeout <= 0 {
		timeout = DefaultSpatchTimeout
	}
	start := time.Now()
	for _, rel := range sortedKeys(cocci) {
		text := cocci[rel]
		if req := cocciHeader(text, "Requires:"); req != "" && versionLess(version, req) {
			skipped = append(skipped, rel)
			continue
		}
		file := filepath.Join(dir, "cocci", filepath.FromSlash(rel))
		if err := write(file, text); err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			args := []string{"-D", "report", "--no-show-diff", "--very-quiet", "--cocci-file", file}
			args = append(args, strings.Fields(cocciHeader(text, "Options:"))...)
			args = append(args, "--dir", filepath.Join(dir, "src"))
			runCtx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			cmd := exec.CommandContext(runCtx, spatch, args...)
			cmd.Dir = filepath.Join(dir, "src")
			cmd.WaitDelay = time.Second // a child holding the output open does not keep verify waiting
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			err := cmd.Run()
			switch {
			case err != nil && ctx.Err() == nil && runCtx.Err() != nil:
				err = fmt.Errorf("stopped after %v", timeout)
			case err != nil:
				err = fmt.Errorf("%v: %s", err, firstLine(stderr.String()))
			}
			mu.Lock()
			results = append(results, result{rel, out.Bytes(), err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	took := time.Since(start)
	sort.Slice(results, func(i, j int) bool { return results[i].rel < results[j].rel })
	ignore := map[string]bool{}
	for _, id := range opt.Ignore {
		ignore[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	type place struct {
		id, file string
		patch    int
		line     int
	}
	have := map[place]bool{}
	for _, f := range own {
		have[place{f.ID, f.File, f.Patch, f.Line}] = true
	}
	all := append([]Finding{}, own...)
	var failed []string
	var firstErr error
	srcDir := filepath.Join(dir, "src") + string(filepath.Separator)
	for _, r := range results {
		if r.err != nil {
			failed = append(failed, r.rel)
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", r.rel, r.err)
			}
		}
		id := "COCCI_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(strings.TrimSuffix(path.Base(r.rel), ".cocci")))
		if ignore[id] {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(r.out))
		for sc.Scan() {
			m := coccinelleLine().FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			rel := strings.TrimPrefix(filepath.ToSlash(m[1]), filepath.ToSlash(srcDir))
			pm := statePrefix().FindStringSubmatch(rel)
			if pm == nil {
				continue
			}
			n, _ := strconv.Atoi(pm[1])
			file := strings.TrimPrefix(rel, pm[0])
			line, _ := strconv.Atoi(m[2])
			p := s.Patch(n)
			if p == nil {
				continue
			}
			if f := fileOf(p, file); f == nil || !addedAt(f, line) {
				continue // not this patch's line
			}
			if same := coccinelleSame[r.rel]; same != "" && have[place{same, file, n, line}] {
				continue
			}
			all = append(all, Finding{ID: id, Severity: Warning, Patch: n, Subject: p.Subject, File: file, Line: line,
				Message: fmt.Sprintf("%s (scripts/coccinelle/%s)", strings.TrimSpace(m[4]), r.rel), Why: coccinelleWhy, Source: "coccinelle"})
		}
	}
	note := fmt.Sprintf("coccicheck: %d semantic patches of scripts/coccinelle (spatch %s) on %d file versions in %.1f s", len(results), version, states, took.Seconds())
	if len(skipped) > 0 {
		note += fmt.Sprintf("; %d need a newer spatch: %s", len(skipped), strings.Join(skipped, ", "))
	}
	if len(failed) > 0 {
		note += fmt.Sprintf("; %d failed: %s", len(failed), strings.Join(failed, ", "))
	}
	if len(failed) > 0 && len(failed) == len(results) && !ignore["COCCI_FAILED"] {
		all = append(all, Finding{ID: "COCCI_FAILED", Severity: Error,
			Message: fmt.Sprintf("spatch %s failed on all %d semantic patches, so no Coccinelle check ran (first: %v): run spatch on one by hand to see why, or leave out --coccicheck", version, len(failed), firstErr),
			Why:     "a check that did not run passes nothing: the series is not checked by Coccinelle", Source: "coccinelle"})
	}
	s.noteChecked(note)
	return Sorted(all), nil
}

// cocciFiles returns the .cocci files under dir of s's tree, by their path
// below dir.
func (s *Series) cocciFiles(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	var walk func(d string) error
	walk = func(d string) error {
		ents, err := s.Tree.Entries(d)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := path.Join(d, e.Name)
			switch {
			case e.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case strings.HasSuffix(e.Name, ".cocci"):
				c, err := s.Tree.ReadFile(p)
				if err != nil {
					return err
				}
				out[strings.TrimPrefix(p, dir+"/")] = c
			}
		}
		return nil
	}
	return out, walk(dir)
}

// cocciHeader returns what the semantic patch's header lines of key
// ("Options:", "Requires:") give, as scripts/coccicheck reads them.
func cocciHeader(text []byte, key string) string {
	var parts []string
	for _, l := range strings.Split(string(text), "\n") {
		if i := strings.Index(l, key); i >= 0 && strings.HasPrefix(strings.TrimSpace(l), "//") {
			parts = append(parts, strings.TrimSpace(l[i+len(key):]))
		}
	}
	return strings.Join(parts, " ")
}

// spatchVersion returns spatch's version ("1.1.1").
func spatchVersion(ctx context.Context, spatch string) string {
	out, err := exec.CommandContext(ctx, spatch, "--version").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(firstLine(string(out)))
	if len(f) >= 3 {
		return f[2]
	}
	return ""
}

// versionLess reports whether dotted version a is before b.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
