/* A weak callee another object may override. */
void __attribute__((weak)) callee_returns(void)
{
}
