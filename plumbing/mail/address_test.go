package mail

import (
	"fmt"
	netmail "net/mail"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// Names that need each of git's treatments: none, RFC 822 quoting (with
// escapes), RFC 2047 (one and several encoded words, and the "=?" that
// must not be taken for one), wrapping of a long ASCII name, whitespace
// kept as it is.
var gitNames = []string{
	"Josh Poimboeuf",
	"Jose E. Marchesi",
	"H. Peter Anvin",
	"Liang, Kan",
	`Back\slash "Q" Name`,
	"S. O'Neil (Google)",
	"Uwe Kleine-König",
	"Jöhn \"The\" Dœ von Extremely-Long-Name Ünïcode Person Of Many Names",
	"Under_score =?x? Name",
	"An Extremely Long ASCII Name That Goes On And On Past The Limit Surely Yes",
	"Averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword Name",
	"Tab\tName  Two Spaces",
}

// fromHeader writes the From header as git format-patch writes it for the
// same author, byte for byte.
func TestFromHeaderMatchesGit(t *testing.T) {
	gittest.Require(t)
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "master")
	// One commit per name, all made by one git fast-import and written
	// by one git format-patch.
	var stream strings.Builder
	var authors []string
	for i, name := range gitNames {
		addr := "a" + string(rune('a'+i)) + "@example.org"
		if i == 9 {
			addr = "a.rather.long.address.for.the.long.name@example.org"
		}
		authors = append(authors, name+" <"+addr+">")
		fmt.Fprintf(&stream, "commit refs/heads/master\nauthor %s 1700000000 +0000\ncommitter t <t@example.com> 1700000000 +0000\ndata 7\ncommit\n", authors[i])
		fmt.Fprintf(&stream, "M 100644 inline f\ndata %d\n%s\n\n", len(name), name)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Environ(dir), strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	// git's own record of the names (it trims some characters at the
	// ends of a name, none of these).
	logged := strings.Split(strings.TrimSuffix(string(gittest.Run(t, dir, "-c", "i18n.logOutputEncoding=UTF-8", "log", "--reverse", "--format=%an <%ae>%x00")), "\x00\n"), "\x00\n")
	if len(logged) != len(authors) {
		t.Fatalf("git log shows %d commits, want %d", len(logged), len(authors))
	}
	mails := regexp.MustCompile(`(?m)^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\n`).Split(string(gittest.Run(t, dir, "format-patch", "--root", "--stdout", "master")), -1)[1:]
	if len(mails) != len(authors) {
		t.Fatalf("git format-patch wrote %d mails, want %d", len(mails), len(authors))
	}
	for i, author := range authors {
		if logged[i] != author {
			t.Fatalf("git recorded %q for %q", logged[i], author)
		}
		want := regexp.MustCompile(`(?m)^From: .*\n([ \t].*\n)*`).FindString(mails[i])
		if got := fromHeader(author); got != want {
			t.Errorf("%q:\n got %q\nwant %q", gitNames[i], got, want)
		}
	}
}

// Every name written into a To or Cc line, and the one-line form the
// recipient lists hold, parse back with net/mail to the same name and
// address; writing either again changes nothing.
func TestAddressRoundTrip(t *testing.T) {
	for i, name := range gitNames {
		addr := "a" + string(rune('a'+i)) + "@example.org"
		for _, in := range []string{name + " <" + addr + ">", rfc822Quote(name) + " <" + addr + ">"} {
			line := NormalizeAddress(in)
			folded := headerAddress(in)
			if strings.Contains(line, "\n") || unfold(folded) != line {
				t.Errorf("%q: list form %q, header form %q", in, line, folded)
			}
			for _, s := range []string{line, folded} {
				a, err := netmail.ParseAddress(unfold(s))
				wantName := name
				if strings.Contains(name, "\t") {
					wantName = strings.Join(strings.Fields(name), " ") // whitespace in a phrase
					if needsRFC822Quoting(name) || needsRFC2047(name) {
						wantName = name
					}
				}
				if err != nil || a.Address != addr || a.Name != wantName {
					t.Errorf("%q written as %q parses as %v %v", in, s, a, err)
				}
				if again := headerAddress(s); again != folded {
					t.Errorf("%q: written again %q, was %q", in, again, folded)
				}
			}
			for _, l := range strings.Split("To: "+folded, "\n") {
				if len(l) > 78 && !strings.Contains(l, "Averyvery") {
					t.Errorf("%q: line of %d columns: %q", in, len(l), l)
				}
			}
		}
	}
	for _, q := range []struct {
		in   string
		want bool
	}{{`"a b"`, true}, {`"a \" b"`, true}, {`"a" and "b"`, false}, {`"a\"`, false}, {`a`, false}, {`"`, false}} {
		if got := isQuotedString(q.in); got != q.want {
			t.Errorf("isQuotedString(%s) = %v", q.in, got)
		}
	}
	for _, bad := range []string{"not an address", "Name <>", "<a@b> trailing", "Name <not an address>"} {
		if _, _, err := ParseAddress(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// simpleAddrSpec's quick yes is net/mail's yes, with the same address.
func TestSimpleAddrSpec(t *testing.T) {
	for _, a := range []string{"jemarch@gnu.org", "linux-kernel@vger.kernel.org", "a.b+c@x-y.example", "o'neil@example.org",
		"a..b@x.org", ".a@x.org", "a@x..org", "a b@x.org", `"q"@x.org`, "a@[1.2.3.4]", "@x.org", "a@", "a@b@c", "ü@x.org", "a@x_y.org"} {
		simple := simpleAddrSpec(a)
		m, err := netmail.ParseAddress("<" + a + ">")
		if simple && (err != nil || m.Address != a) {
			t.Errorf("%q: simple, but net/mail says %v %v", a, m, err)
		}
		if !simple && strings.Count(a, "@") == 1 && err == nil && !strings.ContainsAny(a, `"[ü_`) {
			t.Errorf("%q: net/mail takes it, simpleAddrSpec does not", a)
		}
	}
}

// BenchmarkAddressHeader writes the To header of the cover letter of v11
// as generated on 6.12 (the cost per message of writing recipients).
func BenchmarkAddressHeader(b *testing.B) {
	to := []string{"Josh Poimboeuf <jpoimboe@kernel.org>", "Steven Rostedt <rostedt@goodmis.org>", "Arnd Bergmann <arnd@arndb.de>",
		"Ingo Molnar <mingo@redhat.com>", "Peter Zijlstra <peterz@infradead.org>", "x86@kernel.org", `"H. Peter Anvin" <hpa@zytor.com>`,
		`"Liang, Kan" <kan.liang@linux.intel.com>`, "Jose E. Marchesi <jemarch@gnu.org>", "linux-kernel@vger.kernel.org"}
	for i := 0; i < b.N; i++ {
		addressHeader("To", to, false)
	}
}
