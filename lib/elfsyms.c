/*
 * elfsyms.c - reads the symbol table of an ELF64 object file (see elfsyms.h).
 *
 * Every offset read from the file is checked against its size before use, so a truncated or
 * foreign file gives an error, never an out-of-bounds read.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"

static bool in_file(size_t len, uint64_t off, uint64_t size)
{
    return off <= len && size <= len - off;
}

int nopi_elfsyms_read(const char *path, nopi_elfsym **syms, size_t *n, nop_error *err)
{
    *syms = NULL;
    *n = 0;
    char *data;
    size_t len;
    if (nopi_read_file(path, &data, &len) != 0)
        return nopi_fail(err, NOP_EXIT_COMPILE, path, 0, 0, "cannot read object file");
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    int rc = -1;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(len, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
        nopi_fail(err, NOP_EXIT_COMPILE, path, 0, 0, "not an ELF64 object file");
        goto out;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB)
            continue;
        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(len, sh[i].sh_offset, sh[i].sh_size) ||
            !in_file(len, sh[sh[i].sh_link].sh_offset, sh[sh[i].sh_link].sh_size)) {
            nopi_fail(err, NOP_EXIT_COMPILE, path, 0, 0, "corrupt symbol table");
            goto out;
        }
        const Elf64_Sym *sym = (const Elf64_Sym *)(data + sh[i].sh_offset);
        size_t count = sh[i].sh_size / sizeof *sym;
        const char *strtab = data + sh[sh[i].sh_link].sh_offset;
        size_t strsize = sh[sh[i].sh_link].sh_size;
        *syms = calloc(count ? count : 1, sizeof **syms);
        if (!*syms) {
            nopi_fail(err, NOP_EXIT_COMPILE, path, 0, 0, "out of memory");
            goto out;
        }
        for (size_t k = 0; k < count; k++) {
            if (ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL || sym[k].st_name >= strsize)
                continue;
            const char *name = strtab + sym[k].st_name;
            if (!memchr(name, '\0', strsize - sym[k].st_name) || !name[0])
                continue;
            nopi_elfsym *s = &(*syms)[(*n)++];
            s->name = strdup(name);
            s->defined = sym[k].st_shndx != SHN_UNDEF;
            s->function = ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC;
            if (!s->name) {
                nopi_fail(err, NOP_EXIT_COMPILE, path, 0, 0, "out of memory");
                goto out;
            }
        }
        break;
    }
    rc = 0;
out:
    if (rc != 0) {
        nopi_elfsyms_free(*syms, *n);
        *syms = NULL;
        *n = 0;
    }
    free(data);
    return rc;
}

void nopi_elfsyms_free(nopi_elfsym *syms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(syms[i].name);
    free(syms);
}
