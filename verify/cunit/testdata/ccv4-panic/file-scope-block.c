/* A compound statement at file scope: cc/v4 v4.34.0 dereferences a nil
 * scope in (*parser).checkTypeName instead of reporting a syntax error.
 * verify's blanking of 6.1's net/ipv4/tcp_output.c gave it this shape. */
{ a; }
