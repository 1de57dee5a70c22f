int add(struct work *work)
{
	set_flag();
	queue(work);
	return 0;
}
