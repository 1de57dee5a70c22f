package verify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/internal/gittest"
)

// TestInterruptible: a verify stopped by Ctrl-C returns the context's error
// at once, however long the work it abandons would take; work that ends
// first returns its own result.
func TestInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	cancel()
	if err := interruptible(ctx, func() error { <-block; return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v", err)
	}
	want := errors.New("done")
	if err := interruptible(context.Background(), func() error { return want }); err != want {
		t.Errorf("finished: %v", err)
	}
}

// TestCheckMailInput: verify takes a posted series as git am and b4 do.
// "-" reads standard input (it was a file named "-"); the mail's
// base-commit: is the base when --base is not given (this project's
// v6.16-rc7 was demanded), and when the tree lacks it the refusal says
// so and names the tags the tree has; inside a kernel tree --tree
// defaults to it, and --base without any tree is refused (it was
// ignored, any REV accepted).
func TestCheckMailInput(t *testing.T) {
	tree := debianTree(t)
	commit := strings.TrimSpace(string(gittest.Run(t, tree, "rev-parse", "v6.12^{commit}")))
	mail, err := os.ReadFile("testdata/mail/good.mbox")
	if err != nil {
		t.Fatal(err)
	}
	withBase := func(id string) string {
		p := filepath.Join(t.TempDir(), "base.mbox")
		text := strings.Replace(string(mail), "\n-- \n", "\nbase-commit: "+id+"\n-- \n", 1)
		if !strings.Contains(text, "base-commit: ") {
			t.Fatal("good.mbox has no signature line to put base-commit: above")
		}
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	ctx := context.Background()
	t.Run("stdin", func(t *testing.T) {
		rep, err := Check(ctx, Request{File: "-", Stdin: bytes.NewReader(mail), BuildDir: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Patches == 0 || rep.Source != "standard input" {
			t.Errorf("read %d patches from %q", rep.Patches, rep.Source)
		}
	})
	t.Run("base-commit in the tree", func(t *testing.T) {
		if _, err := Check(ctx, Request{File: withBase(commit), Tree: tree, BuildDir: "none"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("base-commit not in the tree", func(t *testing.T) {
		_, err := Check(ctx, Request{File: withBase("0123456789abcdef0123456789abcdef01234567"), Tree: tree, BuildDir: "none"})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "base-commit 0123456789abcdef") || !strings.Contains(err.Error(), "v6.12") {
			t.Errorf("refusal %v, want one naming the base-commit and the tree's tag v6.12", err)
		}
	})
	t.Run("--base without a tree", func(t *testing.T) {
		t.Chdir(t.TempDir())
		_, err := Check(ctx, Request{File: withBase(commit), Base: "v6.12", BuildDir: "none"})
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "--tree") {
			t.Errorf("refusal %v, want one asking for --tree", err)
		}
	})
	t.Run("inside the kernel tree", func(t *testing.T) {
		t.Chdir(filepath.Join(tree, "kernel"))
		_, err := Check(ctx, Request{File: withBase(commit), Base: "no-such-rev", BuildDir: "none"})
		if err == nil || !strings.Contains(err.Error(), "no-such-rev") {
			t.Errorf("got %v, want the enclosing tree's refusal of --base no-such-rev", err)
		}
		rep, err := Check(ctx, Request{File: withBase(commit), BuildDir: "none"})
		if err != nil {
			t.Fatal(err)
		}
		for _, cr := range rep.CRead {
			if strings.Contains(cr.Why, "--tree") {
				t.Errorf("read without the enclosing tree: %+v", cr)
			}
		}
	})
}
