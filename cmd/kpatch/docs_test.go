package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kpatch/internal/testenv"
)

// docCommand is one "$ " line of a page's indented block and the output
// the page shows under it.
type docCommand struct {
	line int
	cmd  string
	want []string
}

// docBlock is an indented block of a page that starts with "$ ".
type docBlock struct {
	page string
	line int
	cmds []docCommand
}

// docBlocks reads the command blocks of README.md and docs/*.md: runs of
// lines indented by four spaces whose first line is "    $ COMMAND",
// each command followed by the output the page shows for it (up to the
// next command or the end of the block).
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append([]string{filepath.Join("..", "..", "README.md")}, pages...)
	var blocks []docBlock
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		var cur *docBlock
		for i, l := range lines {
			indented := strings.HasPrefix(l, "    ")
			switch {
			case strings.HasPrefix(l, "    $ "):
				if cur == nil {
					blocks = append(blocks, docBlock{page: filepath.Base(page), line: i + 1})
					cur = &blocks[len(blocks)-1]
				}
				cur.cmds = append(cur.cmds, docCommand{line: i + 1, cmd: strings.TrimPrefix(l, "    $ ")})
			case cur != nil && indented:
				c := &cur.cmds[len(cur.cmds)-1]
				c.want = append(c.want, strings.TrimRight(strings.TrimPrefix(l, "    "), " "))
			case cur != nil && l == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && !strings.HasPrefix(lines[i+1], "    $ "):
				c := &cur.cmds[len(cur.cmds)-1]
				c.want = append(c.want, "") // a blank line inside the output
			default:
				cur = nil
			}
		}
	}
	return blocks
}

// docWork is the directory the pages' commands run in, as a reader runs
// them from the top of the repository: ./kpatch is the binary the tests
// build, the repository's folders are there (unwind/testdata/chain.c,
// revision/trailers/testdata/replies.mbox), and what a command writes
// (outgoing/, myspec) stays for the page's next commands. The pages show
// it as /tmp/work.
const docWork = "/tmp/work"

func newDocWork(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(kpatchBinary(t), filepath.Join(dir, "kpatch")); err != nil {
		t.Fatal(err)
	}
	top, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := os.Symlink(filepath.Join(top, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// whyNot says why a command of a page cannot run in this test, or "":
// what builds or boots kernels runs in the full tier's scripts/e2e.sh,
// building kpatch is what the test's binary stands for, and a tree the
// page only describes in prose is not there.
func whyNot(t *testing.T, cmd string) string {
	switch {
	case strings.Contains(cmd, "go build"):
		return "" // the test's binary stands for it (skipped, not run)
	case strings.Contains(cmd, "kpatch test build") || strings.Contains(cmd, "kpatch test qemu"):
		return "builds or boots kernels: scripts/e2e.sh runs it in the full tier"
	case strings.Contains(cmd, "kpatch send"):
		return "posts mail (git send-email): never run by a test"
	case strings.Contains(cmd, "/tmp/t "):
		return "the page describes its tree (/tmp/t) in prose"
	case strings.Contains(cmd, "chain64.core"):
		return "the page describes chain64.core in prose"
	case strings.HasPrefix(cmd, "gcc -m32"):
		testenv.Build32(t)
		testenv.Run32(t)
	case strings.HasPrefix(cmd, "gdb "):
		testenv.Tool(t, "gdb", "gdb")
	case strings.Contains(cmd, "kpatch tree"):
		testenv.KernelTree(t) // made once; a skip where Debian's sources are missing
	}
	return ""
}

// TestDocCommands runs every command block of README.md and docs/*.md
// that can run in the test tier, page by page in one working directory,
// and checks each command's output against the page: every line the
// page shows appears in the output, in order ("..." stands for lines or
// text the page leaves out; the working directory reads as /tmp/work).
// A command the page shows no output for must exit 0; one it shows
// output for (a refusal, verify's findings) is judged by that output. Blocks that build or boot kernels are skipped, saying so.
func TestDocCommands(t *testing.T) {
	byPage := map[string][]docBlock{}
	var order []string
	for _, b := range docBlocks(t) {
		if byPage[b.page] == nil {
			order = append(order, b.page)
		}
		byPage[b.page] = append(byPage[b.page], b)
	}
	for _, page := range order {
		t.Run(page, func(t *testing.T) {
			work := newDocWork(t)
			global := filepath.Join(t.TempDir(), "gitconfig")
			for _, b := range byPage[page] {
				t.Run(fmt.Sprintf("line %d", b.line), func(t *testing.T) {
					for _, c := range b.cmds {
						if why := whyNot(t, c.cmd); why != "" {
							t.Skipf("%s:%d: %s: %s", page, c.line, c.cmd, why)
						}
					}
					for _, c := range b.cmds {
						if strings.Contains(c.cmd, "go build") {
							continue
						}
						if dir := missingInput(work, c.cmd); dir != "" {
							t.Skipf("%s:%d: %s: the page's commands make no %s (the page makes it in prose)", page, c.line, c.cmd, dir)
						}
						runDocCommand(t, page, work, global, c)
					}
				})
			}
		})
	}
}

// missingInput returns a directory a command reads ("outgoing-x86/": a
// word ending in "/") that is not in the working directory, or "".
func missingInput(work, cmd string) string {
	for _, w := range strings.Fields(cmd) {
		if strings.HasSuffix(w, "/") && !strings.ContainsAny(w, "$\"'()") {
			if _, err := os.Stat(filepath.Join(work, w)); err != nil {
				return w
			}
		}
	}
	return ""
}

func runDocCommand(t *testing.T, page, work, global string, c docCommand) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+c.cmd)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+work+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_GLOBAL="+global, "GIT_CONFIG_NOSYSTEM=1", "COLUMNS=80")
	out, err := cmd.CombinedOutput()
	got := strings.ReplaceAll(string(out), work, docWork)
	shown := false
	for _, w := range c.want {
		shown = shown || strings.TrimSpace(w) != ""
	}
	if err != nil && !shown {
		t.Errorf("%s:%d: %s: %v\n%s", page, c.line, c.cmd, err, got)
		return
	}
	if missing, ok := inOrder(c.want, got); !ok {
		t.Errorf("%s:%d: %s: the page shows %q, the command's output does not have it there:\n%s", page, c.line, c.cmd, missing, got)
	}
}

// inOrder reports whether every line of want (but "..." lines and blank
// ones) is a line of got, in order; within a line "..." matches any text.
// It returns the first line not found.
func inOrder(want []string, got string) (string, bool) {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(got))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " "))
	}
	i := 0
	for _, w := range want {
		if w == "" || strings.TrimSpace(w) == "..." {
			continue
		}
		found := false
		for ; i < len(lines); i++ {
			if lineMatches(w, lines[i]) {
				found, i = true, i+1
				break
			}
		}
		if !found {
			return w, false
		}
	}
	return "", true
}

// lineMatches reports whether line is want, "..." in want matching any
// text (a line the page cut: "Use bitmask to determine which callbacks...").
func lineMatches(want, line string) bool {
	parts := strings.Split(want, "...")
	if len(parts) == 1 {
		return want == line
	}
	if !strings.HasPrefix(line, parts[0]) {
		return false
	}
	rest := line[len(parts[0]):]
	for _, p := range parts[1:] {
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return strings.HasSuffix(line, parts[len(parts)-1])
}
