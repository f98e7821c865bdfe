/*
 * elfsyms.c - reads the symbol table and named sections of an ELF64 file (see elfsyms.h).
 *
 * Every offset read from the file is checked against its size before use, and every header
 * is copied out rather than read in place, so a truncated, foreign or unaligned file gives an
 * error or its symbols, never an out-of-bounds or misaligned read.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"

static bool in_file(size_t len, uint64_t off, uint64_t size)
{
    return off <= len && size <= len - off;
}

/* Reads the ELF64 header of data[0, len) into eh and checks that its section headers lie in
 * the file and, with names, that it names its section-name table.  false when it is no
 * such file. */
static bool header_of(const char *data, size_t len, bool names, Elf64_Ehdr *eh)
{
    if (len < sizeof *eh)
        return false;
    memcpy(eh, data, sizeof *eh);
    return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
           eh->e_shentsize == sizeof(Elf64_Shdr) && (!names || eh->e_shstrndx < eh->e_shnum) &&
           in_file(len, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
}

/* Copies a header out of the file: tcc does not align them (with -g its section headers
 * start at any offset), so they are never read in place. */
static void get_shdr(const char *data, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh)
{
    memcpy(sh, data + eh->e_shoff + (size_t)i * sizeof *sh, sizeof *sh);
}

int nopi_elfsyms_read(const char *path, nopi_elfsym **syms, size_t *n, nop_error *err)
{
    *syms = NULL;
    *n = 0;
    char *data;
    size_t len;
    if (nopi_read_file(path, &data, &len) != 0)
        return nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "cannot read object file");
    Elf64_Ehdr eh;
    int rc = -1;
    if (!header_of(data, len, false, &eh))
        goto bad;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, str;
        get_shdr(data, &eh, i, &sh);
        if (sh.sh_type != SHT_SYMTAB)
            continue;
        if (sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(len, sh.sh_offset, sh.sh_size)) {
            nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "corrupt symbol table");
            goto out;
        }
        get_shdr(data, &eh, sh.sh_link, &str);
        if (!in_file(len, str.sh_offset, str.sh_size)) {
            nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "corrupt string table");
            goto out;
        }
        size_t count = sh.sh_size / sizeof(Elf64_Sym);
        const char *strtab = data + str.sh_offset;
        size_t strsize = str.sh_size;
        *syms = calloc(count ? count : 1, sizeof **syms);
        if (!*syms) {
            nopi_nomem(err);
            goto out;
        }
        for (size_t k = 0; k < count; k++) {
            Elf64_Sym sym;
            memcpy(&sym, data + sh.sh_offset + k * sizeof sym, sizeof sym);
            if (ELF64_ST_BIND(sym.st_info) == STB_LOCAL || sym.st_name >= strsize)
                continue;
            const char *name = strtab + sym.st_name;
            if (!memchr(name, '\0', strsize - sym.st_name) || !name[0])
                continue;
            nopi_elfsym *s = &(*syms)[(*n)++];
            s->name = strdup(name);
            s->defined = sym.st_shndx != SHN_UNDEF;
            s->function = ELF64_ST_TYPE(sym.st_info) == STT_FUNC;
            s->ifunc = ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC;
            s->weak = ELF64_ST_BIND(sym.st_info) == STB_WEAK;
            if (!s->name) {
                nopi_nomem(err);
                goto out;
            }
        }
        break;
    }
    rc = 0;
    goto out;
bad:
    nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "not an ELF64 object file");
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

/* The index of section `name` in the ELF64 image data[0, len), its header in *out, its name
 * and contents checked to lie in the image; -1 when there is no such section. */
static int section_index(const char *data, size_t len, const char *name, Elf64_Shdr *out)
{
    Elf64_Ehdr eh;
    if (!header_of(data, len, true, &eh))
        return -1;
    Elf64_Shdr names;
    get_shdr(data, &eh, eh.e_shstrndx, &names);
    if (!in_file(len, names.sh_offset, names.sh_size))
        return -1;
    size_t want = strlen(name) + 1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        get_shdr(data, &eh, i, out);
        if (out->sh_name >= names.sh_size || names.sh_size - out->sh_name < want ||
            memcmp(data + names.sh_offset + out->sh_name, name, want) != 0)
            continue;
        if (out->sh_type == SHT_NOBITS || !in_file(len, out->sh_offset, out->sh_size))
            return -1;
        return (int)i;
    }
    return -1;
}

