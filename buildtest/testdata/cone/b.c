/* Returns: what it calls is not read for root's check. */
void other(void);

void callee_returns(void)
{
	other();
	asm volatile("");
}
