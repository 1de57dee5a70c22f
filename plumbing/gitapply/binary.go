package gitapply

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// blobID is the id git gives content as a blob.
func blobID(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// isFullID reports whether s is a whole object id (40 hex digits).
func isFullID(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// applyBinary is git's apply_binary: the old content must have the id the
// patch names, and the result of its data the new id. The repository's
// objects are not looked up, so the data must be in the patch.
func (a *applier) applyBinary(p *filePatch, old []byte) ([]byte, error) {
	name := p.name()
	if !isFullID(p.oldOID) || !isFullID(p.newOID) {
		return nil, a.fail(p, "cannot apply binary patch to '%s' without full index line", name)
	}
	if p.oldName != "" {
		if id := blobID(old); id != p.oldOID {
			return nil, a.fail(p, "the patch applies to '%s' (%s), which does not match the current contents.", name, id)
		}
	} else if len(old) > 0 {
		return nil, a.fail(p, "the patch applies to an empty '%s' but it is not empty", name)
	}
	if strings.Trim(p.newOID, "0") == "" {
		return nil, nil // a deletion
	}
	result, err := a.binaryFragment(p, old)
	if err != nil {
		return nil, a.fail(p, "binary patch does not apply to '%s'", name)
	}
	if id := blobID(result); id != p.newOID {
		return nil, a.fail(p, "binary patch to '%s' creates incorrect result (expecting %s, got %s)", name, p.newOID, id)
	}
	return result, nil
}

// binaryFragment is git's apply_binary_fragment.
func (a *applier) binaryFragment(p *filePatch, old []byte) ([]byte, error) {
	name := p.name()
	if p.res.Diff.BinaryFragment == nil {
		return nil, a.fail(p, "missing binary patch data for '%s'", name)
	}
	if p.reverse && p.binFrag == nil {
		return nil, a.fail(p, "cannot reverse-apply a binary patch without the reverse hunk to '%s'", name)
	}
	var out bytes.Buffer
	ap := gitdiff.NewBinaryApplier(&out, bytes.NewReader(old))
	if err := ap.ApplyFragment(p.binFrag); err != nil {
		return nil, err
	}
	if err := ap.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
