/*
 * Call chains with known shapes for the unwind tests. Built with
 * -O0 -fno-omit-frame-pointer, so every function here keeps the frame
 * pointer chain.
 *
 *   chain recurse N [crash]   main -> rec x N -> leaf
 *   chain fnptr [crash]       main -> via_pointer -> (*fn) = target -> leaf
 *   chain signal [crash]      main -> sig_setup -> faulting, SIGSEGV ->
 *                             on_segv -> in_handler -> leaf
 *   chain deep N [crash]      main -> rec x N -> leaf, N past the kernel's
 *                             511-entry limit
 *
 * The tests stop in leaf under gdb (break leaf; gcore), or, with "crash",
 * let leaf write through a null pointer so the kernel dumps core (in the
 * signal case the second SIGSEGV, taken inside the handler, is fatal).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile int sink;
static int crash;

__attribute__((noinline)) void leaf(void)
{
	sink++;
	if (crash)
		*(volatile int *)0 = 1;
	sink++;
}

__attribute__((noinline)) void rec(int n)
{
	if (n > 1)
		rec(n - 1);
	else
		leaf();
	sink++;
}

__attribute__((noinline)) void target(void)
{
	leaf();
	sink++;
}

__attribute__((noinline)) void via_pointer(void (*fn)(void))
{
	fn();
	sink++;
}

__attribute__((noinline)) void in_handler(void)
{
	leaf();
	sink++;
}

__attribute__((noinline)) void on_segv(int sig)
{
	(void)sig;
	in_handler();
	/* Returning would fault again; the tests never get here. */
	_exit(3);
}

__attribute__((noinline)) void faulting(void)
{
	sink++;
	*(volatile int *)0 = 2;
	sink++;
}

__attribute__((noinline)) void sig_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, 0);
	faulting();
	sink++;
}

int main(int argc, char **argv)
{
	void (*volatile fn)(void) = target;
	int last = argc - 1;

	if (argc < 2)
		return 2;
	crash = strcmp(argv[last], "crash") == 0;
	if (!strcmp(argv[1], "recurse") || !strcmp(argv[1], "deep")) {
		if (argc < 3)
			return 2;
		rec(atoi(argv[2]));
	} else if (!strcmp(argv[1], "fnptr")) {
		via_pointer(fn);
	} else if (!strcmp(argv[1], "signal")) {
		sig_setup();
	} else {
		return 2;
	}
	return 0;
}
