package kerneltree

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kpatch/plumbing/progress"
)

// commitDate is the date of the tree's one commit: Linux 6.12's.
const commitDate = "2024-11-17T14:15:08-08:00"

// commitMessage is the message of the tree's one commit.
const commitMessage = "Linux 6.12 (Debian linux-source-6.12)\n"

// unpack makes dir (empty) a git repository of the tarball's files as one
// commit on master tagged v6.12, the files checked out. The archive is
// read once: xz decompresses it, each file is written to dir and, in the
// same pass, to git fast-import, which writes one pack without deltas
// (one commit has nothing to delta against worth the search, and an
// object read is then one inflate: package gitdb resolves no chain).
// This costs what tar -xJf alone does plus hashing and compressing the
// objects once; git add would write 90,000 loose objects that a repack
// then reads and compresses again. Progress, in bytes of the archive,
// goes to log.
func unpack(ctx context.Context, tarball, dir string, log io.Writer) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("unpacking the Debian tree: git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := git("init", "-q", "-b", "master"); err != nil {
		return err
	}
	// No automatic gc: it would start in the background after a large
	// commit, outlive the unpacking and leave gc.pid behind when killed.
	for _, kv := range [][2]string{{"gc.auto", "0"}, {"maintenance.auto", "false"}} {
		if err := git("config", kv[0], kv[1]); err != nil {
			return err
		}
	}

	meter := progress.New(log, "unpacking "+filepath.Base(tarball), fi.Size(), progress.Bytes)
	xz := exec.CommandContext(ctx, "xz", "-dc")
	xz.Stdin = meter.Reader(f)
	var xzErr bytes.Buffer
	xz.Stderr = &xzErr
	xzOut, err := xz.StdoutPipe()
	if err != nil {
		return err
	}
	// pack.compression=1: zlib's fastest level, as git add's loose
	// objects (core.loosecompression); the pack is a tenth larger than
	// at the default level and written in a third of the time.
	fi2 := exec.CommandContext(ctx, "git", "-C", dir, "-c", "pack.compression=1", "fast-import", "--quiet", "--depth=0", "--done")
	var fiErr bytes.Buffer
	fi2.Stdout, fi2.Stderr = &fiErr, &fiErr
	fiIn, err := fi2.StdinPipe()
	if err != nil {
		return err
	}
	if err := xz.Start(); err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	if err := fi2.Start(); err != nil {
		xz.Process.Kill()
		xz.Wait()
		return fmt.Errorf("git fast-import: %w", err)
	}
	werr := stream(xzOut, dir, fiIn)
	fiIn.Close()
	io.Copy(io.Discard, xzOut)
	xerr := xz.Wait()
	ferr := fi2.Wait()
	meter.Done()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case xerr != nil:
		return fmt.Errorf("unpacking the Debian tree: xz -dc %s: %v: %s", tarball, xerr, strings.TrimSpace(xzErr.String()))
	case ferr != nil:
		return fmt.Errorf("unpacking the Debian tree: git fast-import: %v: %s", ferr, strings.TrimSpace(fiErr.String()))
	case werr != nil:
		return fmt.Errorf("unpacking the Debian tree: %w", werr)
	}
	// The index, as git add would have left it, for whoever looks at the
	// tree with git status (kpatch reads only the objects).
	if err := git("read-tree", "HEAD"); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "update-index", "-q", "--refresh")
	cmd.Run() // exits 1 when files differ from the index: none do
	return os.WriteFile(filepath.Join(dir, ".git", "kpatch-complete"), nil, 0o644)
}

// stream reads a tar archive from r (its first path component dropped,
// as tar --strip-components=1 does), writes each file under dir and
// gives it to git fast-import on fi, then the commit and the tag.
func stream(r io.Reader, dir string, fi io.Writer) error {
	w := bufio.NewWriterSize(fi, 1<<20)
	tr := tar.NewReader(bufio.NewReaderSize(r, 1<<20))
	type entry struct {
		mode string
		mark int
		path string
	}
	var entries []entry
	made := map[string]bool{dir: true}
	mkdir := func(d string) error {
		if made[d] {
			return nil
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		made[d] = true
		return nil
	}
	var buf []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		_, rel, ok := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
		rel = strings.TrimSuffix(rel, "/")
		if !ok || rel == "" {
			continue
		}
		if strings.Contains("/"+rel+"/", "/../") || strings.HasPrefix(rel, "/") {
			return fmt.Errorf("archive entry %q leaves the tree", h.Name)
		}
		p := filepath.Join(dir, rel)
		var mode string
		switch h.Typeflag {
		case tar.TypeDir:
			if err := mkdir(p); err != nil {
				return err
			}
			continue
		case tar.TypeSymlink:
			if err := mkdir(filepath.Dir(p)); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
			buf = append(buf[:0], h.Linkname...)
			mode = "120000"
		case tar.TypeReg:
			if int64(cap(buf)) < h.Size {
				buf = make([]byte, h.Size)
			}
			buf = buf[:h.Size]
			if _, err := io.ReadFull(tr, buf); err != nil {
				return fmt.Errorf("reading %s from the archive: %w", rel, err)
			}
			if err := mkdir(filepath.Dir(p)); err != nil {
				return err
			}
			perm, gm := os.FileMode(0o644), "100644"
			if h.Mode&0o111 != 0 {
				perm, gm = 0o755, "100755"
			}
			if err := writeFile(p, buf, perm); err != nil {
				return err
			}
			mode = gm
		default:
			return fmt.Errorf("archive entry %s: type %q is not a file, directory or symbolic link", h.Name, h.Typeflag)
		}
		mark := len(entries) + 1
		fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, len(buf))
		w.Write(buf)
		w.WriteString("\n")
		entries = append(entries, entry{mode, mark, rel})
	}
	if len(entries) == 0 {
		return errors.New("the archive holds no files")
	}
	t, _ := time.Parse(time.RFC3339, commitDate)
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	who := fmt.Sprintf("kpatch <kpatch@localhost> %d %c%02d%02d", t.Unix(), sign, off/3600, off/60%60)
	fmt.Fprintf(w, "commit refs/heads/master\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n",
		len(entries)+1, who, who, len(commitMessage), commitMessage)
	for _, e := range entries {
		fmt.Fprintf(w, "M %s :%d %s\n", e.mode, e.mark, quotePath(e.path))
	}
	fmt.Fprintf(w, "\nreset refs/tags/v6.12\nfrom :%d\n\ndone\n", len(entries)+1)
	return w.Flush()
}

// writeFile writes a new file with plain system calls: os.WriteFile's
// file registers with the runtime's poller, a cost that shows on 86,000
// files. The modification times are the time of unpacking (as git
// checkout gives them), not the archive's: nothing reads them.
func writeFile(path string, data []byte, perm os.FileMode) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm))
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// quotePath writes a path as fast-import reads it: as is, unless it
// starts with a double quote or holds a newline (C-style quoted then).
func quotePath(p string) string {
	if !strings.ContainsAny(p, "\"\n\\") {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
