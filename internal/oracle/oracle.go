// Package oracle finds and describes the posted v11 thread,
// shared/seed/unwind-v11-thread.txt, the specification kpatch is checked
// against: where it is (SeedPath), how to get it (SeedHelp), and what it
// proves. Every diff in a patch names the git blob hashes of the file
// before and after it ("index a..b"), which makes the thread an oracle: a
// file the series creates can be rebuilt by applying the patches in order
// and checked byte for byte against those hashes (see CreatedFiles).
// Reading the thread itself is package mail's job.
package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"kpatch/plumbing/kernelsrc"
	"kpatch/plumbing/mail"
)

// BlobHash returns the git blob hash of content, as in "index" lines.
func BlobHash(content []byte) string { return kernelsrc.BlobID(content) }

// Version is the content of a created file after one patch.
type Version struct {
	Patch   int    // the patch that produced it
	Hash    string // the abbreviated blob hash the patch names ("index ..b")
	Content []byte
}

// CreatedFiles rebuilds every file that the thread t creates, after each patch
// that touches it, by applying the patches in order. It checks each result
// against the blob hash the patch names and fails on the first mismatch.
func CreatedFiles(t *mail.Thread) (map[string][]Version, error) {
	cur := map[string][]byte{}
	out := map[string][]Version{}
	for _, p := range t.Patches {
		for _, f := range p.Files {
			if !f.IsNew {
				if _, ok := cur[f.OldName]; !ok {
					continue // a pre-existing file of the tree
				}
			}
			var dst bytes.Buffer
			if err := gitdiff.Apply(&dst, bytes.NewReader(cur[f.OldName]), f); err != nil {
				return nil, fmt.Errorf("the posted thread, patch %d: applying %s: %w", p.Number, f.NewName, err)
			}
			got := BlobHash(dst.Bytes())
			if !strings.HasPrefix(got, f.NewOIDPrefix) {
				return nil, fmt.Errorf("the posted thread, patch %d: %s has blob %s, the patch says %s", p.Number, f.NewName, got[:12], f.NewOIDPrefix)
			}
			cur[f.NewName] = dst.Bytes()
			out[f.NewName] = append(out[f.NewName], Version{Patch: p.Number, Hash: f.NewOIDPrefix, Content: dst.Bytes()})
		}
	}
	return out, nil
}

// SeedName is the file name of the posted v11 thread in shared/seed.
const SeedName = "unwind-v11-thread.txt"

// SeedMessageID is the Message-Id of the v11 cover letter as posted to
// lore.kernel.org; the seed is its thread.
const SeedMessageID = "20250625225600.555017347@goodmis.org"

// ErrNoSeed is returned by SeedPath when the posted v11 thread is missing.
var ErrNoSeed = errors.New("the posted v11 thread, the specification the tests check kpatch against, is missing")

// SeedHelp says where the seed comes from and how to point the tests at
// it: the one text the README and every failing test give.
const SeedHelp = "save the thread of lore Message-Id <" + SeedMessageID + "> as ../shared/seed/" + SeedName +
	" beside the repository (from its directory: mkdir -p ../shared/seed && b4 mbox -o ../shared/seed -n " + SeedName + " " + SeedMessageID +
	"; or download https://lore.kernel.org/all/" + SeedMessageID + "/t.mbox.gz and gunzip it to that name)" +
	", or save it anywhere and set KPATCH_SEED to its path"

// SeedPath finds the posted v11 thread: $KPATCH_SEED if set, else
// shared/seed/unwind-v11-thread.txt in the working directory or any of its
// parents (the repository's checkout has shared/ beside it). A missing
// thread is ErrNoSeed, with SeedHelp.
func SeedPath() (string, error) {
	if p := os.Getenv("KPATCH_SEED"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("KPATCH_SEED=%s: %w: %s", p, ErrNoSeed, SeedHelp)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", "seed", SeedName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no shared/seed/%s above the working directory and KPATCH_SEED is not set: %w: %s", SeedName, ErrNoSeed, SeedHelp)
		}
		dir = parent
	}
}

// ParseSeed finds the posted v11 thread with SeedPath and parses it.
func ParseSeed() (*mail.Thread, error) {
	p, err := SeedPath()
	if err != nil {
		return nil, err
	}
	return mail.ParseThreadFile(p)
}

// ReadSeed finds the posted v11 thread with SeedPath and returns it in the
// text form (see mail.ThreadText).
func ReadSeed() ([]byte, error) {
	p, err := SeedPath()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return mail.ThreadText(data)
}
