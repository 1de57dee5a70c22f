package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kpatch/plumbing/outdir"
)

// specCopy writes a spec copy into a new directory and returns it.
func specCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"spec", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatal(stderr.String())
	}
	return dir
}

// readTree returns the files of dir (relative name: content).
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTrailersConcurrent runs kpatch trailers twice at once on one spec
// copy, with two reply files: the copy ends as after the two runs one
// after the other (in either order), never with a run's trailers lost or
// stray bytes in a description.
func TestTrailersConcurrent(t *testing.T) {
	bin := kpatchBinary(t)
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	acks := filepath.Join(t.TempDir(), "acks.mbox")
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "From mboxrd@z Thu Jan  1 00:00:00 1970\nMessage-ID: <ack%d@example.org>\nFrom: Acker %d <acker%d@example.org>\nSubject: Re: [PATCH v11 00/14] unwind_user: x86: Deferred unwinding\n infrastructure\n\nAcked-by: Acker %d <acker%d@example.org>\n\n", i, i, i, i, i)
	}
	if err := os.WriteFile(acks, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sequential := func(first, second string) map[string]string {
		dir := specCopy(t)
		for _, f := range []string{first, second} {
			if out, err := exec.Command(bin, "trailers", "--spec", dir, f).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}
		return readTree(t, dir)
	}
	ab, ba := sequential(replies, acks), sequential(acks, replies)
	waited := 0
	for round := 0; round < 6; round++ {
		dir := specCopy(t)
		var wg sync.WaitGroup
		outs := make([][]byte, 2)
		errs := make([]error, 2)
		for i, f := range []string{replies, acks} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], errs[i] = exec.Command(bin, "trailers", "--spec", dir, f).CombinedOutput()
			}()
		}
		wg.Wait()
		for i := range outs {
			if errs[i] != nil {
				t.Fatalf("round %d run %d: %v: %s", round, i, errs[i], outs[i])
			}
			if bytes.Contains(outs[i], []byte("waiting for another kpatch run")) {
				waited++
			}
		}
		got := readTree(t, dir)
		if !sameTree(got, ab) && !sameTree(got, ba) {
			for k, v := range got {
				if v != ab[k] && v != ba[k] {
					t.Errorf("round %d: %s differs from both orders:\n%s", round, k, v)
				}
			}
			t.Fatalf("round %d: the copy is not what two runs one after the other give", round)
		}
	}
	t.Logf("in %d of 12 runs the second waited for the first", waited)
}

// TestTrailersLockInterrupt: kpatch trailers waits, saying so, while
// another run edits the copy, and stops on Ctrl-C (exit 130) having
// changed nothing.
func TestTrailersLockInterrupt(t *testing.T) {
	dir := specCopy(t)
	unlock, err := outdir.LockEdit(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	before := readTree(t, dir)
	replies := filepath.Join("..", "..", "revision", "trailers", "testdata", "replies.mbox")
	code, stderr, took := interrupt(t, []string{"trailers", "--spec", dir, replies}, nil, "waiting for another kpatch run", 0, os.Interrupt)
	if code != 130 || took > stopLimit(t) || !strings.Contains(stderr, "kpatch trailers: interrupted") {
		t.Errorf("exit %d after %v: %q", code, took, stderr)
	}
	if !sameTree(readTree(t, dir), before) {
		t.Error("the interrupted run changed the copy")
	}
}

// TestTrailersMalformed: person trailers that do not name one person with
// one address are left out, each said on stderr, the others added.
func TestTrailersMalformed(t *testing.T) {
	dir := specCopy(t)
	var stdout, stderr bytes.Buffer
	mbox := filepath.Join("..", "..", "revision", "trailers", "testdata", "malformed.mbox")
	if code := run([]string{"trailers", "-v", "12", "--spec", dir, mbox}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "kpatch trailers: left out "); n != 4 || !strings.Contains(stderr.String(), `left out "Tested-by: <not-an-email>" (reply m3@example.org): no mail address`) ||
		!strings.Contains(stderr.String(), "added 2 to v12") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// Patch 6 of v12 is declared once, in the folder of the first
	// revision that has it; the trailers for v12 are added there.
	b, err := os.ReadFile(filepath.Join(dir, "v11", "deferred.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "not-an-email") || strings.Contains(string(b), "No Address") || strings.Contains(string(b), "Ann One") ||
		!strings.Contains(string(b), "Reviewed-by: Good Person <good@example.org>\nTested-by: bare@example.org\n") {
		t.Errorf("deferred.patch:\n%s", b)
	}
}
