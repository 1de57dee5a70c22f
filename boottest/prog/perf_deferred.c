// SPDX-License-Identifier: GPL-2.0
/*
 * perf's deferred user callchains as a consumer sees them, built static
 * twice (-m64 and -m32) with -O0 -fno-omit-frame-pointer. Each case opens
 * sampling events on the task with PERF_SAMPLE_CALLCHAIN and the
 * attribute bits defer_callchain and defer_output, plus
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER, runs a call chain it
 * knows, reads the mmap ring and pairs every sample's cookie (the entry
 * after PERF_CONTEXT_USER_DEFERRED) with its PERF_RECORD_CALLCHAIN_DEFERRED.
 * For every cookie it prints the sample and its deferred record as the
 * ring held them, in hex ("perf-pair:", "perf-sample:", "perf-deferred:"
 * and "perf-end:" lines); the host parses them again (package perfdata),
 * walks the sample's stack copy from its user registers with its model of
 * the unwinder and compares frame by frame. "expect:" lines name the chain
 * the program made, for samples whose ip is where the chain is known.
 *
 * The ABI is Linux 6.19's (c69993ecdd4d), read here by number because the
 * build host's headers predate it: the flag bits 38 and 39 of the attribute
 * word after read_format, PERF_CONTEXT_USER_DEFERRED (-640) and record type
 * 22 (header, cookie, nr, ips[nr], sample_id). The host's tests check these
 * numbers against include/uapi/linux/perf_event.h of the tree it boots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PD_BIT_DEFER_CALLCHAIN	38
#define PD_BIT_DEFER_OUTPUT	39
#define PD_CONTEXT_USER_DEFERRED ((uint64_t)-640)
#define PD_RECORD_CALLCHAIN_DEFERRED 22
#define PD_CONTEXT_MAX		((uint64_t)-4095)
/* The kernel's unwind cache: (4096 - 16) / sizeof(long) of the 64-bit kernel. */
#define PD_MAX_ENTRIES		510

#ifdef __x86_64__
#define MODE "x86_64"
#else
#define MODE "ia32"
#endif

#define NOINLINE __attribute__((noinline))

/* x86 perf_regs: BP, SP, IP, FLAGS, CS, SS (a compat task may not ask for DS to GS). */
enum { R_BP, R_SP, R_IP, R_FLAGS, R_CS, R_SS, NREGS };
#define REGS_MASK ((1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 9) | (1ULL << 10) | (1ULL << 11))

static int con = 1;	/* init makes it the console */
static char reason[512];
static int snap_id;

static void out(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (write(con, buf, n) < 0)
		_exit(99);
}

#define FAIL(...) do { snprintf(reason, sizeof(reason), __VA_ARGS__); return 1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)

/* ---- the events and their rings ---- */

struct ring {
	int fd;
	int pages;
	struct perf_event_mmap_page *pg;
	char *data;
	uint64_t size;
	uint64_t sample_type;
	const char *name;
};

struct sample {
	uint64_t cookie;	/* 0: no PERF_CONTEXT_USER_DEFERRED */
	int misc;		/* cpumode */
	uint32_t pid, tid;
	uint64_t time;
	int nkernel, ninline;	/* kernel entries; user entries given in the sample */
	uint64_t abi;
	uint64_t regs[NREGS];
	uint64_t stack_size;
	char *stack;
	int ring;
	int flush;		/* taken by flush_lost(), not by the case */
	char *raw;		/* the record as the ring held it */
	uint16_t size;
	uint64_t sample_type;
};

struct deferred {
	uint64_t cookie;
	uint64_t nr;
	uint64_t *ips;
	uint32_t pid, tid;
	int ring;
	int used;
	char *raw;
	uint16_t size;
	uint64_t sample_type;
};

#define MAXREC 512
static struct sample samples[MAXREC];
static int nsamples;
static struct deferred defs[MAXREC];
static int ndefs;
static uint64_t lost[4];
static int nlostrec[4];
static int nexit[4];
static int flushing;

static void reset(void)
{
	int i;

	for (i = 0; i < nsamples; i++) {
		free(samples[i].stack);
		free(samples[i].raw);
	}
	for (i = 0; i < ndefs; i++) {
		free(defs[i].ips);
		free(defs[i].raw);
	}
	nsamples = ndefs = 0;
	memset(lost, 0, sizeof(lost));
	memset(nlostrec, 0, sizeof(nlostrec));
	memset(nexit, 0, sizeof(nexit));
}