int nopi_elf_section(const char *data, size_t len, const char *name, size_t *off, size_t *size,
                     uint64_t *addr)
{
    Elf64_Shdr sh;
    if (section_index(data, len, name, &sh) < 0)
        return -1;
    *off = (size_t)sh.sh_offset;
    *size = (size_t)sh.sh_size;
    if (addr)
        *addr = sh.sh_addr;
    return 0;
}

/* The symbol table of type `type` (SHT_SYMTAB, SHT_DYNSYM) of a file and its strings,
 * checked to lie in the file. */
static bool table_of(const char *data, size_t len, const Elf64_Ehdr *eh, unsigned type,
                     Elf64_Shdr *sym, Elf64_Shdr *str)
{
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        get_shdr(data, eh, i, sym);
        if (sym->sh_type != type)
            continue;
        if (sym->sh_link >= eh->e_shnum || sym->sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(len, sym->sh_offset, sym->sh_size))
            return false;
        get_shdr(data, eh, sym->sh_link, str);
        return in_file(len, str->sh_offset, str->sh_size);
    }
    return false;
}

/* The full symbol table of an object and its strings, checked to lie in the file. */
static bool symtab_of(const char *data, size_t len, const Elf64_Ehdr *eh, Elf64_Shdr *sym,
                      Elf64_Shdr *str)
{
    return table_of(data, len, eh, SHT_SYMTAB, sym, str);
}

const char *nopi_elf_symbol_at(const char *data, size_t len, uint64_t value, int type,
                               uint64_t *size)
{
    Elf64_Ehdr eh;
    Elf64_Shdr sym, str;
    /* libtcc links no .symtab: its libraries' symbols are all in .dynsym */
    if (!header_of(data, len, false, &eh) || (!symtab_of(data, len, &eh, &sym, &str) &&
                                              !table_of(data, len, &eh, SHT_DYNSYM, &sym, &str)))
        return NULL;
    for (size_t k = 0; k < sym.sh_size / sizeof(Elf64_Sym); k++) {
        Elf64_Sym v;
        memcpy(&v, data + sym.sh_offset + k * sizeof v, sizeof v);
        if (v.st_value != value || ELF64_ST_TYPE(v.st_info) != type ||
            v.st_shndx == SHN_UNDEF || v.st_name == 0 || v.st_name >= str.sh_size)
            continue;
        const char *name = data + str.sh_offset + v.st_name;
        if (!memchr(name, '\0', str.sh_size - v.st_name))
            continue;
        if (size)
            *size = v.st_size;
        return name;
    }
    return NULL;
}

/* Whether an object defines an indirect function, file-local ones included (a static
 * ifunc's resolver runs at load as any other's). */
static bool has_ifunc(const char *data, size_t len, const Elf64_Ehdr *eh)
{
    Elf64_Shdr sym, str;
    if (!symtab_of(data, len, eh, &sym, &str))
        return false;
    for (size_t k = 0; k < sym.sh_size / sizeof(Elf64_Sym); k++) {
        Elf64_Sym v;
        memcpy(&v, data + sym.sh_offset + k * sizeof v, sizeof v);
        if (ELF64_ST_TYPE(v.st_info) == STT_GNU_IFUNC)
            return true;
    }
    return false;
}

/* Whether a non-empty section of the object is of one of the ntypes types, or has a name that
 * starts with one of the n prefixes, or is one of the nexact names: one pass over the
 * section headers. */
static bool has_section(const char *data, size_t len, const Elf64_Ehdr *eh,
                        const uint32_t *types, size_t ntypes, const char *const *prefixes,
                        size_t n, const char *const *exact, size_t nexact)
{
    Elf64_Shdr names;
    get_shdr(data, eh, eh->e_shstrndx, &names);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        Elf64_Shdr sh;
        get_shdr(data, eh, i, &sh);
        if (sh.sh_size == 0)
            continue;
        for (size_t k = 0; k < ntypes; k++)
            if (sh.sh_type == types[k])
                return true;
        if (!in_file(len, names.sh_offset, names.sh_size) || sh.sh_name >= names.sh_size)
            continue;
        /* the name, bounded by the string table's end */
        const char *name = data + names.sh_offset + sh.sh_name;
        size_t room = (size_t)(names.sh_size - sh.sh_name);
        for (size_t k = 0; k < n; k++)
            if (room > strlen(prefixes[k]) && strncmp(name, prefixes[k], strlen(prefixes[k])) == 0)
                return true;
        for (size_t k = 0; k < nexact; k++)
            if (room > strlen(exact[k]) && memcmp(name, exact[k], strlen(exact[k]) + 1) == 0)
                return true;
    }
    return false;
}

