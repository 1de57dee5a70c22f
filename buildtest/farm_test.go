package buildtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"kpatch/internal/testenv"
	"kpatch/plumbing/cache"
	"kpatch/plumbing/kbuild"
	"kpatch/plumbing/outdir"
)

// farmNetns marks the copy of the test binary that runs inside its own
// network namespace.
const farmNetns = "KPATCH_FARM_NETNS"

// farmObjects are the kernel objects the farm test compiles: a few large
// translation units of three subsystems.
var farmObjects = []string{"kernel/fork.o", "lib/string.o", "mm/mmap.o"}

// TestCompilerFarm compiles kernel objects of Debian's 6.12 (tinyconfig,
// x86_64) through the real daemons of a compiler farm, started on the
// loopback of a network namespace of the test's own (so that icecc's
// scheduler broadcasts reach nothing but it): make's CC is what
// `kpatch test build --cc distcc` and `--cc icecc` give it. Every compile
// must go through the daemon (its log names each source) and every object
// must equal the one gcc builds locally.
func TestCompilerFarm(t *testing.T) {
	testenv.Full(t, "configures a kernel tree and compiles objects three times")
	if os.Getenv(farmNetns) == "" {
		inNetns(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	cache, err := cache.Dir()
	if err != nil {
		t.Fatal(err)
	}
	d := kbuild.NewDir(filepath.Join(cache, "farm-test"))
	// Two test runs at once (two checkouts, or a run left behind by a
	// killed one) share this tree: one builds at a time, as kpatch test
	// build does, instead of both making into the same O= directory.
	if err := os.MkdirAll(d.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := outdir.Lock(ctx, filepath.Join(d.Root, ".lock"), os.Stderr, "the build tree "+d.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := d.UnpackBase(ctx, testenv.KernelTree(t), "v6.12"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Configure(ctx, "x86_64", "", nil); err != nil {
		t.Fatal(err)
	}
	build := func(cc string, env ...string) map[string][]byte {
		t.Helper()
		var log bytes.Buffer
		err := d.MakeWith(ctx, kbuild.MakeOptions{Arch: "x86_64", Jobs: 2, Args: []string{"CC=" + CompilerCommand(cc)}, Env: env, Log: &log}, farmObjects...)
		if err != nil {
			t.Fatalf("make CC=%q: %v\n%s", CompilerCommand(cc), err, log.String())
		}
		objs := map[string][]byte{}
		for _, o := range farmObjects {
			b, err := os.ReadFile(filepath.Join(d.Obj, o))
			if err != nil {
				t.Fatal(err)
			}
			objs[o] = b
		}
		return objs
	}
	local := build("gcc")
	same := func(name string, got map[string][]byte) {
		t.Helper()
		for _, o := range farmObjects {
			if !bytes.Equal(got[o], local[o]) {
				t.Errorf("%s: %s differs from the local build (%d bytes, local %d)", name, o, len(got[o]), len(local[o]))
			}
		}
	}

	t.Run("distcc", func(t *testing.T) {
		testenv.Tool(t, "distccd", "distcc")
		logPath := daemonLog(t, "distccd.log")
		port := freePort(t)
		startDaemon(t, ctx, "distccd", "--daemon", "--no-detach", "--listen", "127.0.0.1", "--port", fmt.Sprint(port),
			"--allow", "127.0.0.1", "--jobs", "2", "--user", "nobody", "--log-file", logPath, "--log-level", "info")
		waitPort(t, port)
		same("distcc", build("distcc", fmt.Sprintf("DISTCC_HOSTS=127.0.0.1:%d/2", port), "DISTCC_FALLBACK=0"))
		compiled(t, logPath, regexp.MustCompile(`(?m)COMPILE_OK .* (\S+\.c)$`))
	})

	t.Run("icecc", func(t *testing.T) {
		testenv.Tool(t, "iceccd", "icecc")
		if _, err := user.Lookup("icecc"); err != nil {
			testenv.Missing(t, "no icecc user", "apt-get install icecc")
		}
		schedLog, daemonLogPath := daemonLog(t, "scheduler.log"), daemonLog(t, "iceccd.log")
		// iceccd makes its environment directory itself (it gives it to
		// its own user, which it cannot do to one made for it).
		envs := filepath.Join(sharedDir(t), "envs")
		port := freePort(t)
		startDaemon(t, ctx, "icecc-scheduler", "-n", "kpatch-farm", "-p", fmt.Sprint(port), "-l", schedLog, "-vvv")
		// Not waitPort: a connection that says nothing holds the
		// scheduler up until it times out.
		waitFor(t, schedLog, regexp.MustCompile(`scheduler ready`), 10*time.Second)
		startDaemon(t, ctx, "iceccd", "-n", "kpatch-farm", "-s", fmt.Sprintf("127.0.0.1:%d", port), "-m", "2",
			"-N", "kpatch-node", "-b", envs, "-l", daemonLogPath, "-vvv")
		// The daemon is usable once the scheduler has it.
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("iceccd's log:\n%s", readFile(t, daemonLogPath))
			}
		})
		waitFor(t, schedLog, regexp.MustCompile(`login kpatch-node`), 30*time.Second)
		same("icecc", build("icecc", "ICECC_DEBUG=info"))
		// The scheduler hands out one job per compile.
		jobs := regexp.MustCompile(`put \d+ in joblist of kpatch-node`).FindAll(readFile(t, schedLog), -1)
		if len(jobs) < len(farmObjects) {
			t.Errorf("the scheduler handed out %d jobs for %d objects:\n%s", len(jobs), len(farmObjects), readFile(t, schedLog))
		}
	})
}

// inNetns runs this test again, as root, in a new network namespace that
// has only a loopback device.
func inNetns(t *testing.T) {
	t.Helper()
	unshare := testenv.Tool(t, "unshare", "util-linux")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a network namespace of its own needs root", "run the tests as root, as CI does")
	}
	args := []string{"--net", "--", os.Args[0], "-test.run", "^TestCompilerFarm$", "-test.v", "-test.count=1", "-test.timeout=30m"}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), farmNetns+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a network namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("unshare %s: %v", strings.Join(args, " "), err)
	}
	if bytes.Contains(out, []byte("--- SKIP: TestCompilerFarm")) {
		t.Skip("skipped in the network namespace")
	}
}

