package series_test

import (
	"bufio"
	"context"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kpatch/internal/gittest"
	"kpatch/internal/seriestest"
	"kpatch/series"
	"kpatch/templates/linux"
)

// recipient is an address as a person writes it in one of the places
// kpatch takes recipients from, and the display name and address every
// message must give back for it.
type recipient struct {
	in, name, addr string
}

var (
	// Added to the Cc line of the series description (templates/linux/v11/series).
	specCc = []recipient{
		{`"Weigelt, Enrico" <info@metux.net>`, "Weigelt, Enrico", "info@metux.net"},
		{`Uwe Kleine-König <u.kleine-koenig@pengutronix.de>`, "Uwe Kleine-König", "u.kleine-koenig@pengutronix.de"},
		{`Back\slash "Q" Name <bq@example.org>`, `Back\slash "Q" Name`, "bq@example.org"},
		{`<angle.only@example.org>`, "", "angle.only@example.org"},
	}
	// Given as Options.To (--to) and Options.Cc (--cc).
	optTo = []recipient{
		{`Zoë Ünïcode-Person With A Rather Long Display Name Indeed, Surely <zoe@example.org>`, "Zoë Ünïcode-Person With A Rather Long Display Name Indeed, Surely", "zoe@example.org"},
		{`An Extremely Long ASCII Name That Goes On And On Past The Limit Surely <very.long@example.org>`, "An Extremely Long ASCII Name That Goes On And On Past The Limit Surely", "very.long@example.org"},
	}
	optCc = []recipient{
		{`=?UTF-8?q?Andr=C3=A9_Dupont?= <andre@example.org>`, "André Dupont", "andre@example.org"},
		{`S. O'Neil <oneil@example.org>`, "S. O'Neil", "oneil@example.org"},
		{`plain@example.org`, "", "plain@example.org"},
	}
)

// addressSeries generates v11 on the Debian tree with the recipients above
// added, from a copy of the series description, and returns it with the
// names every address of it must carry: the table's, and for the others
// the names that the series description's and MAINTAINERS' own text give
// them (read here with a regular expression, not with kpatch's parsers).
func addressSeries(t *testing.T) (*series.Series, map[string][]string) {
	t.Helper()
	tree := debianTree(t)
	dir := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(dir); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "v11", "series")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	nameAddr := regexp.MustCompile(`^\s*(.*?)\s*<([^<>]+)>`)
	add := func(name, addr string) {
		name = strings.TrimSpace(name)
		if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
			name = strings.ReplaceAll(name[1:len(name)-1], `\"`, `"`)
		}
		names[strings.ToLower(addr)] = append(names[strings.ToLower(addr)], name)
	}
	var extra []string
	for _, r := range specCc {
		extra = append(extra, r.in)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cc: "); ok || strings.HasPrefix(l, "To: ") {
			if !ok {
				v = strings.TrimPrefix(l, "To: ")
			}
			// The posted list has no quoted commas: split it plainly.
			for _, a := range strings.Split(v, ",") {
				if m := nameAddr.FindStringSubmatch(a); m != nil {
					add(m[1], m[2])
				} else {
					add("", strings.TrimSpace(a))
				}
			}
			if ok {
				l += ", " + strings.Join(extra, ", ")
			}
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	var to, cc []string
	for _, r := range optTo {
		to = append(to, r.in)
	}
	for _, r := range optCc {
		cc = append(cc, r.in)
	}
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: 11, SpecDir: dir, To: to, Cc: cc})
	if err != nil {
		t.Fatal(err)
	}
	// MAINTAINERS as the series leaves it (recipients count the sections
	// it adds).
	m, ok := s.FinalFiles()["MAINTAINERS"]
	if !ok {
		m = gittest.Run(t, tree, "show", "v6.12:MAINTAINERS")
	}
	entry := regexp.MustCompile(`^[MRL]:\s*(.*)$`)
	sc := bufio.NewScanner(strings.NewReader(string(m)))
	for sc.Scan() {
		e := entry.FindStringSubmatch(sc.Text())
		if e == nil {
			continue
		}
		if mm := nameAddr.FindStringSubmatch(e[1]); mm != nil {
			add(mm[1], mm[2])
		} else {
			add("", strings.Fields(e[1])[0])
		}
	}
	for _, r := range append(append(append([]recipient{}, specCc...), optTo...), optCc...) {
		names[strings.ToLower(r.addr)] = []string{r.name}
	}
	return s, names
}

