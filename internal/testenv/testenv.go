// Package testenv decides, the same way for every kpatch test, what a test
// may rely on: the cached Debian kernel tree, the tools the README's set-up
// installs, a host that runs 32-bit programs, and the test tier.
//
// The tiers: `go test -short ./...` runs every test that needs no kernel
// build, no QEMU boot and no network (the fast tier, run while working);
// `scripts/test.sh` runs everything (the full tier, run before a push and by
// CI). A test that builds a kernel or boots QEMU calls Full first.
//
// What is missing is a skip with its reason on a developer's machine, and a
// failure under CI=true when the README's set-up provides it (the Debian
// tree, gcc, gcc-multilib, git, gdb, perl, QEMU): CI runs the set-up, so a
// missing piece there is a broken set-up, not a reason to pass. What no
// set-up can provide (a host kernel that refuses 32-bit programs) is always a
// skip.
package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"kpatch/plumbing/kerneltree"
)

// InCI reports whether the tests run under CI (CI=true), where the README's
// set-up has installed everything the tests need.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing ends the test for something it needs that is not there: a skip
// with the reason and the fix on a developer's machine, a failure under CI.
func Missing(t testing.TB, what, fix string) {
	t.Helper()
	msg := fmt.Sprintf("%s (%s)", what, fix)
	if InCI() {
		t.Fatalf("CI=true but %s: scripts/setup.sh should have provided it", msg)
	}
	t.Skip(msg)
}

// Full skips the test in the fast tier (go test -short): why says what makes
// it slow, such as "builds a kernel" or "boots QEMU".
func Full(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("full tier only (%s): run without -short", why)
	}
}

var tree struct {
	once sync.Once
	dir  string
	err  error
}

// KernelTree returns the cached git tree of Debian's linux-source-6.12
// (package kerneltree), creating it once per test process.
func KernelTree(t testing.TB) string {
	t.Helper()
	tree.once.Do(func() {
		tree.dir, tree.err = kerneltree.Debian612(context.Background(), os.Stderr)
	})
	switch {
	case errors.Is(tree.err, kerneltree.ErrNoTarball):
		Missing(t, "Debian's kernel sources are not installed", "apt-get install linux-source-6.12, or run scripts/setup.sh")
	case tree.err != nil:
		t.Fatalf("Debian 6.12 tree: %v", tree.err)
	}
	return tree.dir
}

// Tool returns the path of a program the tests run, such as "git", "gdb" or
// "perl"; pkg names the Debian package that provides it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not installed", "apt-get install "+pkg+", or run scripts/setup.sh")
	}
	return p
}

var m32 struct {
	once       sync.Once
	build, run string // why gcc -m32 cannot build, why the host cannot run the result
}

func probeM32() {
	dir, err := os.MkdirTemp("", "kpatch-m32-")
	if err != nil {
		m32.build = err.Error()
		return
	}
	defer os.RemoveAll(dir)
	src, bin := filepath.Join(dir, "m.c"), filepath.Join(dir, "m")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		m32.build = err.Error()
		return
	}
	if out, err := exec.Command("gcc", "-m32", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		m32.build = fmt.Sprintf("gcc -m32 -static cannot build: %v: %s", err, out)
		return
	}
	if err := exec.Command(bin).Run(); err != nil {
		m32.run = fmt.Sprintf("this host cannot run 32-bit programs (%v): its kernel has IA32 emulation off or disabled at boot (ia32_emulation=0)", err)
	}
}

// Build32 makes sure gcc builds -m32 programs (gcc-multilib).
func Build32(t testing.TB) {
	t.Helper()
	Tool(t, "gcc", "gcc")
	m32.once.Do(probeM32)
	if m32.build != "" {
		Missing(t, m32.build, "apt-get install gcc-multilib, or run scripts/setup.sh")
	}
}

// Run32 makes sure the host runs the 32-bit programs gcc -m32 builds. No
// set-up can give a host kernel IA32 emulation, so this is a skip even under
// CI; kpatch's own QEMU tests still run 32-bit tasks in the guest.
func Run32(t testing.TB) {
	t.Helper()
	Build32(t)
	if m32.run != "" {
		t.Skip(m32.run)
	}
}

var kpatchBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// KpatchBinary builds cmd/kpatch once per test process, for tests that run
// the real binary (signals, exit statuses, standard output on /dev/full).
// A package that calls it removes the binary with RemoveKpatchBinary from
// its TestMain.
//
// The build goes to a directory of the user's cache kept for this
// checkout, under a lock: go build leaves a binary that is up to date as
// it is, so the second test process of a run (and the next run) does not
// link kpatch again, about a CPU-second each. The process runs a hard
// link of it in its own temporary directory, which a later build for
// changed sources does not touch.
func KpatchBinary(t testing.TB) string {
	t.Helper()
	kpatchBin.once.Do(func() {
		kpatchBin.path, kpatchBin.dir, kpatchBin.err = buildKpatch()
	})
	if kpatchBin.err != nil {
		t.Fatal(kpatchBin.err)
	}
	return kpatchBin.path
}

func buildKpatch() (path, tmp string, err error) {
	cache, err := kpatchBuildDir()
	if err != nil {
		return "", "", err
	}
	lock, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", "", fmt.Errorf("locking %s: %v", lock.Name(), err)
	}
	built := filepath.Join(cache, "kpatch")
	if out, err := exec.Command("go", "build", "-o", built, "kpatch/cmd/kpatch").CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build kpatch/cmd/kpatch: %v\n%s", err, out)
	}
	tmp, err = os.MkdirTemp("", "kpatch-bin-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(tmp, "kpatch")
	if err := os.Link(built, path); err != nil {
		// Another file system: a copy does as well.
		data, rerr := os.ReadFile(built)
		if rerr != nil {
			return "", tmp, rerr
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			return "", tmp, err
		}
	}
	return path, tmp, nil
}

// kpatchBuildDir is the directory of the user's cache where KpatchBinary
// builds kpatch for the checkout the tests run in (found from the working
// directory, a package directory of the module).
func kpatchBuildDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
		root = parent
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(base, "kpatch-test-bin", hex.EncodeToString(sum[:8]))
	return dir, os.MkdirAll(dir, 0o755)
}

// RemoveKpatchBinary removes the process's link to what KpatchBinary built,
// if anything (the build in the cache stays for the next run).
func RemoveKpatchBinary() {
	if kpatchBin.dir != "" {
		os.RemoveAll(kpatchBin.dir)
	}
}