bool nopi_elf_runs_at_load(const char *data, size_t len)
{
    Elf64_Ehdr eh;
    if (!header_of(data, len, true, &eh))
        return false;
    if (has_ifunc(data, len, &eh))
        return true;
    static const uint32_t types[] = { SHT_INIT_ARRAY, SHT_PREINIT_ARRAY, SHT_FINI_ARRAY };
    static const char *const prefixes[] = { ".init_array", ".preinit_array", ".ctors",
                                            ".fini_array", ".dtors" };
    static const char *const exact[] = { ".init", ".fini" };
    return has_section(data, len, &eh, types, 3, prefixes, 5, exact, 2);
}

/* Whether section sh (named name) is an array of functions the loader calls: 1 at load, 2
 * at unload, 0 neither. */
static int array_kind(const Elf64_Shdr *sh, const char *name)
{
    if (sh->sh_type == SHT_INIT_ARRAY || sh->sh_type == SHT_PREINIT_ARRAY ||
        strncmp(name, ".init_array", 11) == 0 || strncmp(name, ".preinit_array", 14) == 0 ||
        strncmp(name, ".ctors", 6) == 0)
        return 1;
    if (sh->sh_type == SHT_FINI_ARRAY || strncmp(name, ".fini_array", 11) == 0 ||
        strncmp(name, ".dtors", 6) == 0)
        return 2;
    return 0;
}

/* The function symbol the relocation r (of symbol table sym, strings str) reaches: its own
 * symbol, or the function at its addend in the section a section symbol stands for. */
static const char *reloc_function(const char *data, const Elf64_Shdr *sym, const Elf64_Shdr *str,
                                  const Elf64_Rela *r)
{
    size_t n = sym->sh_size / sizeof(Elf64_Sym), idx = ELF64_R_SYM(r->r_info);
    if (idx >= n)
        return NULL;
    Elf64_Sym s;
    memcpy(&s, data + sym->sh_offset + idx * sizeof s, sizeof s);
    if (ELF64_ST_TYPE(s.st_info) == STT_SECTION) {
        bool found = false;
        for (size_t k = 0; k < n && !found; k++) {
            Elf64_Sym f;
            memcpy(&f, data + sym->sh_offset + k * sizeof f, sizeof f);
            if (ELF64_ST_TYPE(f.st_info) == STT_FUNC && f.st_shndx == s.st_shndx &&
                r->r_addend >= 0 && f.st_value == (uint64_t)r->r_addend)
                s = f, found = true;
        }
        if (!found)
            return NULL;
    }
    if (s.st_name == 0 || s.st_name >= str->sh_size)
        return NULL;
    const char *name = data + str->sh_offset + s.st_name;
    return memchr(name, '\0', str->sh_size - s.st_name) ? name : NULL;
}

int nopi_elf_load_function(const char *data, size_t len, char *buf, size_t size)
{
    Elf64_Ehdr eh;
    Elf64_Shdr sym, str, names;
    if (!header_of(data, len, true, &eh) || !symtab_of(data, len, &eh, &sym, &str))
        return -1;
    get_shdr(data, &eh, eh.e_shstrndx, &names);
    if (!in_file(len, names.sh_offset, names.sh_size))
        return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr rela, target;
        get_shdr(data, &eh, i, &rela);
        if (rela.sh_type != SHT_RELA || rela.sh_info >= eh.e_shnum ||
            !in_file(len, rela.sh_offset, rela.sh_size))
            continue;
        get_shdr(data, &eh, rela.sh_info, &target);
        if (target.sh_name >= names.sh_size ||
            !memchr(data + names.sh_offset + target.sh_name, '\0', names.sh_size - target.sh_name))
            continue;
        int kind = array_kind(&target, data + names.sh_offset + target.sh_name);
        if (!kind || rela.sh_size < sizeof(Elf64_Rela))
            continue;
        Elf64_Rela r;
        memcpy(&r, data + rela.sh_offset, sizeof r);
        const char *fn = reloc_function(data, &sym, &str, &r);
        if (fn) {
            nopi_strlcpy(buf, fn, size);
            return kind - 1;
        }
    }
    return -1;
}

