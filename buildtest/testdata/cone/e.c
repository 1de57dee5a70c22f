/* A dead end. */
void last(int x)
{
	for (;;)
		asm volatile("" : : "r"(x));
}
