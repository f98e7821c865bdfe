/* libFuzzer target: what a build reads of each object file a compiler wrote from a user's
 * source (lib/build/objects.c's read_object, lib/base/elfsyms.c), on any bytes: its
 * symbols, the sections it disarms or changes the flags of, whether it has LTO bytecode or
 * code that runs at load, the function such code calls and what a static initialiser
 * initialises; and, on the same image, the section and symbol look-ups a library's loader
 * makes. */
#include <elf.h>

#include "fuzz.h"
#include "base/elfsyms.h"

/* Reads every byte of name[0, strlen], so that a name not ending inside the image is found. */
static volatile size_t sink;
static void touch(const char *name)
{
    if (name)
        sink += strlen(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("in.o", data, size);
    nopi_elfsym *syms;
    size_t n;
    nop_error err;
    if (nopi_elfsyms_read(path, &syms, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            touch(syms[i].name);
        nopi_elfsyms_free(syms, n);
    }

    /* a copy of exactly the input's size, which the readers may change in place: any byte
     * read or written past it is AddressSanitizer's */
    char *image = malloc(size ? size : 1);
    if (!image)
        return 0;
    memcpy(image, data, size);
    nopi_elf_disarm_section(image, size, ".init_array.00099", ".nopi.asan.ctor99");
    nopi_elf_section_flags(image, size, ".stab", 0, SHF_ALLOC);
    nopi_elf_section_flags(image, size, ".bounds", SHF_WRITE, 0);
    nopi_elf_has_lto(image, size);
    char name[256];
    if (nopi_elf_runs_at_load(image, size)) {
        if (nopi_elf_load_function(image, size, name, sizeof name) >= 0)
            touch(name);
        if (nopi_elf_startup_object(image, size, name, sizeof name) == 0)
            touch(name);
    }
    /* a short buffer: the name is cut, never written past */
    char tiny[4];
    nopi_elf_load_function(image, size, tiny, sizeof tiny);
    nopi_elf_startup_object(image, size, tiny, sizeof tiny);

    size_t off, len;
    uint64_t addr, fsize;
    if (nopi_elf_section(image, size, ".text", &off, &len, &addr) == 0) {
        for (size_t i = 0; i < len; i++)
            sink += (unsigned char)image[off + i];
        touch(nopi_elf_symbol_at(image, size, addr, STT_FUNC, &fsize));
    }
    touch(nopi_elf_symbol_at(image, size, 0, STT_FUNC, &fsize));
    touch(nopi_elf_symbol_at(image, size, 0, STT_OBJECT, NULL));
    free(image);
    return 0;
}
