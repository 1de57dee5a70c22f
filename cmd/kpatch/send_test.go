package main

import (
	"bytes"
	"encoding/json"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kpatch/internal/smtpsink"
	"kpatch/internal/testenv"
	"kpatch/plumbing/sendemail"
	"kpatch/series"
)

// v16Errors are the IDs of the errors kpatch verify finds in v16 (and so
// in a v17 started from it) generated on Debian 6.12.
const v16Errors = "NMI_UNSAFE,NOINSTR_ACCESS,TASK_CURRENT"

// TestSend posts v17 of a spec copy with the real git send-email to an
// SMTP sink on 127.0.0.1: refused while verify finds errors (exit 2, one
// line, nothing sent); --dry-run and --reflect record nothing, the
// reflected mail goes to the sender alone; the send with verify passing
// (its errors ignored as kpatch verify --ignore would) delivers every
// message to at least the recipients its headers name, and records the
// Message-Ids, Date and base that arrived; a second send is refused; and
// kpatch revision new links v17 as it arrived.
func TestSend(t *testing.T) {
	if !sendemail.Installed() {
		testenv.Missing(t, "git send-email", "apt-get install git-email libmailtools-perl")
	}
	tree := testenv.KernelTree(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := specCopy(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"revision", "new", "--spec", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	sink := smtpsink.Start(t)
	send := func(args ...string) int {
		stdout.Reset()
		stderr.Reset()
		return run(append([]string{"send", "--spec", dir, "--tree", tree, "--base", "v6.12", "--smtp-server", sink.Host, "--smtp-server-port", sink.Port}, args...), &stdout, &stderr)
	}
	v17 := filepath.Join(dir, "v17", "series")
	unsent, _ := os.ReadFile(v17)

	if code := send(); code != 2 || strings.Count(stderr.String(), "\n") != 1 ||
		!strings.Contains(stderr.String(), "v17: kpatch verify finds 3 errors on this tree (v6.12): not sent; see them with kpatch verify --spec "+dir) {
		t.Errorf("unverified: exit %d, %q", code, stderr.String())
	}
	if code := send("--dry-run"); code != 0 || strings.Count(stdout.String(), "\n") != 11 || !strings.Contains(stderr.String(), "11 messages not sent (--dry-run), verify: 3 errors") {
		t.Errorf("--dry-run: exit %d, %s%s", code, stdout.String(), stderr.String())
	}
	if n := len(sink.Messages()); n != 0 {
		t.Fatalf("%d messages sent before the send", n)
	}
	if code := send("--reflect"); code != 0 {
		t.Fatalf("--reflect: exit %d, %s", code, stderr.String())
	}
	for i, m := range sink.Messages() {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.To, []string{"rostedt@kernel.org"}) || msg.Header.Get("Cc") != "" || msg.Header.Get("X-Kpatch-Reflected-To") == "" {
			t.Errorf("reflected message %d went to %q, Cc %q", i, m.To, msg.Header.Get("Cc"))
		}
	}
	if b, _ := os.ReadFile(v17); !bytes.Equal(b, unsent) {
		t.Error("--dry-run or --reflect changed v17/series")
	}
	reflected := len(sink.Messages())

	// What kpatch gen writes for v17 names the recipients of each message.
	out := filepath.Join(t.TempDir(), "out")
	if code := run([]string{"gen", "--spec", dir, "--tree", tree, "--base", "v6.12", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	if code := send("--ignore", v16Errors, "--json"); code != 0 {
		t.Fatalf("send: exit %d, %s", code, stderr.String())
	}
	var rep struct {
		Messages []struct {
			MessageID string `json:"message_id"`
		}
		Recorded string
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Messages) != 11 || rep.Recorded != v17 {
		t.Fatalf("report %v: %s", err, stdout.String())
	}
	got := sink.Messages()[reflected:]
	if len(got) != 11 {
		t.Fatalf("the sink received %d messages, want 11", len(got))
	}
	gen, _ := filepath.Glob(filepath.Join(out, "*.patch"))
	slices.Sort(gen)
	var ids []string
	var coverDate string
	for i, m := range got {
		msg, err := mail.ReadMessage(strings.NewReader(m.Data))
		if err != nil {
			t.Fatal(err)
		}
		id := strings.Trim(msg.Header.Get("Message-Id"), "<>")
		ids = append(ids, id)
		if i == 0 {
			coverDate = msg.Header.Get("Date")
		}
		if id != rep.Messages[i].MessageID {
			t.Errorf("message %d arrived as %s, reported as %s", i, id, rep.Messages[i].MessageID)
		}
		b, _ := os.ReadFile(gen[i])
		g, err := mail.ReadMessage(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if gid := strings.Trim(g.Header.Get("Message-Id"), "<>"); gid != id {
			t.Errorf("message %d: kpatch gen writes %s, %s arrived", i, gid, id)
		}
		for _, h := range []string{"To", "Cc"} {
			addrs, _ := g.Header.AddressList(h)
			for _, a := range addrs {
				if !slices.Contains(m.To, a.Address) {
					t.Errorf("message %d: %s %s is not among the recipients", i, h, a.Address)
				}
			}
		}
	}
	sp, err := series.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := sp.Revision(17)
	sentDate, _ := mail.ParseDate(coverDate)
	if !slices.Equal(r.MessageIDs, ids) || !r.Date.Equal(sentDate) || r.Base != "v6.12" {
		t.Errorf("recorded %q, %v, %s; arrived %q, %v", r.MessageIDs, r.Date, r.Base, ids, sentDate)
	}
	if code := send("--ignore", v16Errors); code != 2 || !strings.Contains(stderr.String(), "v17 was posted already, as "+ids[0]) {
		t.Errorf("second send: exit %d, %q", code, stderr.String())
	}
	if code := run([]string{"revision", "new", "--spec", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "v18", "user-api.notes"))
	cover, _ := os.ReadFile(filepath.Join(dir, "v18", "series"))
	if !strings.HasPrefix(string(notes), "Changes since v17: https://lore.kernel.org/all/"+ids[1]+"/\n") ||
		!strings.Contains(string(cover), "Changes since v17: https://lore.kernel.org/all/"+ids[0]+"/\n") {
		t.Errorf("v18 links:\n%s\n%s", notes, cover)
	}
}

// TestSendUsage: contradicting or missing flags are refused with exit 2
// before anything is generated.
func TestSendUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"send"}, "--spec DIR is required to send"},
		{[]string{"send", "--dry-run", "--reflect"}, "--dry-run and --reflect: give one"},
		{[]string{"send", "--dry-run", "--to", "nobody"}, `"nobody" is not a mail address`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q", tc.args, code, stderr.String())
		}
	}
}
