/*
 * peek.c - the op names of a built library, read from its file without loading it.
 *
 * Loading a library (library.c) runs its code: the dynamic loader calls its ELF constructors
 * before neuronop sees a byte of it.  Shell completion and other tools that only list a
 * library's ops must not run a file the user has merely typed, so this reads the descriptor
 * (neuronop/abi.h) as data.  In the file its pointers are R_X86_64_RELATIVE relocations whose
 * addends are the addresses they point at; the names are found by following those addends
 * through the file's PT_LOAD segments.  Every address, offset and count is checked against
 * the file image, so a file that is not a library of this format gives an error, never a read
 * outside it.
 */
#include <elf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "library.h"

#define MAX_OPS 65536   /* far beyond any manifest; bounds what a hostile count allocates */

struct image {
    const char *data;
    size_t len;
    Elf64_Ehdr eh;
};

static bool in_file(const struct image *im, uint64_t off, uint64_t size)
{
    return off <= im->len && size <= im->len - off;
}

/* The file offset of the bytes [addr, addr + size) of the loaded image, when a PT_LOAD
 * segment holds all of them in the file.  0 or -1. */
static int offset_of(const struct image *im, uint64_t addr, uint64_t size, size_t *off)
{
    for (unsigned i = 0; i < im->eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, im->data + im->eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || ph.p_filesz > UINT64_MAX - ph.p_vaddr)
            continue;
        uint64_t rel = addr - ph.p_vaddr;
        if (rel > ph.p_filesz || size > ph.p_filesz - rel || !in_file(im, ph.p_offset + rel, size))
            continue;
        *off = (size_t)(ph.p_offset + rel);
        return 0;
    }
    return -1;
}

/* Copies size bytes at address addr of the loaded image into out.  0 or -1. */
static int read_at(const struct image *im, uint64_t addr, void *out, size_t size)
{
    size_t off;
    if (offset_of(im, addr, size, &off) != 0)
        return -1;
    memcpy(out, im->data + off, size);
    return 0;
}

/* The address the pointer stored at addr holds once loaded: the addend of its RELATIVE
 * relocation, or the stored value when the file has none for it.  0 or -1. */
static int pointer_at(const struct image *im, uint64_t addr, uint64_t *target)
{
    for (unsigned i = 0; i < im->eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, im->data + im->eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_RELA || sh.sh_entsize != sizeof(Elf64_Rela) ||
            !in_file(im, sh.sh_offset, sh.sh_size))
            continue;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Rela); k++) {
            Elf64_Rela r;
            memcpy(&r, im->data + sh.sh_offset + k * sizeof r, sizeof r);
            if (r.r_offset == addr && ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE) {
                *target = (uint64_t)r.r_addend;
                return 0;
            }
        }
    }
    return read_at(im, addr, target, sizeof *target);
}

/* The NUL-terminated string at address addr, inside the file.  NULL when there is none. */
static const char *string_at(const struct image *im, uint64_t addr)
{
    size_t off;
    if (offset_of(im, addr, 1, &off) != 0 || !memchr(im->data + off, '\0', im->len - off))
        return NULL;
    return im->data + off;
}

/* The address of the exported symbol `name`, from .dynsym.  0 or -1. */
static int dynamic_symbol(const struct image *im, const char *name, uint64_t *value)
{
    for (unsigned i = 0; i < im->eh.e_shnum; i++) {
        Elf64_Shdr sh, str;
        memcpy(&sh, im->data + im->eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize != sizeof(Elf64_Sym) ||
            sh.sh_link >= im->eh.e_shnum || !in_file(im, sh.sh_offset, sh.sh_size))
            continue;
        memcpy(&str, im->data + im->eh.e_shoff + (size_t)sh.sh_link * sizeof str, sizeof str);
        if (!in_file(im, str.sh_offset, str.sh_size))
            continue;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
            Elf64_Sym sym;
            memcpy(&sym, im->data + sh.sh_offset + k * sizeof sym, sizeof sym);
            size_t left = str.sh_size > sym.st_name ? str.sh_size - sym.st_name : 0;
            if (sym.st_shndx != SHN_UNDEF && left > strlen(name) &&
                memcmp(im->data + str.sh_offset + sym.st_name, name, strlen(name) + 1) == 0) {
                *value = sym.st_value;
                return 0;
            }
        }
    }
    return -1;
}

/* Whether data[0, len) has an ELF64 x86-64 header whose program and section header tables
 * lie inside it; fills im. */
static bool is_elf(struct image *im, const char *data, size_t len)
{
    im->data = data;
    im->len = len;
    if (len < sizeof im->eh)
        return false;
    memcpy(&im->eh, data, sizeof im->eh);
    const Elf64_Ehdr *eh = &im->eh;
    return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
           eh->e_machine == EM_X86_64 && eh->e_phentsize == sizeof(Elf64_Phdr) &&
           eh->e_shentsize == sizeof(Elf64_Shdr) &&
           in_file(im, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) &&
           in_file(im, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
}

/* Reads the op names of the library image im into names (calloc'd by the caller for nops).
 * 0, or -1 with err filled. */
static int read_names(const struct image *im, uint64_t ops, int nops, char **names,
                      const char *path, nop_error *err)
{
    for (int i = 0; i < nops; i++) {
        uint64_t at;
        const char *s = NULL;
        if (pointer_at(im, ops + (uint64_t)i * sizeof(nt__op_desc) + offsetof(nt__op_desc, name),
                       &at) == 0)
            s = string_at(im, at);
        if (!s)
            return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op "
                             "library: op %d has no name", path, i + 1);
        if (!(names[i] = strdup(s)))
            return nopi_nomem(err);
    }
    return 0;
}

int nop_library_peek_ops(const char *path, char ***names, int *n, nop_error *err)
{
    *names = NULL;
    *n = 0;
    char *data;
    size_t len;
    if (nopi_read_file(path, &data, &len) != 0)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s'", path);
    struct image im;
    uint64_t desc, ops = 0;
    unsigned magic, abi;
    int nops, rc = -1;
    if (!is_elf(&im, data, len) || dynamic_symbol(&im, NT_LIB_SYMBOL, &desc) != 0 ||
        read_at(&im, desc + offsetof(nt__lib_desc, magic), &magic, sizeof magic) != 0 ||
        magic != NT_LIB_MAGIC ||
        read_at(&im, desc + offsetof(nt__lib_desc, abi_version), &abi, sizeof abi) != 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op library", path);
        goto out;
    }
    if (abi != NT_ABI_VERSION) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is in library format %u; this "
                  "neuronop reads format %d", path, abi, NT_ABI_VERSION);
        goto out;
    }
    if (read_at(&im, desc + offsetof(nt__lib_desc, nops), &nops, sizeof nops) != 0 ||
        nops < 0 || nops > MAX_OPS ||
        (nops > 0 && pointer_at(&im, desc + offsetof(nt__lib_desc, ops), &ops) != 0)) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op library: its "
                  "op table is unreadable", path);
        goto out;
    }
    if (!(*names = calloc(nops ? (size_t)nops : 1, sizeof **names))) {
        nopi_nomem(err);
        goto out;
    }
    rc = nops ? read_names(&im, ops, nops, *names, path, err) : 0;
    if (rc == 0)
        *n = nops;
    else {
        nop_names_free(*names, nops);
        *names = NULL;
    }
out:
    free(data);
    return rc;
}

void nop_names_free(char **names, int n)
{
    if (!names)
        return;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