static long pd_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* The attribute word that holds disabled, inherit, ... and the defer bits. */
static uint64_t *flags_word(struct perf_event_attr *a)
{
	return (uint64_t *)((char *)a + offsetof(struct perf_event_attr, read_format) + 8);
}

struct evspec {
	uint32_t type;
	uint64_t config;
	uint64_t period;	/* 0: no sampling (side-band only) */
	uint64_t sample_type;
	uint32_t stack;		/* sample_stack_user */
	int defer_callchain, defer_output, task;
};

static int open_ring(struct ring *r, const struct evspec *e, pid_t pid, int cpu, int pages, const char *name)
{
	struct perf_event_attr a;
	void *m;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = e->type;
	a.config = e->config;
	a.sample_period = e->period;
	a.sample_type = e->sample_type;
	a.sample_regs_user = (e->sample_type & PERF_SAMPLE_REGS_USER) ? REGS_MASK : 0;
	a.sample_stack_user = e->stack;
	a.disabled = 1;
	a.exclude_hv = 1;
	a.sample_id_all = 1;
	a.task = e->task;
	if (e->defer_callchain)
		*flags_word(&a) |= 1ULL << PD_BIT_DEFER_CALLCHAIN;
	if (e->defer_output)
		*flags_word(&a) |= 1ULL << PD_BIT_DEFER_OUTPUT;
	r->fd = pd_perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0) {
		snprintf(reason, sizeof(reason), "perf_event_open(%s): %s", name, strerror(errno));
		return -1;
	}
	r->pages = pages;
	r->size = (uint64_t)pages * 4096;
	m = mmap(NULL, (pages + 1) * 4096UL, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		snprintf(reason, sizeof(reason), "mmap(%s): %s", name, strerror(errno));
		close(r->fd);
		return -1;
	}
	r->pg = m;
	r->data = (char *)m + 4096;
	r->sample_type = e->sample_type;
	r->name = name;
	return 0;
}

static void close_ring(struct ring *r)
{
	munmap(r->pg, (r->pages + 1) * 4096UL);
	close(r->fd);
}

static uint64_t ring_head(struct ring *r)
{
	return __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
}

/* A cursor over one record's bytes. */
struct cur {
	const char *p, *end;
	int bad;
};

static uint64_t u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void sample_id(struct cur *c, uint64_t st, uint32_t *pid, uint32_t *tid)
{
	if (st & PERF_SAMPLE_TID) {
		uint64_t v = u64(c);

		*pid = (uint32_t)v;
		*tid = (uint32_t)(v >> 32);
	}
}

static void parse_sample(struct ring *r, int ri, struct perf_event_header *h, struct cur *c)
{
	struct sample *s;
	uint64_t st = r->sample_type, nr, i, v;

	if (nsamples == MAXREC)
		return;
	s = &samples[nsamples];
	memset(s, 0, sizeof(*s));
	s->ring = ri;
	s->misc = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (st & PERF_SAMPLE_IP)
		u64(c);
	if (st & PERF_SAMPLE_TID) {
		v = u64(c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		s->time = u64(c);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t ctx = 0;

		nr = u64(c);
		for (i = 0; i < nr && !c->bad; i++) {
			v = u64(c);
			if (v >= PD_CONTEXT_MAX) {
				ctx = v;
				if (v == PD_CONTEXT_USER_DEFERRED && i + 1 < nr) {
					s->cookie = u64(c);
					i++;
				}
				continue;
			}
			if (ctx == PERF_CONTEXT_KERNEL)
				s->nkernel++;
			else if (ctx == PERF_CONTEXT_USER)
				s->ninline++;
		}
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		s->abi = u64(c);
		if (s->abi)
			for (i = 0; i < NREGS; i++)
				s->regs[i] = u64(c);
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t size = u64(c), dyn;

		if (size && !c->bad && (uint64_t)(c->end - c->p) >= size + 8) {
			const char *data = c->p;

			c->p += size;
			dyn = u64(c);
			if (dyn > size)
				dyn = size;
			s->stack = malloc(dyn ? dyn : 1);
			memcpy(s->stack, data, dyn);
			s->stack_size = dyn;
		}
	}
	if (c->bad)
		return;
	s->flush = flushing;
	s->size = h->size;
	s->raw = malloc(h->size);
	memcpy(s->raw, h, h->size);
	s->sample_type = st;
	nsamples++;
}

static void parse_record(struct ring *r, int ri, const char *rec, size_t len)
{
	struct perf_event_header *h = (struct perf_event_header *)rec;
	struct cur c = { rec + sizeof(*h), rec + len, 0 };

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		parse_sample(r, ri, h, &c);
		break;
	case PD_RECORD_CALLCHAIN_DEFERRED: {
		struct deferred *d;
		uint64_t i;

		if (ndefs == MAXREC)
			break;
		d = &defs[ndefs];
		memset(d, 0, sizeof(*d));
		d->ring = ri;
		d->cookie = u64(&c);
		d->nr = u64(&c);
		if (c.bad || d->nr > (uint64_t)(c.end - c.p) / 8)
			break;
		d->ips = malloc(d->nr * 8 + 8);
		for (i = 0; i < d->nr; i++)
			d->ips[i] = u64(&c);
		sample_id(&c, r->sample_type, &d->pid, &d->tid);
		d->size = h->size;
		d->raw = malloc(h->size);
		memcpy(d->raw, rec, h->size);
		d->sample_type = r->sample_type;
		ndefs++;
		break;
	}
	case PERF_RECORD_LOST:
		u64(&c);
		lost[ri] += u64(&c);
		nlostrec[ri]++;
		break;
	case PERF_RECORD_EXIT:
		nexit[ri]++;
		break;
	}
}