bool nopi_elf_has_lto(const char *data, size_t len)
{
    Elf64_Ehdr eh;
    static const char *const prefixes[] = { ".gnu.lto_", ".gnu.offload_lto_" };
    return header_of(data, len, true, &eh) &&
           has_section(data, len, &eh, NULL, 0, prefixes, 2, NULL, 0);
}

/* Writes header sh back as section i of the image. */
static void put_shdr(char *data, int i, const Elf64_Shdr *sh)
{
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    memcpy(data + eh.e_shoff + (size_t)i * sizeof *sh, sh, sizeof *sh);
}

bool nopi_elf_disarm_section(char *data, size_t len, const char *name, const char *inert)
{
    Elf64_Shdr sh;
    int i = strlen(inert) == strlen(name) ? section_index(data, len, name, &sh) : -1;
    if (i < 0)
        return false;
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    Elf64_Shdr names;
    get_shdr(data, &eh, eh.e_shstrndx, &names);
    memcpy(data + names.sh_offset + sh.sh_name, inert, strlen(inert));   /* no offset moves */
    sh.sh_type = SHT_PROGBITS;
    put_shdr(data, i, &sh);
    return true;
}

bool nopi_elf_section_flags(char *data, size_t len, const char *name, uint64_t set,
                            uint64_t clear)
{
    Elf64_Shdr sh;
    int i = section_index(data, len, name, &sh);
    if (i < 0 || ((sh.sh_flags | set) & ~clear) == sh.sh_flags)
        return false;
    sh.sh_flags = (sh.sh_flags | set) & ~clear;
    put_shdr(data, i, &sh);
    return true;
}

/* The variable of section shndx holding the byte a PC-relative field with this addend
 * reaches (4 or 8 bytes of the instruction follow the field). */
static bool variable_at(const char *data, const Elf64_Shdr *sym, unsigned shndx,
                        int64_t addend, Elf64_Sym *out)
{
    for (int64_t tail = 4; tail <= 8; tail += 4) {
        int64_t at = addend + tail;
        for (size_t k = 0; k < sym->sh_size / sizeof *out; k++) {
            Elf64_Sym v;
            memcpy(&v, data + sym->sh_offset + k * sizeof v, sizeof v);
            if (ELF64_ST_TYPE(v.st_info) == STT_OBJECT && v.st_shndx == shndx && at >= 0 &&
                (uint64_t)at >= v.st_value && (uint64_t)at - v.st_value < (v.st_size ? v.st_size : 1)) {
                *out = v;
                return true;
            }
        }
    }
    return false;
}

int nopi_elf_startup_object(const char *data, size_t len, char *buf, size_t size)
{
    size_t roff, rsize;
    Elf64_Ehdr eh;
    Elf64_Shdr sym, str;
    if (nopi_elf_section(data, len, ".rela.text.startup", &roff, &rsize, NULL) != 0 ||
        !header_of(data, len, false, &eh) || !symtab_of(data, len, &eh, &sym, &str))
        return -1;
    for (size_t k = 0; k + sizeof(Elf64_Rela) <= rsize; k += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        Elf64_Sym s;
        memcpy(&r, data + roff + k, sizeof r);
        size_t idx = ELF64_R_SYM(r.r_info);
        if (idx >= sym.sh_size / sizeof s)
            continue;
        memcpy(&s, data + sym.sh_offset + idx * sizeof s, sizeof s);
        /* a static is reached through its section's symbol plus an offset: the variable
         * that offset falls in (the addend is the offset less the bytes after the field) */
        if (ELF64_ST_TYPE(s.st_info) == STT_SECTION && !variable_at(data, &sym, s.st_shndx,
                                                                    r.r_addend, &s))
            continue;
        if (ELF64_ST_TYPE(s.st_info) != STT_OBJECT || s.st_name >= str.sh_size)
            continue;
        const char *name = data + str.sh_offset + s.st_name;
        if (!memchr(name, '\0', str.sh_size - s.st_name) || !name[0])
            continue;
        nopi_strlcpy(buf, name, size);
        return 0;
    }
    return -1;
}
