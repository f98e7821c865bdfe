/* A file-local indirect function, built by the system compiler: the loader calls its
 * resolver as it loads the library, in every worker.  Refused. */
static int plain(void)
{
    return 1;
}

static void *pick(void)
{
    return (void *)plain;
}

static int chosen(void) __attribute__((ifunc("pick")));

int call_chosen(int ask)
{
    return ask ? chosen() : 0;
}
