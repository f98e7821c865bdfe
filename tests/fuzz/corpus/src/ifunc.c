static int impl(int x) { return x + 1; }
static int (*resolve(void))(int) { return impl; }
int fast(int x) __attribute__((ifunc("resolve")));
