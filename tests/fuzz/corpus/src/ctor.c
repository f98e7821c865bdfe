void start(void);
void stop(void);
__attribute__((constructor)) static void up(void) { start(); }
__attribute__((destructor)) static void down(void) { stop(); }
