/*
 * elfsyms.h - global symbols of an ELF64 relocatable object, and named sections (internal).
 *
 * libtcc lists the symbols it defines but not the ones an object leaves undefined, and the
 * device check ("kernels call only the device API and the device's libc") needs exactly
 * those.  So build.c reads the objects libtcc wrote back with this small reader.  lines.c
 * uses it to find the debug sections of a built library.  linkcheck.c reads a linked library
 * through it as the loader does, by its program headers and dynamic segment (below).
 */
#ifndef NEURONOP_ELFSYMS_H
#define NEURONOP_ELFSYMS_H

#include <elf.h>

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
/* Whether the ELF64 object image data[0, len) has thread-local data (a non-empty section
 * flagged SHF_TLS: .tdata, .tbss). */
bool nopi_elf_has_tls(const char *data, size_t len);
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

/* ---- a shared library as the loader maps it --------------------------------------------
 * What ld.so reads of a library is its program headers and, through PT_DYNAMIC, the dynamic
 * segment: never its section headers, which a file may leave out or make up.  These read
 * exactly that, from an image that may be hostile: every address is mapped to the file
 * through the PT_LOAD segments, and every read is checked against the segment and the
 * file.  x86-64 shared objects (ET_DYN, ELF64, little-endian) only. */
#define NOPI_ELF_MAX_LOADS 16
#define NOPI_ELF_MAX_DYN 512

typedef struct nopi_elf_load {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;   /* PF_R, PF_W, PF_X */
} nopi_elf_load;

typedef struct nopi_elf_image {
    const char *data;
    size_t len;
    int nload;
    nopi_elf_load load[NOPI_ELF_MAX_LOADS];
    uint64_t dyn_vaddr, dyn_size;   /* PT_DYNAMIC, inside a PT_LOAD's file bytes */
    bool interp;                    /* has a PT_INTERP */
    bool exec_stack;                /* its PT_GNU_STACK asks for an executable stack */
    uint64_t relro_vaddr, relro_size;   /* PT_GNU_RELRO (made read-only once relocated), or 0 */
    size_t ndyn;                    /* entries before DT_NULL */
    struct { int64_t tag; uint64_t val; } dyn[NOPI_ELF_MAX_DYN];
} nopi_elf_image;

/* One relocation the loader applies: RELA (DT_RELA, DT_JMPREL) or RELR (DT_RELR, given as
 * R_X86_64_RELATIVE with the word the file holds there as its addend). */
typedef struct nopi_elf_rel {
    uint64_t offset;
    uint32_t type, sym;
    int64_t addend;
    bool relr;
} nopi_elf_rel;

/* Reads the program headers and the dynamic segment of data[0, len) into *im (which points
 * into data).  NULL, or why it cannot be read as the loader would map it (a static
 * string). */
const char *nopi_elf_image_open(const char *data, size_t len, nopi_elf_image *im);
/* The index of the PT_LOAD segment whose memory holds [vaddr, vaddr + n), or -1. */
int nopi_elf_image_segment(const nopi_elf_image *im, uint64_t vaddr, uint64_t n);
/* Copies the n bytes the loader maps at vaddr (the file's, or the zeros past a segment's
 * file bytes) into out; false when they are not all in one segment. */
bool nopi_elf_image_read(const nopi_elf_image *im, uint64_t vaddr, void *out, size_t n);
/* How many dynamic entries have tag `tag`; *val (may be NULL) the last one's value. */
size_t nopi_elf_image_tag(const nopi_elf_image *im, int64_t tag, uint64_t *val);
/* The string at offset off of the dynamic string table (DT_STRTAB, DT_STRSZ), pointing
 * into the image, or NULL when it does not lie whole in the file bytes of one segment. */
const char *nopi_elf_image_string(const nopi_elf_image *im, uint64_t off);
/* Every relocation the loader applies (DT_RELA, DT_JMPREL, DT_RELR; not R_X86_64_NONE,
 * which it skips: libtcc leaves some), into *rels (malloc'd, free it) and *n.  NULL, or why
 * they cannot be read (DT_REL, which x86-64's loader ignores, is one: a reader cannot know
 * it is ignored). */
const char *nopi_elf_image_relocs(const nopi_elf_image *im, nopi_elf_rel **rels, size_t *n);
/* How many dynamic symbols the hash tables (DT_GNU_HASH, DT_HASH) reach: the loader finds
 * no other by name.  -1 when there is neither or they cannot be read. */
long nopi_elf_image_nsyms(const nopi_elf_image *im);
/* Dynamic symbol i (DT_SYMTAB) into *sym and its name into *name ("" when unreadable);
 * false when the symbol itself is not in the file. */
bool nopi_elf_image_sym(const nopi_elf_image *im, size_t i, Elf64_Sym *sym, const char **name);

/* A section of a relocatable object (a crt*.o) and the relocations that fill it. */
#define NOPI_ELF_MAX_CODE_RELS 32
typedef struct nopi_elf_coderel {
    uint64_t offset;
    uint32_t type;
    int64_t addend;
    const char *name;   /* the symbol's name, "" for none (a section's symbol) */
    unsigned shndx;     /* the section the symbol is defined in (SHN_UNDEF: none) */
    uint64_t value;     /* its value there */
} nopi_elf_coderel;

typedef struct nopi_elf_code {
    const char *bytes;   /* into the image */
    size_t size;
    unsigned index;      /* the section's index */
    size_t nrels;
    nopi_elf_coderel rels[NOPI_ELF_MAX_CODE_RELS];
} nopi_elf_code;

/* Section `name` of the ELF64 object image data[0, len) and its relocations; -1 when there
 * is no such section, or its relocations cannot be read or are more than the maximum. */
int nopi_elf_object_code(const char *data, size_t len, const char *name, nopi_elf_code *out);

#endif /* NEURONOP_ELFSYMS_H */