/* Reads every record from data_tail to data_head, copying one that wraps. */
static void drain(struct ring *r, int ri)
{
	uint64_t head = ring_head(r), tail = r->pg->data_tail;
	static char buf[65536];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % r->size, i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = r->data[(off + i) % r->size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (i = 0; i < h.size; i++)
			buf[i] = r->data[(off + i) % r->size];
		parse_record(r, ri, buf, h.size);
		tail += h.size;
	}
	__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---- the call chains ---- */

/*
 * spin_leaf busy-loops with a frame-pointer frame, in assembly so that the
 * loop's bounds are known: a sample whose ip is inside the loop was taken
 * with the chain the program made.
 */
void spin_leaf(void);
extern const char spin_leaf_loop[], spin_leaf_loop_end[];
#ifdef __x86_64__
asm(".text\n.globl spin_leaf\n.type spin_leaf,@function\nspin_leaf:\n"
    "\tpush %rbp\n\tmov %rsp,%rbp\n\tmov $20000,%ecx\n"
    ".globl spin_leaf_loop\nspin_leaf_loop:\n\tdec %ecx\n\tjnz spin_leaf_loop\n"
    ".globl spin_leaf_loop_end\nspin_leaf_loop_end:\n\tpop %rbp\n\tret\n"
    ".size spin_leaf, .-spin_leaf\n");
#else
asm(".text\n.globl spin_leaf\n.type spin_leaf,@function\nspin_leaf:\n"
    "\tpush %ebp\n\tmov %esp,%ebp\n\tmov $20000,%ecx\n"
    ".globl spin_leaf_loop\nspin_leaf_loop:\n\tdec %ecx\n\tjnz spin_leaf_loop\n"
    ".globl spin_leaf_loop_end\nspin_leaf_loop_end:\n\tpop %ebp\n\tret\n"
    ".size spin_leaf, .-spin_leaf\n");
#endif

/*
 * System calls from a frame-pointer function of ours, not a libc wrapper;
 * ps_syscall_ret is the user ip of a task inside one of them.
 */
extern const char ps_syscall_ret[], ps_ioctl_ret[];

NOINLINE long ps_syscall(long nr, long a1, long a2, long a3)
{
	long ret;
#ifdef __x86_64__
	asm volatile("syscall\n.globl ps_syscall_ret\nps_syscall_ret:"
		     : "=a"(ret) : "0"(nr), "D"(a1), "S"(a2), "d"(a3) : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80\n.globl ps_syscall_ret\nps_syscall_ret:"
		     : "=a"(ret) : "0"(nr), "b"(a1), "c"(a2), "d"(a3) : "memory");
#endif
	return ret;
}

/*
 * The task's own events are enabled and disabled from here. A sample
 * taken inside the system call that disables its event has a cookie, but
 * the event is off when the task work runs on the way back to user
 * space, and perf_iterate_sb() skips it: no deferred record, and no
 * PERF_RECORD_LOST either. Such samples are told apart by their user ip,
 * the return address of this function's system call.
 */
NOINLINE long ps_ioctl(int fd, unsigned long req)
{
	long ret;
#ifdef __x86_64__
	asm volatile("syscall\n.globl ps_ioctl_ret\nps_ioctl_ret:"
		     : "=a"(ret) : "0"((long)SYS_ioctl), "D"((long)fd), "S"(req), "d"(0L) : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80\n.globl ps_ioctl_ret\nps_ioctl_ret:"
		     : "=a"(ret) : "0"((long)SYS_ioctl), "b"(fd), "c"(req), "d"(0L) : "memory");
#endif
	return ret;
}

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x4
#endif

struct work {
	int syscall;		/* getrandom() in ps_syscall instead of spinning */
	int exit;		/* exit_group() from ps_syscall at the bottom */
	struct ring *watch;	/* stop when its ring is this full */
	uint64_t fill;
	long max_iter;
	char *buf;
};

static char rndbuf[4096];

NOINLINE void bottom(struct work *w)
{
	long i;

	if (w->exit)
		ps_syscall(SYS_exit_group, 0, 0, 0);
	for (i = 0; i < w->max_iter; i++) {
		if (w->syscall)
			ps_syscall(SYS_getrandom, (long)rndbuf, sizeof(rndbuf), GRND_INSECURE);
		else
			spin_leaf();
		if (w->watch && ring_head(w->watch) >= w->fill)
			break;
	}
}

NOINLINE void rec(int n, struct work *w)
{
	if (n <= 1)
		bottom(w);
	else
		rec(n - 1, w);
}

/* ---- checking and printing ---- */

static int sample_is_compat(const struct sample *s)
{
	return s->abi == PERF_SAMPLE_REGS_ABI_32;
}

/* A cookie has cpu + 1 in its low 32 bits and an odd count in its high 32. */
static int check_cookie(uint64_t c)
{
	CHECK((uint32_t)c != 0, "cookie %#llx has no cpu (low 32 bits zero)", (unsigned long long)c);
	CHECK((c >> 32) & 1, "cookie %#llx has an even count (bit 32 clear)", (unsigned long long)c);
	return 0;
}

static struct deferred *find_deferred(uint64_t cookie, int ring)
{
	int i;

	for (i = 0; i < ndefs; i++)
		if (defs[i].cookie == cookie && (ring < 0 || defs[i].ring == ring))
			return &defs[i];
	return NULL;
}

static void hexdump(const char *what, const char *p, unsigned int n)
{
	char line[200];
	unsigned int off, i;
	int k;

	for (off = 0; off < n; off += 64) {
		k = snprintf(line, sizeof(line), "    # %s: %u ", what, off);
		for (i = off; i < n && i < off + 64; i++)
			k += snprintf(line + k, sizeof(line) - k, "%02x", (unsigned char)p[i]);
		out("%s\n", line);
	}
}

/*
 * Prints sample s and deferred record d as the rings held them, with the
 * formats the host parses them by (package perfdata): the host pairs them
 * again by cookie, walks the sample's stack copy from its user registers
 * and compares with the deferred record's entries. chain, if not NULL, is
 * the chain the program made.
 */
static void print_pair(const char *tag, const struct sample *s, const struct deferred *d, const char *chain)
{
	int id = ++snap_id;

	out("    # perf-pair: id=%d tag=%s cookie=%#llx cpumode=%s sample_type=%#llx regs=%#llx deferred_sample_type=%#llx\n",
	    id, tag, (unsigned long long)s->cookie, s->misc == PERF_RECORD_MISC_KERNEL ? "kernel" : "user",
	    (unsigned long long)s->sample_type, (unsigned long long)REGS_MASK, (unsigned long long)d->sample_type);
	hexdump("perf-sample", s->raw, s->size);
	hexdump("perf-deferred", d->raw, d->size);
	out("    # perf-end: id=%d sample=%u deferred=%u\n", id, s->size, d->size);
	if (chain)
		out("    # expect: id=%d bin=%s exact=0 chain=%s\n", id, MODE, chain);
}

static int in_loop(const struct sample *s)
{
	return s->regs[R_IP] >= (uintptr_t)spin_leaf_loop && s->regs[R_IP] < (uintptr_t)spin_leaf_loop_end;
}

/* Is the task's user ip ret, after the system call instruction of one of ours? */
static int at_syscall_of(const struct sample *s, const char *ret)
{
	return s->abi && s->regs[R_IP] == (uintptr_t)ret;
}

static int at_syscall(const struct sample *s)
{
	return at_syscall_of(s, ps_syscall_ret);
}

struct pairing {
	int samples, with_cookie, paired, printed, shared, in_loop, in_kernel, at_syscall, unpaired, in_disable;
	int unpaired_cookies;
	uint64_t first_unpaired;
};

/*
 * Pairs every sample of ring ri (any ring if ri < 0) with the deferred
 * record of its cookie in ring want (ri itself when want < 0), prints one
 * pair per cookie (at most max), and counts.
 */
static int pair(const char *tag, int ri, int want, int max, const char *loop_chain, const char *sys_chain, struct pairing *p)
{
	int i, j;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < nsamples; i++) {
		struct sample *s = &samples[i];
		struct deferred *d;
		const char *chain = NULL;
		int seen = 0;

		if ((ri >= 0 && s->ring != ri) || s->flush)
			continue;
		p->samples++;
		if (s->misc == PERF_RECORD_MISC_KERNEL)
			p->in_kernel++;
		if (!s->cookie)
			continue;
		p->with_cookie++;
		if (check_cookie(s->cookie))
			return 1;
		d = find_deferred(s->cookie, want >= 0 ? want : s->ring);
		if (!d && s->abi && at_syscall_of(s, ps_ioctl_ret)) {
			p->in_disable++;
			out("    # %s: cookie %#llx: sample taken in the ioctl that disabled its event, no deferred record\n",
			    tag, (unsigned long long)s->cookie);
			continue;
		}
		if (!d) {
			for (j = 0; j < i; j++)
				if (samples[j].cookie == s->cookie && samples[j].ring == s->ring)
					seen = 1;
			if (!seen) {
				p->unpaired_cookies++;
				out("    # %s: cookie %#llx: no deferred record; the sample's user ip %#llx\n", tag,
				    (unsigned long long)s->cookie, (unsigned long long)s->regs[R_IP]);
			}
			if (!p->unpaired)
				p->first_unpaired = s->cookie;
			p->unpaired++;
			continue;
		}
		p->paired++;
		for (j = 0; j < i; j++)
			if (samples[j].cookie == s->cookie && (ri < 0 || samples[j].ring == ri))
				seen = 1;
		if (seen) {
			p->shared++;
			continue;
		}
		/*
		 * Samples of one cookie share the user stack; the one with the
		 * longest copy is printed (a sample taken in the page fault that
		 * maps a new stack page copies nothing: the page is not there yet).
		 */
		for (j = i + 1; j < nsamples; j++)
			if (samples[j].cookie == s->cookie && samples[j].ring == s->ring && !samples[j].flush &&
			    samples[j].stack_size > s->stack_size)
				s = &samples[j];
		if (in_loop(s)) {
			p->in_loop++;
			chain = loop_chain;
		} else if (at_syscall(s)) {
			p->at_syscall++;
			chain = sys_chain;
		}
		CHECK(s->abi != 0, "sample with cookie %#llx has no user registers", (unsigned long long)s->cookie);
		CHECK(sample_is_compat(s) == (sizeof(long) == 4), "sample abi %llu, this task is %s",
		      (unsigned long long)s->abi, MODE);
		CHECK(d->nr > 0 && d->ips[0] == s->regs[R_IP], "deferred trace of cookie %#llx starts at %#llx, the sample's user ip is %#llx",
		      (unsigned long long)s->cookie, d->nr ? (unsigned long long)d->ips[0] : 0ULL, (unsigned long long)s->regs[R_IP]);
		CHECK(d->nr <= PD_MAX_ENTRIES, "deferred trace has %llu entries, more than %d", (unsigned long long)d->nr, PD_MAX_ENTRIES);
		if (p->printed < max) {
			print_pair(tag, s, d, chain);
			p->printed++;
		}
		d->used = 1;
	}
	return 0;
}

