/*
 * A program other than chain.c, for the tests that give kpatch unwind the
 * wrong executable: a PIE whose entry point and layout look much like
 * chain.c's, so only the build id or the bytes of its first page tell them
 * apart.
 */
int sink;

void leaf(void)
{
	sink++;
}

int main(void)
{
	leaf();
	return 0;
}
