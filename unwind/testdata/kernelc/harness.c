/*
 * Runs the series' unwind_user() on test vectors read from stdin:
 *
 *   regs IP SP BP COMPAT CS_BASE SS_BASE MAX USER_MAX
 *   uprobe HEXBYTES            (optional: the walk is made in a uprobe
 *                              handler whose probed instruction starts
 *                              with these bytes)
 *   mem ADDR HEXBYTES          (any number)
 *   go
 *
 * and prints "trace N IP..." for each "go". Numbers are hexadecimal.
 * USER_MAX, when not zero, is TASK_SIZE_MAX: reads reaching it fault.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <linux/unwind_user.h>

struct task_struct kp_current;
struct pt_regs kp_regs;
int kp_compat;

static unsigned long kp_cs_base, kp_ss_base, kp_user_max;

#define KP_CS 0x23
#define KP_SS 0x2b

unsigned long segment_base_address(unsigned int segment)
{
	return segment == KP_CS ? kp_cs_base : kp_ss_base;
}

int kp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * Sets current->utask->auprobe for a revision whose unwinder asks for it
 * (testdata/kernelc/funcentry.c of the test); a no-op for the others.
 */
__attribute__((weak)) void kp_set_uprobe(int on, const unsigned char *insn)
{
	(void)on;
	(void)insn;
}

struct region {
	unsigned long addr, len;
	unsigned char *data;
};

static struct region regions[64];
static int nregions;

int kp_read(void *dst, unsigned long addr, unsigned long size)
{
	unsigned char *out = dst;

	if (kp_user_max && (addr >= kp_user_max || size > kp_user_max - addr))
		return -1;
	for (unsigned long i = 0; i < size; i++) {
		unsigned long a = addr + i;
		int found = 0;

		if (a < addr)
			return -1; /* wrapped */
		for (int r = 0; r < nregions; r++) {
			if (a >= regions[r].addr && a - regions[r].addr < regions[r].len) {
				out[i] = regions[r].data[a - regions[r].addr];
				found = 1;
				break;
			}
		}
		if (!found)
			return -1;
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int main(void)
{
	static char line[1 << 20];
	unsigned long max = 0;

	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "regs ", 5)) {
			unsigned long ip, sp, bp, compat, cs, ss, um;

			if (sscanf(line + 5, "%lx %lx %lx %lx %lx %lx %lx %lx",
				   &ip, &sp, &bp, &compat, &cs, &ss, &max, &um) != 8) {
				fprintf(stderr, "bad regs line\n");
				return 2;
			}
			kp_regs.ip = ip;
			kp_regs.sp = sp;
			kp_regs.bp = bp;
			kp_regs.cs = KP_CS;
			kp_regs.ss = KP_SS;
			kp_compat = compat != 0;
			kp_cs_base = cs;
			kp_ss_base = ss;
			kp_user_max = um;
		} else if (!strncmp(line, "uprobe ", 7)) {
			unsigned char insn[16] = { 0 };
			char *p = line + 7;

			for (int i = 0; i < 16 && hexval(p[0]) >= 0 && hexval(p[1]) >= 0; i++, p += 2)
				insn[i] = hexval(p[0]) << 4 | hexval(p[1]);
			kp_set_uprobe(1, insn);
		} else if (!strncmp(line, "mem ", 4)) {
			char *p = line + 4;
			struct region *r = &regions[nregions];

			if (nregions == 64) {
				fprintf(stderr, "too many regions\n");
				return 2;
			}
			r->addr = strtoul(p, &p, 16);
			while (*p == ' ')
				p++;
			r->data = malloc(strlen(p) / 2 + 1);
			r->len = 0;
			while (hexval(p[0]) >= 0 && hexval(p[1]) >= 0) {
				r->data[r->len++] = hexval(p[0]) << 4 | hexval(p[1]);
				p += 2;
			}
			nregions++;
		} else if (!strncmp(line, "go", 2)) {
			struct unwind_stacktrace trace;
			unsigned long *entries = calloc(max ? max : 1, sizeof(long));
			int ret;

			trace.entries = entries;
			ret = unwind_user(&trace, max);
			printf("trace %d %u", ret, trace.nr);
			for (unsigned int i = 0; i < trace.nr; i++)
				printf(" %lx", trace.entries[i]);
			printf("\n");
			free(entries);
			for (int r = 0; r < nregions; r++)
				free(regions[r].data);
			nregions = 0;
			kp_set_uprobe(0, NULL);
		}
	}
	return 0;
}
