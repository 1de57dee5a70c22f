int add(struct work *work)
{
	queue(work);
	return 0;
}
