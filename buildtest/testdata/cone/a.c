/* The function objtool checks: in .noinstr.text, calling a static
 * helper, a function that returns and one that tail-calls a dead end. */
void callee_returns(void);
void noret_tail(int x);

static void __attribute__((noinline)) helper(void)
{
	callee_returns();
	asm volatile("");
}

__attribute__((section(".noinstr.text"))) void root(int x)
{
	helper();
	if (x)
		noret_tail(x);
	callee_returns();
}
