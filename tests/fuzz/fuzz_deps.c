/* libFuzzer target: the dependency lists a compile writes (g++ -MD, gas --MD), read back by
 * the check of a build without Landlock (lib/build/confine.c).  The names in them come from
 * the files a library's sources include and embed, so they are the library author's. */
#include "fuzz.h"
#include "build/confine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* the first byte says whose list, and whether its compile succeeded */
    bool gas = data[0] & 1, complete = data[0] & 2;
    const char *list = fuzz_file("list.d", data + 1, size - 1);
    nopi_confine c;
    memset(&c, 0, sizeof c);
    nopi_confine_read(&c, fuzz_dir());
    if (nopi_confine_resolve(&c) != 0)
        abort();
    char bad[1024];
    nopi_deps d = { list, gas, complete, data[0] & 4 ? "k.cpp" : NULL };
    nopi_deps_verdict v = nopi_confine_deps(&c, &d, bad, sizeof bad);
    if (v != NOPI_DEPS_OK && !memchr(bad, '\0', sizeof bad))
        abort();   /* the name it is about is a string */
    nopi_confine_free(&c);
    return 0;
}
