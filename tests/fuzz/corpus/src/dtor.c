void stop(void);
__attribute__((destructor)) void flush(void) { stop(); }