func headerOf(t *testing.T, m series.Message) mail.Header {
	t.Helper()
	_, text, _ := strings.Cut(m.Text, "\n") // the "From <sha>" line
	msg, err := mail.ReadMessage(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", m.Filename, err)
	}
	return msg.Header
}

// Every address header of every message parses with net/mail and gives
// back the names and addresses as they were written, wherever they came
// from; every line of them fits in 78 columns; the added recipients are
// in every message.
func TestAddressHeadersParse(t *testing.T) {
	s, names := addressSeries(t)
	msgs := seriestest.Messages(t, s)
	seen := map[string]int{}
	for _, m := range msgs {
		h := headerOf(t, m)
		for _, key := range []string{"From", "To", "Cc"} {
			list, err := h.AddressList(key)
			if err != nil {
				t.Errorf("%s: %s: %v\n%s", m.Filename, key, err, h.Get(key))
				continue
			}
			if key == "From" && len(list) != 1 {
				t.Errorf("%s: From holds %d addresses", m.Filename, len(list))
			}
			if key != "From" && len(list) == 0 {
				t.Errorf("%s: no %s addresses", m.Filename, key)
			}
			for _, a := range list {
				want, ok := names[strings.ToLower(a.Address)]
				if !ok && key == "From" {
					want, ok = []string{"Steven Rostedt", "Josh Poimboeuf"}, true
				}
				if !ok {
					t.Errorf("%s: %s: %s comes from nowhere", m.Filename, key, a)
					continue
				}
				if !contains(want, a.Name) {
					t.Errorf("%s: %s: %s is named %q, written as %q", m.Filename, key, a.Address, a.Name, want)
				}
				seen[a.Address]++
			}
		}
		// The header lines, folded, fit in 78 columns.
		head, _, _ := strings.Cut(m.Text, "\n\n")
		for _, l := range strings.Split(head, "\n") {
			if len(l) > 78 && !strings.HasPrefix(l, "From ") {
				t.Errorf("%s: header line of %d columns: %q", m.Filename, len(l), l)
			}
		}
	}
	for _, r := range append(append(append([]recipient{}, specCc...), optTo...), optCc...) {
		if seen[r.addr] != len(msgs) {
			t.Errorf("%s is in %d of the %d messages", r.addr, seen[r.addr], len(msgs))
		}
	}
	// The posted v11's Cc, written as RFC 5322 wants it.
	if !strings.Contains(msgs[0].Text, "\n    \"Jose E. Marchesi\" <jemarch@gnu.org>,\n") {
		t.Error(`the cover letter does not Cc "Jose E. Marchesi" <jemarch@gnu.org>`)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// git send-email --dry-run takes every message and lists every recipient
// with its name unchanged: it rewrites names that break RFC 5322 (it made
// "Jose E . Marchesi" of an unquoted "Jose E. Marchesi").
func TestSendEmailDryRun(t *testing.T) {
	gittest.Require(t)
	s, names := addressSeries(t)
	msgs := seriestest.Messages(t, s)
	dir := t.TempDir()
	var files []string
	for _, m := range msgs {
		p := filepath.Join(dir, m.Filename)
		if err := os.WriteFile(p, []byte(m.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	from := headerOf(t, msgs[0]).Get("From")
	args := []string{"send-email", "--dry-run", "--confirm=never", "--no-validate", "--no-annotate",
		"--smtp-server=smtp.invalid", "--from=" + from,
		// The recipients of the headers only, none from the bodies.
		"--suppress-cc=self", "--suppress-cc=author", "--suppress-cc=body", "--suppress-cc=cccmd"}
	cmd := exec.Command("git", append(args, files...)...)
	cmd.Dir = dir
	cmd.Env = gittest.Environ(dir)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case strings.Contains(text, "'send-email' is not a git command"):
		t.Fatal("git send-email is not installed: install Debian's git-email (scripts/setup.sh does)")
	case strings.Contains(text, "module is not here"):
		t.Fatalf("git send-email lacks a Perl module: install Debian's libmailtools-perl (scripts/setup.sh does):\n%s", text)
	case err != nil:
		t.Fatalf("git send-email --dry-run: %v\n%s", err, text)
	}
	blocks := strings.Split(text, "Dry-OK. Log says:\n")[1:]
	if len(blocks) != len(msgs) {
		t.Fatalf("git send-email sent %d messages, want %d:\n%s", len(blocks), len(msgs), text)
	}
	for i, blk := range blocks {
		m := msgs[i]
		h := headerOf(t, m)
		// The envelope: every address of To and Cc, once.
		want := map[string]bool{}
		for _, key := range []string{"To", "Cc"} {
			list, _ := h.AddressList(key)
			for _, a := range list {
				want[strings.ToLower(a.Address)] = true
			}
		}
		rcpt := map[string]bool{}
		for _, l := range strings.Split(blk, "\n") {
			if a, ok := strings.CutPrefix(l, "RCPT TO:<"); ok {
				rcpt[strings.ToLower(strings.TrimSuffix(a, ">"))] = true
			}
		}
		for a := range want {
			if !rcpt[a] {
				t.Errorf("%s: git send-email does not send to %s", m.Filename, a)
			}
		}
		for a := range rcpt {
			if !want[a] {
				t.Errorf("%s: git send-email sends to %s, which is not in To or Cc", m.Filename, a)
			}
		}
		// The headers it writes: from "From:" to the blank line.
		i := strings.Index(blk, "\nFrom: ")
		end := strings.Index(blk, "\n\n")
		if i < 0 || end < i {
			t.Fatalf("%s: no headers in git send-email's log:\n%s", m.Filename, blk)
		}
		sent, err := mail.ReadMessage(strings.NewReader(blk[i+1:end] + "\n\n"))
		if err != nil {
			t.Fatalf("%s: git send-email's headers: %v\n%s", m.Filename, err, blk)
		}
		for _, key := range []string{"To", "Cc"} {
			list, err := sent.Header.AddressList(key)
			if err != nil {
				t.Errorf("%s: git send-email's %s: %v\n%s", m.Filename, key, err, sent.Header.Get(key))
				continue
			}
			ours, _ := h.AddressList(key)
			if len(list) != len(ours) {
				t.Errorf("%s: git send-email's %s holds %d addresses, ours %d", m.Filename, key, len(list), len(ours))
			}
			for _, a := range list {
				if want := names[strings.ToLower(a.Address)]; !contains(want, a.Name) {
					t.Errorf("%s: git send-email's %s names %s %q, want %q", m.Filename, key, a.Address, a.Name, want)
				}
			}
		}
	}
}

// editSpec replaces old with new, once, in file of the series description
// at dir.
func editSpec(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "v11", file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The headers kpatch writes for authors and subjects that need quoting or
// RFC 2047, and for non-ASCII commit messages, are git format-patch's, byte
// for byte: From, Date, Subject and the MIME headers of every patch, and
// in the cover letter the MIME headers followed by To and Cc (which git
// writes as it is given them: kpatch's recipients, folded its way).
func TestHeadersMatchGitFormatPatch(t *testing.T) {
	gittest.Require(t)
	dir := debianTree(t)
	clone := filepath.Join(t.TempDir(), "linux")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	spec := filepath.Join(t.TempDir(), "spec")
	if err := linux.Export(spec); err != nil {
		t.Fatal(err)
	}
	// A name with a period, one with RFC 2047 long enough to take two
	// encoded words, a subject that is not ASCII, and a commit message
	// that is not ASCII.
	editSpec(t, spec, "user-api.patch", "Author: Josh Poimboeuf <", "Author: Josh P. Poimboeuf <")
	editSpec(t, spec, "fp.patch", "Author: Josh Poimboeuf <", "Author: Jösh Pöimboeuf-Ünïcode With A Display Name Long Enough To Fold <")
	editSpec(t, spec, "compat-fp.patch", "Subject: unwind_user: Add compat mode frame pointer support", "Subject: unwind_user: Add compat mode frame pointer support für ïa32 (naïve) and a title long enough to be folded")
	editSpec(t, spec, "faultable.patch", "\n\n", "\n\nZoë says hello.\n\n")
	var to, cc []string
	for _, r := range optTo {
		to = append(to, r.in)
	}
	for _, r := range optCc {
		cc = append(cc, r.in)
	}
	s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: clone, Base: "v6.12", Version: 11, SpecDir: spec, To: to, Cc: cc})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBranch("v11"); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	args := []string{"-c", "core.attributesFile=" + filepath.Join(dir, ".gitattributes"), "-c", "core.abbrev=12",
		"format-patch", "-q", "--cover-letter", "--thread", "-v", "11", "--base=v6.12", "-o", out}
	// git writes --to and --cc as it gets them: give it the addresses as
	// kpatch's cover letter writes them (folded where they are long).
	msgs := seriestest.Messages(t, s)
	for _, key := range []string{"To", "Cc"} {
		block := regexp.MustCompile(`(?m)^` + key + `: (.*\n([ \t].*\n)*)`).FindStringSubmatch(msgs[0].Text)
		if block == nil {
			t.Fatalf("the cover letter has no %s", key)
		}
		for _, a := range strings.Split(strings.TrimSuffix(block[1], "\n"), ",\n    ") {
			args = append(args, "--"+strings.ToLower(key)+"="+a)
		}
	}
	gittest.Run(t, clone, append(args, "v6.12..v11")...)
	headers := func(text string) string {
		h, _, _ := strings.Cut(text, "\n\n")
		return h + "\n"
	}
	drop := regexp.MustCompile(`(?mi)^(Message-Id|In-Reply-To|References): .*\n`)
	dropRcpt := regexp.MustCompile(`(?m)^(To|Cc): .*\n([ \t].*\n)*`)
	for _, m := range msgs {
		gb, err := os.ReadFile(filepath.Join(out, m.Filename))
		if err != nil {
			t.Errorf("git did not write %s: %v", m.Filename, err)
			continue
		}
		got, want := drop.ReplaceAllString(headers(m.Text), ""), drop.ReplaceAllString(headers(string(gb)), "")
		if m.Number == 0 {
			// git's cover letter has its own From and a placeholder
			// subject: compare what follows the subject.
			cut := func(h string) string {
				i := strings.Index(h, "\nSubject: ")
				j := strings.Index(h[i+1:], "\n") + i + 1
				for j+1 < len(h) && (h[j+1] == ' ' || h[j+1] == '\t') {
					j = strings.Index(h[j+1:], "\n") + j + 1
				}
				return h[j+1:]
			}
			got, want = cut(got), cut(want)
			if !strings.HasPrefix(got, "MIME-Version: 1.0\n") || !strings.Contains(got, "\nTo: ") {
				t.Errorf("cover letter: no MIME headers before To:\n%s", got)
			}
		} else {
			got, want = dropRcpt.ReplaceAllString(got, ""), dropRcpt.ReplaceAllString(want, "")
		}
		if got != want {
			t.Errorf("%s: headers differ from git format-patch's:\n%s", m.Filename, firstDiff(got, want))
		}
	}
	// What the edits are meant to show is there.
	for n, want := range map[int]string{
		1: "\nFrom: \"Josh P. Poimboeuf\" <jpoimboe@kernel.org>\n",
		2: "\nFrom: =?UTF-8?q?J=C3=B6sh=20P=C3=B6imboeuf-=C3=9Cn=C3=AFcode=20With=20A=20?=\n =?UTF-8?q?Display=20",
		3: "\nSubject: [PATCH v11 03/14] =?UTF-8?q?unwind=5Fuser:=20Add=20compat=20mode?=\n =?UTF-8?q?",
		4: "\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n",
	} {
		if !strings.Contains(msgs[n].Text, want) {
			t.Errorf("patch %d does not hold %q:\n%s", n, want, headers(msgs[n].Text))
		}
	}
	for _, n := range []int{1, 2, 5} {
		if strings.Contains(headers(msgs[n].Text), "MIME-Version") {
			t.Errorf("patch %d has MIME headers, but its commit message is ASCII", n)
		}
	}
}

// An address of the series description that is none is refused, naming
// the field, and nothing is generated.
func TestSpecBadAddress(t *testing.T) {
	tree := debianTree(t)
	for _, tc := range []struct{ field, bad string }{
		{"To", "not an address"},
		{"Cc", "Name <not an address>"},
	} {
		dir := filepath.Join(t.TempDir(), "spec")
		if err := linux.Export(dir); err != nil {
			t.Fatal(err)
		}
		editSpec(t, dir, "series", "\n"+tc.field+": ", "\n"+tc.field+": "+tc.bad+", ")
		s, err := seriestest.Generate(context.Background(), seriestest.Options{Tree: tree, Base: "v6.12", Version: 11, SpecDir: dir})
		want := "series description v11, " + tc.field + ": \"" + tc.bad + "\" is not a mail address"
		if err == nil || !strings.Contains(err.Error(), want) || s != nil {
			t.Errorf("%s %q: %v, want an error saying %s", tc.field, tc.bad, err, want)
		}
	}
}
