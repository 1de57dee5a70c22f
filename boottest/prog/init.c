// SPDX-License-Identifier: GPL-2.0
/*
 * /init of kpatch's test initramfs: mounts /proc, prints the top-level KTAP
 * header, runs each test program and prints its result line from the exit
 * status (so a crashed program still gets one), then reboots, which
 * qemu -no-reboot turns into an exit. KPATCH_EXTRA (the extra cases to run)
 * and KPATCH_FILTER (the cases selected) on the kernel command line reach
 * init's environment and are passed on to the programs.
 *
 * With /kpatch-exec in the initramfs (kpatch test qemu --exec), init runs
 * it with the busybox shell instead of the programs, between the lines
 * "kpatch-exec: begin" and "kpatch-exec: exit N" (N its exit status).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd = -1;

static void say(const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		return;
}

static void done(void)
{
	say("kpatch-selftest: done\n");
	sync();
	reboot(RB_AUTOBOOT);
}

/* Runs /kpatch-exec with busybox's shell, its output on the console. */
static void run_exec(void)
{
	char buf[64];
	int status = 0, con = open("/dev/console", O_RDWR);
	pid_t pid = fork();

	if (pid == 0) {
		char *install[] = { "/bin/busybox", "--install", "-s", "/bin", NULL };
		char *argv[] = { "/bin/sh", "/kpatch-exec", NULL };
		char *envp[] = { "PATH=/bin", "HOME=/", "TERM=dumb", NULL };
		pid_t p;

		setsid();
		dup2(con, 0);
		dup2(con, 1);
		dup2(con, 2);
		ioctl(0, TIOCSCTTY, 1);
		p = fork();
		if (p == 0) {
			execve(install[0], install, envp);
			_exit(127);
		}
		waitpid(p, NULL, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	say("kpatch-exec: begin\n");
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 127 << 8;
	snprintf(buf, sizeof(buf), "kpatch-exec: exit %d\n",
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	say(buf);
	done();
}

int main(void)
{
	static const char *const progs[][2] = {
		{ "/bin/unwind_test64", "unwind_x86_64" },
		{ "/bin/unwind_test32", "unwind_ia32" },
	};
	int n = sizeof(progs) / sizeof(progs[0]), i;
	char buf[256];

	mount("proc", "/proc", "proc", 0, NULL);
	if (access("/kpatch-exec", R_OK) == 0) {
		fd = open("/dev/console", O_WRONLY);
		run_exec();
		return 0;
	}
	fd = open("/proc/kpatch_unwind", O_WRONLY);
	if (fd < 0) {
		fd = open("/dev/console", O_WRONLY);
		say("KTAP version 1\n1..0 # SKIP /proc/kpatch_unwind missing: test driver not built in\n");
		done();
		return 1;
	}
	snprintf(buf, sizeof(buf), "KTAP version 1\n1..%d\n", n);
	say(buf);
	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { (char *)progs[i][0], NULL };
			char extra[256], filter[256];
			char *envp[3] = { NULL, NULL, NULL };
			int e = 0;

			if (getenv("KPATCH_EXTRA")) {
				snprintf(extra, sizeof(extra), "KPATCH_EXTRA=%s", getenv("KPATCH_EXTRA"));
				envp[e++] = extra;
			}
			if (getenv("KPATCH_FILTER")) {
				snprintf(filter, sizeof(filter), "KPATCH_FILTER=%s", getenv("KPATCH_FILTER"));
				envp[e++] = filter;
			}

			execve(progs[i][0], argv, envp);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			snprintf(buf, sizeof(buf), "not ok %d %s # fork/wait failed\n", i + 1, progs[i][1]);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			snprintf(buf, sizeof(buf), "ok %d %s\n", i + 1, progs[i][1]);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			snprintf(buf, sizeof(buf), "not ok %d %s # exec failed\n", i + 1, progs[i][1]);
		else if (WIFSIGNALED(status))
			snprintf(buf, sizeof(buf), "not ok %d %s # killed by signal %d\n", i + 1, progs[i][1], WTERMSIG(status));
		else
			snprintf(buf, sizeof(buf), "not ok %d %s\n", i + 1, progs[i][1]);
		say(buf);
	}
	done();
	return 0;
}
