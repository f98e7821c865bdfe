/* libFuzzer target: the check of the library a user's linker wrote (lib/build/linkcheck.c,
 * nopi_check_linked) and the reader it rests on, which reads a shared library as the loader
 * maps it (lib/base/elfsyms.c, nopi_elf_image_*), on any bytes: the program headers and the
 * dynamic segment, the relocations, the symbols the hash tables count and their names, then
 * the check in each of the ways a build asks for it. */
#include <elf.h>

#include "fuzz.h"
#include "base/elfsyms.h"
#include "build/builder.h"

static volatile size_t sink;

/* What the reader gives of image[0, size), every value used so a wrong read is seen. */
static void read_image(const char *image, size_t size)
{
    static nopi_elf_image im;   /* large: kept off the stack */
    if (nopi_elf_image_open(image, size, &im))
        return;
    for (size_t i = 0; i < im.ndyn; i++) {
        const char *s = nopi_elf_image_string(&im, im.dyn[i].val);
        if (s)
            sink += strlen(s);
    }
    nopi_elf_rel *rels;
    size_t n;
    if (!nopi_elf_image_relocs(&im, &rels, &n)) {
        for (size_t i = 0; i < n; i++)
            sink += rels[i].offset + rels[i].type + rels[i].sym;
        free(rels);
    }
    long nsyms = nopi_elf_image_nsyms(&im);
    for (long i = 0; i < nsyms && i < 4096; i++) {
        Elf64_Sym s;
        const char *name;
        if (nopi_elf_image_sym(&im, (size_t)i, &s, &name))
            sink += strlen(name) + s.st_value;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly the input's size: any byte read past it is AddressSanitizer's */
    char *image = malloc(size ? size : 1);
    if (!image)
        return 0;
    memcpy(image, data, size);
    read_image(image, size);
    static const unsigned ways[] = { 0, NOPI_LINKED_EXPORTS, NOPI_LINKED_TEXTREL,
                                     NOPI_LINKED_PROBE | NOPI_LINKED_TEXTREL };
    for (size_t i = 0; i < sizeof ways / sizeof *ways; i++) {
        nop_error err;
        memset(&err, 0, sizeof err);
        builder b;
        memset(&b, 0, sizeof b);
        b.err = &err;
        b.lib_path = "lib.so";
        sink += (size_t)nopi_check_linked(&b, image, size, ways[i]) + strlen(err.diag.msg);
    }
    free(image);
    return 0;
}
