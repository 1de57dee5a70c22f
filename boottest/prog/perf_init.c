// SPDX-License-Identifier: GPL-2.0
/*
 * /init of kpatch's perf initramfs: mounts /proc, makes the console the
 * programs' standard output, prints the top-level KTAP header, runs each
 * perf program and prints its result line from the exit status (so a
 * crashed program still gets one), then reboots, which qemu -no-reboot
 * turns into an exit. It needs no test driver: the kernel is booted as
 * built, unmodified.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/klog.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		return;
}

int main(void)
{
	static const char *const progs[][2] = {
		{ "/bin/perf_deferred64", "perf_x86_64" },
		{ "/bin/perf_deferred32", "perf_ia32" },
	};
	int n = sizeof(progs) / sizeof(progs[0]), i, fd;
	char buf[256];

	mount("proc", "/proc", "proc", 0, NULL);
	fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/*
	 * Console messages below KERN_WARNING (a driver probing late, as the
	 * PS/2 mouse does) would land inside the programs' lines; warnings
	 * and worse, which fail the run, still reach the console.
	 */
	klogctl(8, NULL, 5);
	snprintf(buf, sizeof(buf), "KTAP version 1\n1..%d\n", n);
	say(buf);
	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { (char *)progs[i][0], NULL };
			char *envp[] = { NULL };

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
	say("kpatch-perf: done\n");
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
