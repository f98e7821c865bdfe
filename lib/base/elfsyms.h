/*
 * elfsyms.h - global symbols of an ELF64 relocatable object, and named sections (internal).
 *
 * libtcc lists the symbols it defines but not the ones an object leaves undefined, and the
 * device check ("kernels call only the device API and the device's libc") needs exactly
 * those.  So build.c reads the objects libtcc wrote back with this small reader.  lines.c
 * uses it to find the debug sections of a built library.
 */
#ifndef NEURONOP_ELFSYMS_H
#define NEURONOP_ELFSYMS_H

#include "internal.h"

typedef struct nopi_elfsym {
    char *name;
    bool defined;     /* false: the object needs it from elsewhere */
    bool function;    /* defined as a function (STT_FUNC) */
    bool ifunc;       /* defined as an indirect function, whose resolver the loader runs */
    bool weak;        /* a weak definition (a C++ template's or inline function's copy) */
} nopi_elfsym;

/* Reads the non-local symbols of an object.  *syms is malloc'd (free with
 * nopi_elfsyms_free).  -1 with an error when the file is not a readable ELF64 object. */
int nopi_elfsyms_read(const char *path, nopi_elfsym **syms, size_t *n, nop_error *err);
void nopi_elfsyms_free(nopi_elfsym *syms, size_t n);

/* Whether the ELF64 object image data[0, len) has code that runs when it is loaded or
 * unloaded: an indirect function (file-local or not), a non-empty section of type
 * INIT_ARRAY, PREINIT_ARRAY or FINI_ARRAY, or named .init_array*, .preinit_array*, .ctors*,
 * .fini_array*, .dtors*, .init or .fini (constructor priorities make .init_array.00101). */
bool nopi_elf_runs_at_load(const char *data, size_t len);
/* The function the first entry of such an array in the object image data[0, len) calls, by
 * its symbol name (mangled), into buf: 0 when the loader calls it at load, 1 at unload (a
 * destructor), -1 when no array entry names a function. */
int nopi_elf_load_function(const char *data, size_t len, char *buf, size_t size);
/* Whether the ELF64 object image data[0, len) holds GCC's LTO bytecode (a .gnu.lto_*
 * section): code that a linker with the LTO plugin compiles and links, whose symbols and
 * sections no reading of the object shows. */
bool nopi_elf_has_lto(const char *data, size_t len);
/* Renames section `name` of the object image data[0, len) to `inert` (of the same length)
 * and makes it plain data, so that a linker treats it as nothing it runs.  False when there
 * is no such section. */
bool nopi_elf_disarm_section(char *data, size_t len, const char *name, const char *inert);
/* Sets the flags `set` and clears the flags `clear` (SHF_* of <elf.h>) of section `name` of
 * the object image data[0, len).  True when they changed; false when they were so already
 * or there is no such section. */
bool nopi_elf_section_flags(char *data, size_t len, const char *name, uint64_t set,
                            uint64_t clear);
/* Finds the section called `name` in the ELF64 file image data[0, len): its offset in the
 * image and its size, both checked to lie inside it, and (addr may be NULL) its address in
 * memory relative to the load address.  -1 when there is no such section or the image is
 * not ELF64. */
int nopi_elf_section(const char *data, size_t len, const char *name, size_t *off, size_t *size,
                     uint64_t *addr);

/* The name of the symbol of type `type` (STT_FUNC, STT_OBJECT) defined at address value of
 * the ELF64 file image data[0, len) by its full symbol table (.symtab: file-local symbols
 * and those a version script hid included) or, without one, its dynamic one (libtcc links
 * no .symtab), and its size in *size (size may be NULL).  The
 * name points into data; NULL when there is none or no symbol table. */
const char *nopi_elf_symbol_at(const char *data, size_t len, uint64_t value, int type,
                               uint64_t *size);

/* The first variable that code in .text.startup (where g++ -O puts a translation unit's
 * static initialisers) refers to, by its symbol name, into buf: what a static initialiser
 * initialises.  -1 when the object has no such code or reference. */
int nopi_elf_startup_object(const char *data, size_t len, char *buf, size_t size);

#endif /* NEURONOP_ELFSYMS_H */