static void summary(const char *what, const struct pairing *p)
{
	out("    # %s: samples=%d cookies=%d paired=%d unpaired=%d in_disable=%d shared=%d in_kernel=%d in_loop=%d at_syscall=%d printed=%d\n",
	    what, p->samples, p->with_cookie, p->paired, p->unpaired, p->in_disable, p->shared, p->in_kernel, p->in_loop,
	    p->at_syscall, p->printed);
}

/* ---- the cases ---- */

#define SAMPLE_ALL (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | \
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define PERIOD 200000		/* ns of task-clock */

static const struct evspec task_clock = {
	PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, PERIOD, SAMPLE_ALL, 8192, 1, 1, 0
};

/*
 * A ring that filled up says how many records it dropped only in the
 * PERF_RECORD_LOST it writes before its next record: sample a little more
 * once the rings are read, so that the count comes out.
 */
static void flush_lost(struct ring *r, int nr)
{
	struct work f = { .max_iter = 20 };
	int i;

	for (i = 0; i < nr; i++)
		ps_ioctl(r[i].fd, PERF_EVENT_IOC_ENABLE);
	rec(1, &f);
	for (i = 0; i < nr; i++)
		ps_ioctl(r[i].fd, PERF_EVENT_IOC_DISABLE);
	flushing = 1;
	for (i = 0; i < nr; i++)
		drain(&r[i], i);
	flushing = 0;
}

