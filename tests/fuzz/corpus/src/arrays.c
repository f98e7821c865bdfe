int seen;
static void a(void) { seen = 1; }
static void b(void) { seen = 2; }
static void p(void) { seen = 3; }
__attribute__((section(".init_array"), used)) static void (*const init_p)(void) = a;
__attribute__((section(".fini_array"), used)) static void (*const fini_p)(void) = b;
__attribute__((section(".preinit_array"), used)) static void (*const pre_p)(void) = p;