// daemonLog creates an empty log file that a daemon running as another
// user may write.
func daemonLog(t *testing.T, name string) string {
	t.Helper()
	dir := sharedDir(t)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o666)
	return p
}

// sharedDir returns a new directory that the daemons, which run as users
// of their own, can write (t.TempDir's parent is private to root).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kpatch-farm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startDaemon(t *testing.T, ctx context.Context, name string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The daemons fork workers that keep the output pipe open: stop the
	// whole process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s %s:\n%s", name, strings.Join(args, " "), out.String())
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on 127.0.0.1:%d", port)
}

func waitFor(t *testing.T, path string, re *regexp.Regexp, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if re.Match(readFile(t, path)) {
			return
		}
	}
	t.Fatalf("%s never showed %s:\n%s", path, re, readFile(t, path))
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compiled checks that the daemon's log names the source of every object.
func compiled(t *testing.T, logPath string, re *regexp.Regexp) {
	t.Helper()
	log := readFile(t, logPath)
	seen := map[string]bool{}
	for _, m := range re.FindAllSubmatch(log, -1) {
		seen[filepath.Base(string(m[1]))] = true
	}
	for _, o := range farmObjects {
		if src := filepath.Base(strings.TrimSuffix(o, ".o") + ".c"); !seen[src] {
			t.Errorf("the daemon's log does not show %s compiled:\n%s", src, log)
		}
	}
}
