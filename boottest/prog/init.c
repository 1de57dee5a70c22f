// SPDX-License-Identifier: GPL-2.0
/*
 * /init of kpatch's test initramfs: mounts /proc, prints the top-level KTAP
 * header, runs each test program and prints its result line from the exit
 * status (so a crashed program still gets one), then reboots, which
 * qemu -no-reboot turns into an exit. KPATCH_EXTRA=1 on the kernel command
 * line reaches init's environment and is passed on to the programs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
	static const char *const progs[][2] = {
		{ "/bin/unwind_test64", "unwind_x86_64" },
		{ "/bin/unwind_test32", "unwind_ia32" },
	};
	int n = sizeof(progs) / sizeof(progs[0]), i;
	char buf[256];

	mount("proc", "/proc", "proc", 0, NULL);
	fd = open("/proc/kpatch_unwind", O_WRONLY);
	if (fd < 0) {
		fd = open("/dev/console", O_WRONLY);
		say("KTAP version 1\n1..0 # SKIP /proc/kpatch_unwind missing: test driver not built in\n");
		say("kpatch-selftest: done\n");
		sync();
		reboot(RB_AUTOBOOT);
		return 1;
	}
	snprintf(buf, sizeof(buf), "KTAP version 1\n1..%d\n", n);
	say(buf);
	for (i = 0; i < n; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { (char *)progs[i][0], NULL };
			char *envp[] = { getenv("KPATCH_EXTRA") ? "KPATCH_EXTRA=1" : NULL, NULL };

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
	say("kpatch-selftest: done\n");
	sync();
	reboot(RB_AUTOBOOT);
	return 0;
}
