/* No return of its own: a tail call, so whether it returns is last()'s. */
void last(int x);

void noret_tail(int x)
{
	last(x + 1);
}
