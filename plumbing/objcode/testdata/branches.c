/* Branches objtool reads: a call to a static function in another
 * section, a call and a tail call to external functions, an indirect
 * call, a return, and a part gcc splits out (f.cold) on an unlikely
 * path to a function that does not return. */
void ext_call(void);
void ext_tail(int x);
void __attribute__((noreturn, cold)) ext_die(const char *why);
void (*hook)(void);

static void __attribute__((noinline, section(".text.helper"))) helper(void)
{
	ext_call();
	asm volatile("");
}

int __attribute__((noinline)) f(int x)
{
	if (__builtin_expect(x == 42, 0))
		ext_die("forty-two");
	helper();
	hook();
	return x + 1;
}

void g(int x)
{
	if (f(x) > 3)
		ext_tail(x);
}