/* Samples ring r while the task runs rec(depth) with work w, until the ring is half full. */
static int sample_run(struct ring *r, int nr, int depth, struct work *w)
{
	int i;

	w->watch = &r[0];
	w->fill = r[0].size / 2;
	if (!w->max_iter)
		w->max_iter = 4000;
	for (i = 0; i < nr; i++)
		if (ps_ioctl(r[i].fd, PERF_EVENT_IOC_ENABLE))
			FAIL("PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
	rec(depth, w);
	for (i = 0; i < nr; i++)
		ps_ioctl(r[i].fd, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < nr; i++)
		drain(&r[i], i);
	flush_lost(r, nr);
	return 0;
}

/*
 * Where a task-clock sample lands is chance: a case that needs a sample
 * inside spin_leaf's loop runs again, with a new ring, when none did
 * (under TCG on a loaded host the kernel's share of the run can take
 * every user sample); at most three runs.
 */
static int simple_case(const char *tag, int depth, int syscall, uint32_t stack, int pages, int max, int need)
{
	struct evspec e = task_clock;
	struct pairing p;
	char lc[128], sc[128];
	int ret, run;

	e.stack = stack;
	snprintf(lc, sizeof(lc), "spin_leaf,bottom,rec*%d", depth);
	snprintf(sc, sizeof(sc), "ps_syscall,bottom,rec*%d", depth);
	for (run = 1;; run++) {
		struct work w = { .syscall = syscall };
		struct ring r;

		if (open_ring(&r, &e, 0, -1, pages, tag))
			return 1;
		ret = sample_run(&r, 1, depth, &w);
		close_ring(&r);
		if (ret)
			return ret;
		if (pair(tag, 0, -1, max, lc, sc, &p))
			return 1;
		summary(tag, &p);
		if (need == 'l' && p.in_loop == 0 && run < 3) {
			out("    # %s: run %d: no sample interrupted the task inside spin_leaf's loop; running again\n", tag, run);
			reset();
			continue;
		}
		break;
	}
	CHECK(p.samples > 0, "no samples");
	CHECK(p.with_cookie == p.samples, "%d of %d samples have no deferred cookie", p.samples - p.with_cookie, p.samples);
	CHECK(p.unpaired_cookies <= (int)lost[0], "%d cookie(s) without a deferred record (first %#llx) and the ring says it lost %llu record(s)",
	      p.unpaired_cookies, (unsigned long long)p.first_unpaired, (unsigned long long)lost[0]);
	if (p.unpaired_cookies)
		out("    # %s: the ring filled up: %d cookie(s) without a deferred record, %llu record(s) lost (PERF_RECORD_LOST)\n",
		    tag, p.unpaired_cookies, (unsigned long long)lost[0]);
	if (need == 'l')
		CHECK(p.in_loop > 0, "no sample interrupted the task inside spin_leaf's loop in %d runs", run);
	if (need == 's') {
		CHECK(p.in_kernel > 0, "no sample was taken in the kernel");
		CHECK(p.at_syscall > 0, "no sample's user ip was at ps_syscall's system call");
	}
	return 0;
}

NOINLINE int case_interrupt(void) { return simple_case("interrupt", 3, 0, 8192, 64, 6, 'l'); }
NOINLINE int case_syscall(void) { return simple_case("syscall", 4, 1, 8192, 64, 6, 's'); }
NOINLINE int case_shallow(void) { return simple_case("shallow", 1, 0, 8192, 64, 4, 'l'); }
NOINLINE int case_deep(void) { return simple_case("deep", 300, 1, 24576, 256, 3, 's'); }

NOINLINE int case_truncated(void)
{
	int i, n = 0, ret = simple_case("truncated", 600, 1, 40960, 512, 2, 's');

	if (ret)
		return ret;
	for (i = 0; i < nsamples; i++) {
		struct deferred *d = find_deferred(samples[i].cookie, samples[i].ring);

		if (!at_syscall(&samples[i]) || !d || samples[i].flush)
			continue;
		CHECK(d->nr == PD_MAX_ENTRIES, "deferred trace of a sample at the bottom of a 600-deep chain has %llu entries, want %d",
		      (unsigned long long)d->nr, PD_MAX_ENTRIES);
		n++;
	}
	CHECK(n > 0, "no sample at the bottom of the 600-deep chain");
	out("    # truncated: %d sample(s) at the bottom, each deferred trace %d entries\n", n, PD_MAX_ENTRIES);
	return 0;
}

/*
 * Two sampling events on the task at once, both with defer_output: a
 * cookie sampled by both in one kernel entry is unwound once and written
 * to both rings (6.19's changelog: duplicated records).
 */
NOINLINE int case_two_events(void)
{
	struct evspec a = task_clock, b = task_clock;
	struct ring r[2];
	struct work w = { .syscall = 1 };
	struct pairing p;
	int ret, i, both = 0;

	b.config = PERF_COUNT_SW_CPU_CLOCK;
	b.period = PERIOD * 3 / 2;
	if (open_ring(&r[0], &a, 0, -1, 64, "task-clock"))
		return 1;
	if (open_ring(&r[1], &b, 0, -1, 64, "cpu-clock")) {
		close_ring(&r[0]);
		return 1;
	}
	ret = sample_run(r, 2, 3, &w);
	close_ring(&r[0]);
	close_ring(&r[1]);
	if (ret)
		return ret;
	for (i = 0; i < 2; i++) {
		if (pair("two_events", i, -1, 3, "spin_leaf,bottom,rec*3", "ps_syscall,bottom,rec*3", &p))
			return 1;
		summary(i ? "cpu-clock" : "task-clock", &p);
		CHECK(p.samples > 0, "%s: no samples", r[i].name);
		CHECK(p.with_cookie == p.samples, "%s: %d of %d samples have no deferred cookie", r[i].name,
		      p.samples - p.with_cookie, p.samples);
		CHECK(p.unpaired_cookies <= (int)lost[i], "%s: %d cookie(s) without a deferred record in its ring, which says it lost %llu",
		      r[i].name, p.unpaired_cookies, (unsigned long long)lost[i]);
	}
	for (i = 0; i < ndefs; i++) {
		struct deferred *o;

		if (defs[i].ring != 0 || !(o = find_deferred(defs[i].cookie, 1)))
			continue;
		both++;
		CHECK(o->nr == defs[i].nr && !memcmp(o->ips, defs[i].ips, o->nr * 8),
		      "cookie %#llx has different traces in the two rings", (unsigned long long)defs[i].cookie);
	}
	out("    # two_events: %d cookie(s) in both rings, identical traces\n", both);
	return 0;
}

/*
 * The ring too small for the deferred records: the sample's cookie has no
 * record, and the ring says how many records it lost.
 */
NOINLINE int case_lost(void)
{
	struct evspec e = task_clock;
	struct ring r;
	struct work w = { .syscall = 0, .max_iter = 200 };
	struct pairing p;
	int i;

	e.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
	e.stack = 0;
	if (open_ring(&r, &e, 0, -1, 1, "lost"))
		return 1;
	/* Fill the one page without reading it, then read, then sample again. */
	w.watch = NULL;
	if (ps_ioctl(r.fd, PERF_EVENT_IOC_ENABLE))
		FAIL("PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
	rec(300, &w);
	ps_ioctl(r.fd, PERF_EVENT_IOC_DISABLE);
	drain(&r, 0);
	w.max_iter = 50;
	ps_ioctl(r.fd, PERF_EVENT_IOC_ENABLE);
	rec(2, &w);
	ps_ioctl(r.fd, PERF_EVENT_IOC_DISABLE);
	drain(&r, 0);
	close_ring(&r);
	memset(&p, 0, sizeof(p));
	for (i = 0; i < nsamples; i++) {
		p.samples++;
		if (!samples[i].cookie)
			continue;
		p.with_cookie++;
		if (find_deferred(samples[i].cookie, 0))
			p.paired++;
		else if (at_syscall_of(&samples[i], ps_ioctl_ret))
			p.in_disable++;
		else if (!p.unpaired++)
			p.first_unpaired = samples[i].cookie;
	}
	summary("lost", &p);
	out("    # lost: %d PERF_RECORD_LOST record(s) saying %llu record(s) lost; %d deferred record(s) arrived\n",
	    nlostrec[0], (unsigned long long)lost[0], ndefs);
	CHECK(p.unpaired > 0, "every cookie got its deferred record: the ring never filled");
	CHECK(lost[0] >= (uint64_t)p.unpaired, "%d cookie(s) without a record but the ring reports %llu lost",
	      p.unpaired, (unsigned long long)lost[0]);
	out("    # lost: cookie %#llx has no deferred record, and the ring said so (PERF_RECORD_LOST)\n",
	    (unsigned long long)p.first_unpaired);
	return 0;
}

/*
 * A task stopped at its exit (PTRACE_EVENT_EXIT, before PF_EXITING) gets a
 * context-switch sample there, so its deferred request is pending when it
 * exits: unwind_deferred_task_exit() runs the callback. The task's own
 * events are gone by then (perf_event_exit_task() runs first), so the
 * record reaches the CPU-wide side-band event (task=1, defer_output).
 */
NOINLINE int child_body(void)
{
	struct work w = { .exit = 1 };

	rec(5, &w);
	return 0;
}

NOINLINE int case_exit_pending(void)
{
	struct evspec cs = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, SAMPLE_ALL, 8192, 1, 1, 0 };
	struct evspec sb = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0, 0, 1, 1 };
	struct ring r[2];
	struct sample *last = NULL;
	struct deferred *d;
	int status, i;
	pid_t pid = fork();

	if (pid < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		child_body();
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFSTOPPED(status), "child did not stop");
	CHECK(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT) == 0, "PTRACE_SETOPTIONS: %s", strerror(errno));
	if (open_ring(&r[0], &cs, pid, -1, 64, "context-switches")) {
		kill(pid, SIGKILL);
		return 1;
	}
	if (open_ring(&r[1], &sb, -1, 0, 16, "cpu-wide side-band")) {
		kill(pid, SIGKILL);
		return 1;
	}
	ioctl(r[0].fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(r[1].fd, PERF_EVENT_IOC_ENABLE, 0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFSTOPPED(status) && (status >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)),
	      "child did not stop at its exit (status %#x)", status);
	ptrace(PTRACE_CONT, pid, 0, 0);
	waitpid(pid, &status, 0);
	ioctl(r[0].fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(r[1].fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(&r[0], 0);
	drain(&r[1], 1);
	close_ring(&r[0]);
	close_ring(&r[1]);
	for (i = 0; i < nsamples; i++)
		if (samples[i].ring == 0 && samples[i].tid == (uint32_t)pid && at_syscall(&samples[i]))
			last = &samples[i];
	out("    # exit_pending: %d sample(s), %d deferred record(s), %d exit record(s) on the cpu-wide event\n",
	    nsamples, ndefs, nexit[1]);
	CHECK(last, "no context-switch sample of the child at its exit_group()");
	CHECK(last->cookie, "the sample at the exit stop has no deferred cookie (user entries %d)", last->ninline);
	d = find_deferred(last->cookie, -1);
	for (i = 0; i < ndefs; i++)
		if (defs[i].cookie == last->cookie)
			out("    # exit_pending: cookie %#llx: deferred record in the %s ring\n", (unsigned long long)last->cookie,
			    defs[i].ring ? "cpu-wide" : "task's");
	CHECK(d, "no deferred record for cookie %#llx of the sample at the exit stop (lost %llu, %llu)",
	      (unsigned long long)last->cookie, (unsigned long long)lost[0], (unsigned long long)lost[1]);
	print_pair("exit_pending", last, d, "ps_syscall,bottom,rec*5,child_body,case_exit_pending");
	return 0;
}

struct tcase {
	const char *name;
	int (*fn)(void);
};

/* The host (package boottest) reads this table: every case must report. */
static const struct tcase cases[] = {
	{ "shallow", case_shallow },
	{ "interrupt", case_interrupt },
	{ "syscall", case_syscall },
	{ "deep", case_deep },
	{ "truncated", case_truncated },
	{ "two_events", case_two_events },
	{ "exit_pending", case_exit_pending },
	{ "lost", case_lost },
};

int main(int argc, char **argv)
{
	int n = sizeof(cases) / sizeof(cases[0]), i, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	out("    KTAP version 1\n    # Subtest: perf_%s\n    1..%d\n", MODE, n);
	for (i = 0; i < n; i++) {
		int r;

		if (only && strcmp(only, cases[i].name)) {
			out("    ok %d %s # SKIP not selected\n", i + 1, cases[i].name);
			continue;
		}
		reason[0] = 0;
		reset();
		out("    # case: %s\n", cases[i].name);
		r = cases[i].fn();
		if (r == 0) {
			out("    ok %d %s\n", i + 1, cases[i].name);
		} else {
			out("    # %s: %s\n    not ok %d %s\n", cases[i].name, reason, i + 1, cases[i].name);
			failed++;
		}
	}
	return failed ? 1 : 0;
}
