package cunit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"modernc.org/cc/v4"
)

// TestCCPanicIsError: the inputs of testdata/ccv4-panic make cc/v4's
// parser panic (kept as the smallest inputs that do, to report to
// cc/v4); ccParse returns the panic as an error naming the parser's
// function, so that verify reports one C_EVAL for the unit and goes on.
// It was a panic that ended the run.
func TestCCPanicIsError(t *testing.T) {
	files, _ := filepath.Glob("testdata/ccv4-panic/*.c")
	if len(files) == 0 {
		t.Fatal("no inputs in testdata/ccv4-panic")
	}
	abi, err := cc.NewABI("linux", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &cc.Config{ABI: abi, FS: emptyFS{}, FSOnly: true}
	if err := cfg.ApplyOptions(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				cc.Parse(cfg, []cc.Source{{Name: f, Value: src}})
				return false
			}()
			if !panicked {
				t.Logf("cc/v4 no longer panics on %s: the input can go", f)
			}
			_, err = ccParse(cfg, []cc.Source{{Name: f, Value: src}})
			if panicked && (err == nil || !strings.Contains(err.Error(), "checkTypeName")) {
				t.Errorf("ccParse: %v, want the panic as an error naming checkTypeName", err)
			}
		})
	}
}

// emptyFS serves every file empty.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	name = strings.TrimPrefix(name, "/")
	return fstest.MapFS{name: &fstest.MapFile{ModTime: time.Unix(0, 0)}}.Open(name)
}
