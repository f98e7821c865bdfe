void start(int);
__attribute__((constructor(101))) static void first(void) { start(1); }
__attribute__((destructor(102))) void last(void) { start(0); }
