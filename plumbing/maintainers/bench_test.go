package maintainers

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kpatch/internal/testenv"
)

// benchFiles reads the Debian 6.12 tree's MAINTAINERS and .mailmap.
func benchFiles(b *testing.B) (maint, mailmap []byte) {
	dir := testenv.KernelTree(b)
	maint, err := os.ReadFile(filepath.Join(dir, "MAINTAINERS"))
	if err != nil {
		b.Fatal(err)
	}
	mailmap, err = os.ReadFile(filepath.Join(dir, ".mailmap"))
	if err != nil {
		b.Fatal(err)
	}
	return maint, mailmap
}

// BenchmarkParse parses the kernel's MAINTAINERS (25,000 lines).
func BenchmarkParse(b *testing.B) {
	maint, _ := benchFiles(b)
	b.SetBytes(int64(len(maint)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(bytes.NewReader(maint)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLazy reads the kernel's MAINTAINERS as kpatch gen does:
// sections found, indexed and checked, none parsed yet.
func BenchmarkParseLazy(b *testing.B) {
	maint, _ := benchFiles(b)
	b.SetBytes(int64(len(maint)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseLazy(maint); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseMailmap parses the kernel's .mailmap.
func BenchmarkParseMailmap(b *testing.B) {
	_, mm := benchFiles(b)
	for i := 0; i < b.N; i++ {
		ParseMailmap(mm)
	}
}

// genPaths are the files the newest revision of the series touches: what
// kpatch gen asks MAINTAINERS about.
var genPaths = []string{
	"MAINTAINERS", "arch/Kconfig", "include/asm-generic/Kbuild", "include/linux/entry-common.h",
	"include/linux/sched.h", "include/linux/srcu.h", "include/linux/unwind_deferred.h",
	"include/linux/unwind_deferred_types.h", "include/linux/unwind_user.h", "include/linux/unwind_user_types.h",
	"kernel/Makefile", "kernel/exit.c", "kernel/fork.c", "kernel/unwind/Makefile",
	"kernel/unwind/deferred.c", "kernel/unwind/user.c",
}

// BenchmarkRecipients is what kpatch gen asks of MAINTAINERS: read it
// (ParseLazy) and the .mailmap (ParseMailmapLazy), and find the
// recipients of the series' files.
func BenchmarkRecipients(b *testing.B) {
	maint, mm := benchFiles(b)
	for i := 0; i < b.N; i++ {
		f, err := ParseLazy(maint)
		if err != nil {
			b.Fatal(err)
		}
		f.Mailmap = ParseMailmapLazy(mm)
		if to, _ := f.Recipients(genPaths); len(to) == 0 {
			b.Fatal("no recipients")
		}
	}
}
