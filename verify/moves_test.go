package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/plumbing/kernelsrc"
)

// treeMail writes, with the real git, the mail of a commit that edit
// makes to files of the 6.12 tree (edit gets their content at v6.12 and
// changes it in place), and reads it on that tree.
func treeMail(t *testing.T, tree *kernelsrc.Tree, subject, body string, paths []string, edit func(files map[string]string)) *Series {
	t.Helper()
	gittest.Require(t)
	files := map[string]string{}
	for _, p := range paths {
		c, err := tree.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(c)
	}
	repo := t.TempDir()
	gittest.Run(t, repo, "init", "-q")
	write := func() {
		for p, c := range files {
			f := filepath.Join(repo, p)
			os.MkdirAll(filepath.Dir(f), 0o755)
			if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Run(t, repo, "add", ".")
	}
	write()
	gittest.Run(t, repo, "commit", "-q", "-m", "base")
	edit(files)
	write()
	gittest.Run(t, repo, "commit", "-q", "-m", subject+"\n\n"+body+"\n\nSigned-off-by: A U Thor <author@example.org>")
	mbox := filepath.Join(t.TempDir(), "change.mbox")
	if err := os.WriteFile(mbox, gittest.Run(t, repo, "format-patch", "-1", "--stdout"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadMail(mbox, tree)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cutFunc removes the definition that starts with the line start (up to
// its closing brace at the start of a line, and one blank line after it)
// from text, and returns it and the rest.
func cutFunc(t *testing.T, text, start string) (fn, rest string) {
	t.Helper()
	i := strings.Index(text, "\n"+start)
	if i < 0 {
		t.Fatalf("no %q", start)
	}
	j := strings.Index(text[i:], "\n}\n")
	end := i + j + len("\n}\n")
	if strings.HasPrefix(text[end:], "\n") {
		end++
	}
	return text[i+1 : end], text[:i+1] + text[end:]
}

// TestMoveUnchanged: moves of real 6.12 functions that change nothing
// a reviewer reads as code are no MOVE_CHANGES_BODY: a comment's word
// fixed on the way, blank lines, and a show() moved with its store() (60%
// alike, so the two were paired with each other as well as with their own
// copies). The findings of every rule are the same on every run.
func TestMoveUnchanged(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const ina = "drivers/hwmon/ina3221.c"
	const other = "drivers/hwmon/ina2xx.c"
	cases := []struct {
		name  string
		paths []string
		edit  func(files map[string]string)
	}{
		{"show and store moved", []string{ina, other}, func(files map[string]string) {
			show, rest := cutFunc(t, files[ina], "static ssize_t ina3221_shunt_show(")
			store, rest := cutFunc(t, rest, "static ssize_t ina3221_shunt_store(")
			files[ina] = rest
			files[other] += "\n" + show + "\n" + store
		}},
		{"comment fixed", []string{ina, other}, func(files map[string]string) {
			fn, rest := cutFunc(t, files[ina], "static int ina3221_write_enable(")
			files[ina] = rest
			fn = strings.Replace(fn, "/* Bypass if enable status is not being changed */", "/* Bypass if the enable status does not change */", 1)
			files[other] += "\n" + fn
		}},
		{"blank lines", []string{ina, other}, func(files map[string]string) {
			fn, rest := cutFunc(t, files[ina], "static int ina3221_write_enable(")
			files[ina] = rest
			fn = strings.Replace(fn, "\t/* Enable or disable the channel */\n", "\n\t/* Enable or disable the channel */\n\n", 1)
			files[other] += "\n" + fn
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "hwmon: ina3221: move code", "Move it.", c.paths, c.edit)
			first := Run(s, Options{})
			if got := only(first, "MOVE_CHANGES_BODY"); len(got) != 0 {
				t.Errorf("MOVE_CHANGES_BODY on a move that changes no code: %v", got)
			}
			for i := 0; i < 4; i++ {
				if again := Run(s, Options{}); !reflect.DeepEqual(again, first) {
					t.Fatalf("run %d differs:\n%v\nfirst:\n%v", i+2, again, first)
				}
			}
		})
	}
	t.Run("local renamed", func(t *testing.T) {
		// a variable renamed throughout the moved function is no change
		// when the message says so, and still one when it does not
		for _, c := range []struct {
			body string
			want int
		}{
			{"Move it beside ina2xx's and rename its variable tmp to val on the way.", 0},
			{"Move it beside ina2xx's.", 1},
		} {
			s := treeMail(t, tree, "hwmon: ina3221: move the enable routine", c.body, []string{ina, other}, func(files map[string]string) {
				fn, rest := cutFunc(t, files[ina], "static int ina3221_write_enable(")
				files[ina] = rest
				files[other] += "\n" + regexp.MustCompile(`\btmp\b`).ReplaceAllString(fn, "val")
			})
			fs := Run(s, Options{})
			if got := append(only(fs, "MOVE_CHANGES_BODY"), only(fs, "MOVE_AND_CHANGE")...); len(got) != c.want {
				t.Errorf("message %q: %v, want %d", c.body, got, c.want)
			}
		}
	})
	t.Run("code changed", func(t *testing.T) {
		// still found: a statement added to the moved function
		s := treeMail(t, tree, "hwmon: ina3221: move code", "Move it.", []string{ina, other}, func(files map[string]string) {
			fn, rest := cutFunc(t, files[ina], "static int ina3221_write_enable(")
			files[ina] = rest
			fn = strings.Replace(fn, "\t/* Enable or disable the channel */\n", "\t/* Enable or disable the channel */\n\tdev_dbg(dev, \"channel %d\\n\", channel);\n", 1)
			files[other] += "\n" + fn
		})
		got := only(Run(s, Options{}), "MOVE_CHANGES_BODY")
		if len(got) != 1 || !strings.Contains(got[0].Message, "dev_dbg") {
			t.Errorf("MOVE_CHANGES_BODY %v, want the added dev_dbg", fmt.Sprint(got))
		}
	})
}

// TestMoveStatedPurpose: a moved function changed as the commit message
// says ("log each channel it enables", the added line logs the channel)
// is a described change, MOVE_AND_CHANGE (a warning), as when the message
// names the function; it was the error MOVE_CHANGES_BODY. The same change
// under a message that says nothing of it stays the error
// (TestMoveUnchanged's "code changed").
func TestMoveStatedPurpose(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const ina, other = "drivers/hwmon/ina3221.c", "drivers/hwmon/ina2xx.c"
	s := treeMail(t, tree, "hwmon: share the enable routine and log it", "Put the enable routine beside ina2xx's, and log each channel it enables.", []string{ina, other}, func(files map[string]string) {
		fn, rest := cutFunc(t, files[ina], "static int ina3221_write_enable(")
		files[ina] = rest
		fn = strings.Replace(fn, "\t/* Enable or disable the channel */\n", "\t/* Enable or disable the channel */\n\tdev_dbg(dev, \"channel %d\\n\", channel);\n", 1)
		files[other] += "\n" + fn
	})
	fs := Run(s, Options{})
	if got := only(fs, "MOVE_CHANGES_BODY"); len(got) != 0 {
		t.Errorf("MOVE_CHANGES_BODY on the stated change: %v", got)
	}
	if got := only(fs, "MOVE_AND_CHANGE"); len(got) != 1 || got[0].Severity != Warning {
		t.Errorf("MOVE_AND_CHANGE %v, want one warning", got)
	}
}

// TestMoveReplacedNotRenamed: a function removed with its callers and a
// new one of another name whose body is alike, called from elsewhere
// (BBRv3 replacing 6.12's bbr_advance_cycle_phase()), is no rename, so no
// MOVE_CHANGES_BODY, nor is one whose calls become calls of the new one
// and which gains a call; the same function renamed with its callers and
// changed on the way still is.
func TestMoveReplacedNotRenamed(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const bbr = "net/ipv4/tcp_bbr.c"
	const advance = "static void bbr_advance_cycle_phase(struct sock *sk)"
	changed := func(fn, name string) string {
		fn = strings.Replace(fn, "bbr_advance_cycle_phase", name, 1)
		return strings.Replace(fn, "\tbbr->cycle_mstamp = tp->delivered_mstamp;\n", "\tbbr->cycle_mstamp = tp->delivered_mstamp;\n\tbbr->prior_cwnd = 0;\n", 1)
	}
	cases := []struct {
		name, subject string
		want          int
		edit          func(files map[string]string)
	}{
		{"replaced", "tcp_bbr: probe bandwidth from the main loop", 0, func(files map[string]string) {
			fn, rest := cutFunc(t, files[bbr], advance)
			rest = strings.Replace(rest, "\t\tbbr_advance_cycle_phase(sk);\n", "\t\tbbr->cycle_idx = 0;\n", 1)
			rest = strings.Replace(rest, "\tbbr_advance_cycle_phase(sk);\t/* flip to next phase of gain cycle */\n", "", 1)
			main := "__bpf_kfunc static void bbr_main(struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)\n{\n"
			rest = strings.Replace(rest, main, changed(fn, "bbr_start_bw_probe")+"\n"+main+"\tbbr_start_bw_probe(sk);\n", 1)
			files[bbr] = rest
		}},
		{"replaced, its calls alike", "tcp_bbr: probe bandwidth from the main loop", 0, func(files map[string]string) {
			// BBRv3's bbr_lt_bw_sampling(): its calls became calls of
			// another function, which has a call more: a rename adds none
			fn, rest := cutFunc(t, files[bbr], advance)
			rest = strings.ReplaceAll(rest, "bbr_advance_cycle_phase(sk);", "bbr_start_bw_probe(sk);")
			main := "__bpf_kfunc static void bbr_main(struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)\n{\n"
			rest = strings.Replace(rest, main, main+"\tbbr_start_bw_probe(sk);\n", 1)
			next := "static bool bbr_is_next_cycle_phase(struct sock *sk,\n"
			files[bbr] = strings.Replace(rest, next, changed(fn, "bbr_start_bw_probe")+"\n"+next, 1)
		}},
		{"renamed with its callers", "tcp_bbr: rename the cycle advance", 1, func(files map[string]string) {
			fn, rest := cutFunc(t, files[bbr], advance)
			rest = strings.ReplaceAll(rest, "bbr_advance_cycle_phase(sk);", "bbr_next_cycle_phase(sk);")
			next := "static bool bbr_is_next_cycle_phase(struct sock *sk,\n"
			files[bbr] = strings.Replace(rest, next, changed(fn, "bbr_next_cycle_phase")+"\n"+next, 1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, c.subject, "As the subject says.", []string{bbr}, c.edit)
			got := only(Run(s, Options{}), "MOVE_CHANGES_BODY")
			if len(got) != c.want {
				t.Fatalf("MOVE_CHANGES_BODY %v, want %d", got, c.want)
			}
			if c.want > 0 && !strings.Contains(got[0].Message, "renames bbr_advance_cycle_phase() to bbr_next_cycle_phase()") {
				t.Errorf("MOVE_CHANGES_BODY says %q, want the rename", got[0].Message)
			}
		})
	}
}
