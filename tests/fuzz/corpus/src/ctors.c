int seen;
static void old_init(void) { seen = 1; }
static void old_fini(void) { seen = 2; }
__attribute__((section(".ctors"), used)) static void (*const ctor_p)(void) = old_init;
__attribute__((section(".dtors"), used)) static void (*const dtor_p)(void) = old_fini;
