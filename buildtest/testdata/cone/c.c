void other(void)
{
	asm volatile("");
}
