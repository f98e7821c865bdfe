/* Shape function code that defines a function of the C library's that the toolchain's code
 * in the library (libgcc's, libtcc1's) may call: refused. */
void abort(void)
{
    for (;;)
        ;
}
