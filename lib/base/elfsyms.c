/*
 * elfsyms.c - reads the symbol table and named sections of an ELF64 file, and a shared
 * library as the loader maps it: program headers, dynamic segment, relocations (see elfsyms.h).
 *
 * Every offset read from the file is checked against its size before use, and every header
 * is copied out rather than read in place, so a truncated, foreign or unaligned file gives an
 * error or its symbols, never an out-of-bounds or misaligned read.
 */
#include <elf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "elfsyms.h"

static bool in_file(size_t len, uint64_t off, uint64_t size)
{
    return off <= len && size <= len - off;
}

/* Where a file's section headers are, how many there are and which one holds their names. */
typedef struct {
    uint64_t shoff;
    size_t shnum;
    size_t shstrndx;
} elf_sections;

/* Reads the ELF64 header of data[0, len), where its section headers are into es, and checks
 * that they lie in the file and, with names, that it names its section-name table.  false
 * when it is no such file.  An object of SHN_LORESERVE (0xff00) sections or more, which gcc writes for a
 * source of that many (a section attribute each, or -ffunction-sections), has 0 in e_shnum
 * and SHN_XINDEX in e_shstrndx: the two numbers are then section 0's sh_size and sh_link
 * (the gABI's extended section numbering). */
static bool header_of(const char *data, size_t len, bool names, elf_sections *es)
{
    Elf64_Ehdr eh;
    if (len < sizeof eh)
        return false;
    memcpy(&eh, data, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr))
        return false;
    es->shoff = eh.e_shoff;
    es->shnum = eh.e_shnum;
    es->shstrndx = eh.e_shstrndx;
    if (eh.e_shoff != 0 && (eh.e_shnum == 0 || eh.e_shstrndx == SHN_XINDEX)) {
        Elf64_Shdr zero;
        if (!in_file(len, eh.e_shoff, sizeof zero))
            return false;
        memcpy(&zero, data + eh.e_shoff, sizeof zero);
        if (eh.e_shnum == 0)
            es->shnum = zero.sh_size > len ? len : (size_t)zero.sh_size;   /* checked below */
        if (eh.e_shstrndx == SHN_XINDEX)
            es->shstrndx = zero.sh_link;
    }
    return (!names || es->shstrndx < es->shnum) && es->shnum <= len / sizeof(Elf64_Shdr) &&
           in_file(len, es->shoff, (uint64_t)es->shnum * sizeof(Elf64_Shdr));
}

/* Copies a header out of the file: tcc does not align them (with -g its section headers
 * start at any offset), so they are never read in place. */
static void get_shdr(const char *data, const elf_sections *es, size_t i, Elf64_Shdr *sh)
{
    memcpy(sh, data + es->shoff + i * sizeof *sh, sizeof *sh);
}

int nopi_elfsyms_read(const char *path, nopi_elfsym **syms, size_t *n, nop_error *err)
{
    *syms = NULL;
    *n = 0;
    char *data;
    size_t len;
    if (nopi_read_file(path, &data, &len) != 0)
        return nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "cannot read object file");
    elf_sections es;
    int rc = -1;
    if (!header_of(data, len, false, &es))
        goto bad;
    for (size_t i = 0; i < es.shnum; i++) {
        Elf64_Shdr sh, str;
        get_shdr(data, &es, i, &sh);
        if (sh.sh_type != SHT_SYMTAB)
            continue;
        if (sh.sh_link >= es.shnum || sh.sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(len, sh.sh_offset, sh.sh_size)) {
            nopi_fail(err, NOP_ERR_COMPILE, path, 0, 0, "corrupt symbol table");
            goto out;
        }
        get_shdr(data, &es, sh.sh_link, &str);
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

/* Finds section `name` in the ELF64 image data[0, len): its index in *index, its header in
 * *out and the file's section table in *es, its name and contents checked to lie in the
 * image; false when there is no such section. */
static bool find_section(const char *data, size_t len, const char *name, elf_sections *es,
                         size_t *index, Elf64_Shdr *out)
{
    if (!header_of(data, len, true, es))
        return false;
    Elf64_Shdr names;
    get_shdr(data, es, es->shstrndx, &names);
    if (!in_file(len, names.sh_offset, names.sh_size))
        return false;
    size_t want = strlen(name) + 1;
    for (size_t i = 0; i < es->shnum; i++) {
        get_shdr(data, es, i, out);
        if (out->sh_name >= names.sh_size || names.sh_size - out->sh_name < want ||
            memcmp(data + names.sh_offset + out->sh_name, name, want) != 0)
            continue;
        if (out->sh_type == SHT_NOBITS || !in_file(len, out->sh_offset, out->sh_size))
            return false;
        *index = i;
        return true;
    }
    return false;
}

int nopi_elf_section(const char *data, size_t len, const char *name, size_t *off, size_t *size,
                     uint64_t *addr)
{
    elf_sections es;
    size_t i;
    Elf64_Shdr sh;
    if (!find_section(data, len, name, &es, &i, &sh))
        return -1;
    *off = (size_t)sh.sh_offset;
    *size = (size_t)sh.sh_size;
    if (addr)
        *addr = sh.sh_addr;
    return 0;
}

/* A symbol table and its strings, checked to lie in the file, and the section indices of
 * its symbols in sections numbered SHN_LORESERVE or more (SHT_SYMTAB_SHNDX; xndx.sh_size
 * 0 when the file has none or it does not lie in the file). */
typedef struct {
    Elf64_Shdr sym, str, xndx;
    size_t count;   /* symbols */
} elf_symtab;

/* The symbol table of type `type` (SHT_SYMTAB, SHT_DYNSYM) of a file. */
static bool table_of(const char *data, size_t len, const elf_sections *es, unsigned type,
                     elf_symtab *t)
{
    for (size_t i = 0; i < es->shnum; i++) {
        get_shdr(data, es, i, &t->sym);
        if (t->sym.sh_type != type)
            continue;
        if (t->sym.sh_link >= es->shnum || t->sym.sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(len, t->sym.sh_offset, t->sym.sh_size))
            return false;
        get_shdr(data, es, t->sym.sh_link, &t->str);
        if (!in_file(len, t->str.sh_offset, t->str.sh_size))
            return false;
        t->count = t->sym.sh_size / sizeof(Elf64_Sym);
        memset(&t->xndx, 0, sizeof t->xndx);
        for (size_t k = 0; k < es->shnum; k++) {
            Elf64_Shdr x;
            get_shdr(data, es, k, &x);
            if (x.sh_type == SHT_SYMTAB_SHNDX && x.sh_link == i &&
                in_file(len, x.sh_offset, x.sh_size)) {
                t->xndx = x;
                break;
            }
        }
        return true;
    }
    return false;
}

/* The full symbol table of an object. */
static bool symtab_of(const char *data, size_t len, const elf_sections *es, elf_symtab *t)
{
    return table_of(data, len, es, SHT_SYMTAB, t);
}

/* Symbol k of table t. */
static void get_sym(const char *data, const elf_symtab *t, size_t k, Elf64_Sym *s)
{
    memcpy(s, data + t->sym.sh_offset + k * sizeof *s, sizeof *s);
}

/* The index of the section symbol k (s) is defined in, which for one numbered
 * SHN_LORESERVE or more is in the table's SHT_SYMTAB_SHNDX section; SIZE_MAX when that has
 * no entry for it.  (A special index, SHN_ABS or SHN_COMMON, is returned as it is.) */
static size_t sym_section(const char *data, const elf_symtab *t, size_t k, const Elf64_Sym *s)
{
    if (s->st_shndx != SHN_XINDEX)
        return s->st_shndx;
    uint32_t shndx;
    if (k >= t->xndx.sh_size / sizeof shndx)
        return SIZE_MAX;
    memcpy(&shndx, data + t->xndx.sh_offset + k * sizeof shndx, sizeof shndx);
    return shndx;
}

/* The name of symbol s of table t: NULL when it has none or it does not end inside the
 * table. */
static const char *sym_name(const char *data, const elf_symtab *t, const Elf64_Sym *s)
{
    if (s->st_name == 0 || s->st_name >= t->str.sh_size)
        return NULL;
    const char *name = data + t->str.sh_offset + s->st_name;
    return memchr(name, '\0', t->str.sh_size - s->st_name) ? name : NULL;
}

const char *nopi_elf_symbol_at(const char *data, size_t len, uint64_t value, int type,
                               uint64_t *size)
{
    elf_sections es;
    elf_symtab t;
    /* libtcc links no .symtab: its libraries' symbols are all in .dynsym */
    if (!header_of(data, len, false, &es) ||
        (!symtab_of(data, len, &es, &t) && !table_of(data, len, &es, SHT_DYNSYM, &t)))
        return NULL;
    for (size_t k = 0; k < t.count; k++) {
        Elf64_Sym v;
        get_sym(data, &t, k, &v);
        if (v.st_value != value || ELF64_ST_TYPE(v.st_info) != type || v.st_shndx == SHN_UNDEF)
            continue;
        const char *name = sym_name(data, &t, &v);
        if (!name)
            continue;
        if (size)
            *size = v.st_size;
        return name;
    }
    return NULL;
}

/* Whether an object defines an indirect function, file-local ones included (a static
 * ifunc's resolver runs at load as any other's). */
static bool has_ifunc(const char *data, size_t len, const elf_sections *es)
{
    elf_symtab t;
    if (!symtab_of(data, len, es, &t))
        return false;
    for (size_t k = 0; k < t.count; k++) {
        Elf64_Sym v;
        get_sym(data, &t, k, &v);
        if (ELF64_ST_TYPE(v.st_info) == STT_GNU_IFUNC)
            return true;
    }
    return false;
}

/* Whether a non-empty section of the object is of one of the ntypes types, or has a name that
 * starts with one of the n prefixes, or is one of the nexact names: one pass over the
 * section headers. */
static bool has_section(const char *data, size_t len, const elf_sections *es,
                        const uint32_t *types, size_t ntypes, const char *const *prefixes,
                        size_t n, const char *const *exact, size_t nexact)
{
    Elf64_Shdr names;
    get_shdr(data, es, es->shstrndx, &names);
    for (size_t i = 0; i < es->shnum; i++) {
        Elf64_Shdr sh;
        get_shdr(data, es, i, &sh);
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
    elf_sections es;
    if (!header_of(data, len, true, &es))
        return false;
    if (has_ifunc(data, len, &es))
        return true;
    static const uint32_t types[] = { SHT_INIT_ARRAY, SHT_PREINIT_ARRAY, SHT_FINI_ARRAY };
    static const char *const prefixes[] = { ".init_array", ".preinit_array", ".ctors",
                                            ".fini_array", ".dtors" };
    static const char *const exact[] = { ".init", ".fini" };
    return has_section(data, len, &es, types, 3, prefixes, 5, exact, 2);
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

/* The function symbol the relocation r (of symbol table t) reaches: its own symbol, or the
 * function at its addend in the section a section symbol stands for. */
static const char *reloc_function(const char *data, const elf_symtab *t, const Elf64_Rela *r)
{
    size_t idx = ELF64_R_SYM(r->r_info);
    if (idx >= t->count)
        return NULL;
    Elf64_Sym s;
    get_sym(data, t, idx, &s);
    if (ELF64_ST_TYPE(s.st_info) == STT_SECTION) {
        size_t shndx = sym_section(data, t, idx, &s);
        bool found = false;
        for (size_t k = 0; k < t->count && !found && shndx != SIZE_MAX; k++) {
            Elf64_Sym f;
            get_sym(data, t, k, &f);
            if (ELF64_ST_TYPE(f.st_info) == STT_FUNC && sym_section(data, t, k, &f) == shndx &&
                r->r_addend >= 0 && f.st_value == (uint64_t)r->r_addend)
                s = f, found = true;
        }
        if (!found)
            return NULL;
    }
    return sym_name(data, t, &s);
}

int nopi_elf_load_function(const char *data, size_t len, char *buf, size_t size)
{
    elf_sections es;
    elf_symtab t;
    Elf64_Shdr names;
    if (!header_of(data, len, true, &es) || !symtab_of(data, len, &es, &t))
        return -1;
    get_shdr(data, &es, es.shstrndx, &names);
    if (!in_file(len, names.sh_offset, names.sh_size))
        return -1;
    for (size_t i = 0; i < es.shnum; i++) {
        Elf64_Shdr rela, target;
        get_shdr(data, &es, i, &rela);
        if (rela.sh_type != SHT_RELA || rela.sh_info >= es.shnum ||
            !in_file(len, rela.sh_offset, rela.sh_size))
            continue;
        get_shdr(data, &es, rela.sh_info, &target);
        if (target.sh_name >= names.sh_size ||
            !memchr(data + names.sh_offset + target.sh_name, '\0', names.sh_size - target.sh_name))
            continue;
        int kind = array_kind(&target, data + names.sh_offset + target.sh_name);
        if (!kind || rela.sh_size < sizeof(Elf64_Rela))
            continue;
        Elf64_Rela r;
        memcpy(&r, data + rela.sh_offset, sizeof r);
        const char *fn = reloc_function(data, &t, &r);
        if (fn) {
            nopi_strlcpy(buf, fn, size);
            return kind - 1;
        }
    }
    return -1;
}

bool nopi_elf_has_lto(const char *data, size_t len)
{
    elf_sections es;
    static const char *const prefixes[] = { ".gnu.lto_", ".gnu.offload_lto_" };
    return header_of(data, len, true, &es) &&
           has_section(data, len, &es, NULL, 0, prefixes, 2, NULL, 0);
}

bool nopi_elf_has_tls(const char *data, size_t len)
{
    elf_sections es;
    if (!header_of(data, len, true, &es))
        return false;
    for (size_t i = 0; i < es.shnum; i++) {
        Elf64_Shdr sh;
        get_shdr(data, &es, i, &sh);
        if (sh.sh_size != 0 && (sh.sh_flags & SHF_TLS))
            return true;
    }
    return false;
}

/* Writes header sh back as section i of the image. */
static void put_shdr(char *data, const elf_sections *es, size_t i, const Elf64_Shdr *sh)
{
    memcpy(data + es->shoff + i * sizeof *sh, sh, sizeof *sh);
}

bool nopi_elf_disarm_section(char *data, size_t len, const char *name, const char *inert)
{
    elf_sections es;
    size_t i;
    Elf64_Shdr sh;
    if (strlen(inert) != strlen(name) || !find_section(data, len, name, &es, &i, &sh))
        return false;
    Elf64_Shdr names;
    get_shdr(data, &es, es.shstrndx, &names);
    memcpy(data + names.sh_offset + sh.sh_name, inert, strlen(inert));   /* no offset moves */
    sh.sh_type = SHT_PROGBITS;
    put_shdr(data, &es, i, &sh);
    return true;
}

bool nopi_elf_section_flags(char *data, size_t len, const char *name, uint64_t set,
                            uint64_t clear)
{
    elf_sections es;
    size_t i;
    Elf64_Shdr sh;
    if (!find_section(data, len, name, &es, &i, &sh) ||
        ((sh.sh_flags | set) & ~clear) == sh.sh_flags)
        return false;
    sh.sh_flags = (sh.sh_flags | set) & ~clear;
    put_shdr(data, &es, i, &sh);
    return true;
}

/* The variable of section shndx holding the byte a PC-relative field with this addend
 * reaches (4 or 8 bytes of the instruction follow the field).  (An addend that puts that
 * byte outside [0, INT64_MAX] reaches none.) */
static bool variable_at(const char *data, const elf_symtab *t, size_t shndx, int64_t addend,
                        Elf64_Sym *out)
{
    for (int64_t tail = 4; tail <= 8; tail += 4) {
        if (addend < -tail || addend > INT64_MAX - tail)
            continue;
        uint64_t at = (uint64_t)(addend + tail);
        for (size_t k = 0; k < t->count; k++) {
            Elf64_Sym v;
            get_sym(data, t, k, &v);
            if (ELF64_ST_TYPE(v.st_info) == STT_OBJECT && sym_section(data, t, k, &v) == shndx &&
                at >= v.st_value && at - v.st_value < (v.st_size ? v.st_size : 1)) {
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
    elf_sections es;
    elf_symtab t;
    if (nopi_elf_section(data, len, ".rela.text.startup", &roff, &rsize, NULL) != 0 ||
        !header_of(data, len, false, &es) || !symtab_of(data, len, &es, &t))
        return -1;
    for (size_t k = 0; k + sizeof(Elf64_Rela) <= rsize; k += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        Elf64_Sym s;
        memcpy(&r, data + roff + k, sizeof r);
        size_t idx = ELF64_R_SYM(r.r_info);
        if (idx >= t.count)
            continue;
        get_sym(data, &t, idx, &s);
        /* a static is reached through its section's symbol plus an offset: the variable
         * that offset falls in (the addend is the offset less the bytes after the field) */
        if (ELF64_ST_TYPE(s.st_info) == STT_SECTION) {
            size_t shndx = sym_section(data, &t, idx, &s);
            if (shndx == SIZE_MAX || !variable_at(data, &t, shndx, r.r_addend, &s))
                continue;
        }
        const char *name = ELF64_ST_TYPE(s.st_info) == STT_OBJECT ? sym_name(data, &t, &s) : NULL;
        if (!name || !name[0])
            continue;
        nopi_strlcpy(buf, name, size);
        return 0;
    }
    return -1;
}

/* ---- a shared library as the loader maps it --------------------------------------------- */

#ifndef DT_RELR
#define DT_RELRSZ 35
#define DT_RELR 36
#define DT_RELRENT 37
#endif

enum { PAGE = 4096 };

/* Whether a + b overflows; else *sum holds it. */
static bool add_over(uint64_t a, uint64_t b, uint64_t *sum)
{
    *sum = a + b;
    return *sum < a;
}

/* Checks a PT_LOAD header and keeps it in im; NULL, or why the loader could not map it. */
static const char *keep_load(nopi_elf_image *im, const Elf64_Phdr *ph)
{
    uint64_t end;
    if (im->nload == NOPI_ELF_MAX_LOADS)
        return "more loadable segments than a linker writes";
    if (ph->p_filesz > ph->p_memsz || !in_file(im->len, ph->p_offset, ph->p_filesz) ||
        add_over(ph->p_vaddr, ph->p_memsz, &end) || end > UINT64_MAX - PAGE)
        return "a loadable segment outside the file or the address space";
    /* the loader maps the file's pages, so a segment's offset and address agree in a page */
    if ((ph->p_vaddr - ph->p_offset) % PAGE != 0)
        return "a loadable segment whose offset and address differ within a page";
    /* in ascending order, no two in one page: no later mapping replaces an earlier one's */
    if (im->nload > 0) {
        const nopi_elf_load *prev = &im->load[im->nload - 1];
        uint64_t prev_end = (prev->vaddr + prev->memsz + PAGE - 1) / PAGE * PAGE;
        if (ph->p_vaddr / PAGE * PAGE < prev_end)
            return "loadable segments out of order or sharing a page";
    }
    nopi_elf_load *l = &im->load[im->nload++];
    l->vaddr = ph->p_vaddr, l->memsz = ph->p_memsz, l->offset = ph->p_offset;
    l->filesz = ph->p_filesz, l->flags = ph->p_flags;
    return NULL;
}

const char *nopi_elf_image_open(const char *data, size_t len, nopi_elf_image *im)
{
    memset(im, 0, sizeof *im);
    im->data = data, im->len = len;
    Elf64_Ehdr eh;
    if (len < sizeof eh)
        return "not an ELF file";
    memcpy(&eh, data, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN || eh.e_machine != EM_X86_64)
        return "not an x86-64 shared library";
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM ||
        !in_file(len, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
        return "program headers outside the file";
    int ndynamic = 0;
    uint64_t dyn = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, data + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        const char *why = NULL;
        if (ph.p_type == PT_LOAD)
            why = keep_load(im, &ph);
        else if (ph.p_type == PT_DYNAMIC)
            ndynamic++, dyn = ph.p_vaddr, im->dyn_size = ph.p_memsz;
        else if (ph.p_type == PT_INTERP)
            im->interp = true;
        else if (ph.p_type == PT_GNU_STACK && (ph.p_flags & PF_X))
            im->exec_stack = true;
        else if (ph.p_type == PT_GNU_RELRO)
            im->relro_vaddr = ph.p_vaddr, im->relro_size = ph.p_memsz;
        else if (ph.p_type == PT_TLS && (ph.p_filesz > ph.p_memsz ||
                                         !in_file(len, ph.p_offset, ph.p_filesz)))
            why = "a thread-local segment outside the file";
        if (why)
            return why;
    }
    if (im->nload == 0)
        return "no loadable segment";
    if (ndynamic != 1)
        return ndynamic ? "more than one dynamic segment" : "no dynamic segment";
    /* the loader reads entries from the dynamic segment's address up to DT_NULL, whatever
     * its size says: so does this */
    im->dyn_vaddr = dyn;
    for (uint64_t at = dyn;; at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        if (at < dyn || !nopi_elf_image_read(im, at, &d, sizeof d))
            return "a dynamic segment with no end (DT_NULL) in the library's memory";
        if (d.d_tag == DT_NULL)
            break;
        if (im->ndyn == NOPI_ELF_MAX_DYN)
            return "more dynamic entries than a linker writes";
        im->dyn[im->ndyn].tag = d.d_tag;
        im->dyn[im->ndyn++].val = d.d_un.d_val;
    }
    return NULL;
}

int nopi_elf_image_segment(const nopi_elf_image *im, uint64_t vaddr, uint64_t n)
{
    for (int i = 0; i < im->nload; i++)
        if (vaddr >= im->load[i].vaddr && n <= im->load[i].memsz &&
            vaddr - im->load[i].vaddr <= im->load[i].memsz - n)
            return i;
    return -1;
}

bool nopi_elf_image_read(const nopi_elf_image *im, uint64_t vaddr, void *out, size_t n)
{
    int i = nopi_elf_image_segment(im, vaddr, n);
    if (i < 0)
        return false;
    uint64_t rel = vaddr - im->load[i].vaddr;
    size_t from_file = rel >= im->load[i].filesz ? 0
                       : (size_t)(im->load[i].filesz - rel < n ? im->load[i].filesz - rel : n);
    if (from_file)   /* keep_load checked offset + filesz against the file */
        memcpy(out, im->data + im->load[i].offset + rel, from_file);
    memset((char *)out + from_file, 0, n - from_file);
    return true;
}

size_t nopi_elf_image_tag(const nopi_elf_image *im, int64_t tag, uint64_t *val)
{
    size_t n = 0;
    for (size_t i = 0; i < im->ndyn; i++)
        if (im->dyn[i].tag == tag) {
            n++;
            if (val)
                *val = im->dyn[i].val;
        }
    return n;
}

/* A pointer to the file bytes mapped at vaddr and how many follow in its segment (*room);
 * NULL when vaddr is not in a segment's file bytes. */
static const char *file_at(const nopi_elf_image *im, uint64_t vaddr, uint64_t *room)
{
    for (int i = 0; i < im->nload; i++)
        if (vaddr >= im->load[i].vaddr && vaddr - im->load[i].vaddr < im->load[i].filesz) {
            *room = im->load[i].filesz - (vaddr - im->load[i].vaddr);
            return im->data + im->load[i].offset + (vaddr - im->load[i].vaddr);
        }
    return NULL;
}

const char *nopi_elf_image_string(const nopi_elf_image *im, uint64_t off)
{
    uint64_t strtab = 0, strsz = 0, at, room;
    if (nopi_elf_image_tag(im, DT_STRTAB, &strtab) != 1 ||
        nopi_elf_image_tag(im, DT_STRSZ, &strsz) != 1 || off >= strsz ||
        add_over(strtab, off, &at))
        return NULL;
    const char *s = file_at(im, at, &room);
    if (!s)   /* (room is not set then) */
        return NULL;
    if (room > strsz - off)
        room = strsz - off;
    return memchr(s, '\0', room) ? s : NULL;
}

/* A new entry at the end of *rels (of *n used, *cap allocated), or NULL when there is no
 * memory or more than any linker writes. */
static nopi_elf_rel *push_rel(nopi_elf_rel **rels, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t grow = *cap ? *cap * 2 : 64;
        nopi_elf_rel *more = grow <= (1u << 22) ? realloc(*rels, grow * sizeof *more) : NULL;
        if (!more)
            return NULL;
        *rels = more, *cap = grow;
    }
    return &(*rels)[(*n)++];
}

/* Appends the RELA entries of [addr, addr + size) to *rels; NULL, or why not. */
static const char *read_rela(const nopi_elf_image *im, uint64_t addr, uint64_t size,
                             nopi_elf_rel **rels, size_t *n, size_t *cap)
{
    if (size % sizeof(Elf64_Rela) != 0 || size / sizeof(Elf64_Rela) > (1u << 24))
        return "a relocation table of a size no linker writes";
    for (uint64_t k = 0; k < size; k += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        if (addr + k < addr || !nopi_elf_image_read(im, addr + k, &r, sizeof r))
            return "a relocation table outside the library's memory";
        if (ELF64_R_TYPE(r.r_info) == R_X86_64_NONE)   /* the loader skips them */
            continue;
        nopi_elf_rel *o = push_rel(rels, n, cap);
        if (!o)
            return "no memory for its relocations";
        o->offset = r.r_offset, o->type = (uint32_t)ELF64_R_TYPE(r.r_info);
        o->sym = (uint32_t)ELF64_R_SYM(r.r_info), o->addend = r.r_addend, o->relr = false;
    }
    return NULL;
}

/* Appends a RELR relocation at where (the loader adds the load address to the word there). */
static const char *add_relr(const nopi_elf_image *im, uint64_t where, nopi_elf_rel **rels,
                            size_t *n, size_t *cap)
{
    uint64_t word;
    if (!nopi_elf_image_read(im, where, &word, sizeof word))
        return "a RELR relocation outside the library's memory";
    nopi_elf_rel *o = push_rel(rels, n, cap);
    if (!o)
        return "more RELR relocations than a linker writes";
    o->offset = where, o->type = R_X86_64_RELATIVE, o->sym = 0;
    o->addend = (int64_t)word, o->relr = true;
    return NULL;
}

/* Appends the relocations of the RELR table [addr, addr + size): an even word is an address,
 * an odd one a bitmap of the 63 words after the last. */
static const char *read_relr(const nopi_elf_image *im, uint64_t addr, uint64_t size,
                             nopi_elf_rel **rels, size_t *n, size_t *cap)
{
    if (size % 8 != 0)
        return "a RELR table of a size no linker writes";
    uint64_t next = 0;
    const char *why = NULL;
    for (uint64_t k = 0; k < size && !why; k += 8) {
        uint64_t w;
        if (addr + k < addr || !nopi_elf_image_read(im, addr + k, &w, sizeof w))
            return "a RELR table outside the library's memory";
        if ((w & 1) == 0) {
            why = add_relr(im, w, rels, n, cap);
            next = w + 8;
            continue;
        }
        for (unsigned bit = 1; bit < 64 && !why; bit++)
            if (w >> bit & 1)
                why = add_relr(im, next + (bit - 1) * 8, rels, n, cap);
        next += 63 * 8;
    }
    return why;
}

const char *nopi_elf_image_relocs(const nopi_elf_image *im, nopi_elf_rel **rels, size_t *n)
{
    *rels = NULL;
    *n = 0;
    size_t cap = 0;
    uint64_t rela = 0, relasz = 0, ent = sizeof(Elf64_Rela), jmp = 0, jmpsz = 0, kind = DT_RELA;
    uint64_t relr = 0, relrsz = 0, relrent = 8;
    if (nopi_elf_image_tag(im, DT_REL, NULL) || nopi_elf_image_tag(im, DT_RELSZ, NULL) ||
        nopi_elf_image_tag(im, DT_RELENT, NULL))
        return "REL relocations (DT_REL), which no x86-64 linker writes";
    size_t has_rela = nopi_elf_image_tag(im, DT_RELA, &rela);
    size_t has_jmp = nopi_elf_image_tag(im, DT_JMPREL, &jmp);
    size_t has_relr = nopi_elf_image_tag(im, DT_RELR, &relr);
    if (has_rela > 1 || has_jmp > 1 || has_relr > 1 ||
        nopi_elf_image_tag(im, DT_RELASZ, &relasz) != has_rela ||
        nopi_elf_image_tag(im, DT_PLTRELSZ, &jmpsz) != has_jmp ||
        nopi_elf_image_tag(im, DT_RELRSZ, &relrsz) != has_relr ||
        nopi_elf_image_tag(im, DT_RELAENT, &ent) > 1 || ent != sizeof(Elf64_Rela) ||
        nopi_elf_image_tag(im, DT_PLTREL, &kind) > 1 || kind != DT_RELA ||
        nopi_elf_image_tag(im, DT_RELRENT, &relrent) > 1 || relrent != 8)
        return "relocation tables the dynamic segment does not describe as a linker does";
    const char *why = has_rela ? read_rela(im, rela, relasz, rels, n, &cap) : NULL;
    /* the loader applies a PLT table that ends the RELA one once, with it */
    bool inside = has_rela && jmp >= rela && jmp - rela <= relasz && jmpsz <= relasz - (jmp - rela);
    bool apart = !has_rela || jmp >= rela + relasz || (jmp + jmpsz <= rela && jmp + jmpsz >= jmp);
    if (!why && has_jmp && !inside && !apart)
        why = "a PLT relocation table that overlaps part of the other";
    if (!why && has_jmp && !inside)
        why = read_rela(im, jmp, jmpsz, rels, n, &cap);
    if (!why && has_relr)
        why = read_relr(im, relr, relrsz, rels, n, &cap);
    if (why) {
        free(*rels);
        *rels = NULL;
        *n = 0;
    }
    return why;
}

/* How many symbols the GNU hash table at addr reaches, or -1. */
static long gnu_hash_nsyms(const nopi_elf_image *im, uint64_t addr)
{
    uint32_t h[4];   /* nbuckets, symoffset, bloom words, bloom shift */
    if (!nopi_elf_image_read(im, addr, h, sizeof h) || h[0] > (1u << 24) || h[2] > (1u << 24))
        return -1;
    uint64_t buckets = addr + 16 + (uint64_t)h[2] * 8, chains = buckets + (uint64_t)h[0] * 4;
    if (chains < addr)
        return -1;
    uint32_t last = 0;
    for (uint32_t b = 0; b < h[0]; b++) {
        uint32_t v;
        if (!nopi_elf_image_read(im, buckets + (uint64_t)b * 4, &v, sizeof v))
            return -1;
        if (v > last)
            last = v;
    }
    if (last < h[1])
        return h[1];
    for (uint64_t i = last; i < (1u << 24); i++) {   /* the last chain, to its end bit */
        uint32_t v;
        if (!nopi_elf_image_read(im, chains + (i - h[1]) * 4, &v, sizeof v))
            return -1;
        if (v & 1)
            return (long)i + 1;
    }
    return -1;
}

long nopi_elf_image_nsyms(const nopi_elf_image *im)
{
    uint64_t addr;
    long n = -1;
    if (nopi_elf_image_tag(im, DT_GNU_HASH, &addr) == 1 && (n = gnu_hash_nsyms(im, addr)) < 0)
        return -1;
    if (nopi_elf_image_tag(im, DT_HASH, &addr) == 1) {
        uint32_t h[2];   /* nbucket, nchain: one chain entry per symbol */
        if (!nopi_elf_image_read(im, addr, h, sizeof h) || h[1] > (1u << 24))
            return -1;
        if ((long)h[1] > n)
            n = h[1];
    }
    return n;
}

bool nopi_elf_image_sym(const nopi_elf_image *im, size_t i, Elf64_Sym *sym, const char **name)
{
    uint64_t symtab, ent = sizeof(Elf64_Sym);
    *name = "";
    if (nopi_elf_image_tag(im, DT_SYMTAB, &symtab) != 1 ||
        nopi_elf_image_tag(im, DT_SYMENT, &ent) > 1 || ent != sizeof(Elf64_Sym) ||
        i > (UINT64_MAX - symtab) / sizeof *sym ||
        !nopi_elf_image_read(im, symtab + i * sizeof *sym, sym, sizeof *sym))
        return false;
    const char *s = nopi_elf_image_string(im, sym->st_name);
    if (s)
        *name = s;
    return true;
}

int nopi_elf_object_code(const char *data, size_t len, const char *name, nopi_elf_code *out)
{
    elf_sections es;
    elf_symtab t;
    size_t idx;
    Elf64_Shdr sh;
    if (!find_section(data, len, name, &es, &idx, &sh) || idx > UINT_MAX)
        return -1;
    bool symbols = symtab_of(data, len, &es, &t);   /* crtn.o has none */
    memset(out, 0, sizeof *out);
    out->bytes = data + sh.sh_offset, out->size = sh.sh_size, out->index = (unsigned)idx;
    for (size_t i = 0; i < es.shnum; i++) {
        Elf64_Shdr rela;
        get_shdr(data, &es, i, &rela);
        if (rela.sh_type != SHT_RELA || rela.sh_info != idx)
            continue;
        if (!symbols || !in_file(len, rela.sh_offset, rela.sh_size) ||
            rela.sh_size % sizeof(Elf64_Rela) ||
            rela.sh_size / sizeof(Elf64_Rela) > NOPI_ELF_MAX_CODE_RELS - out->nrels)
            return -1;
        for (uint64_t k = 0; k < rela.sh_size; k += sizeof(Elf64_Rela)) {
            Elf64_Rela r;
            Elf64_Sym s;
            memcpy(&r, data + rela.sh_offset + k, sizeof r);
            size_t si = ELF64_R_SYM(r.r_info);
            if (si >= t.count || r.r_offset > sh.sh_size || sh.sh_size - r.r_offset < 4)
                return -1;
            get_sym(data, &t, si, &s);
            size_t shndx = sym_section(data, &t, si, &s);
            const char *sname = sym_name(data, &t, &s);
            nopi_elf_coderel *o = &out->rels[out->nrels++];
            o->offset = r.r_offset, o->type = (uint32_t)ELF64_R_TYPE(r.r_info);
            o->addend = r.r_addend, o->value = s.st_value;
            o->shndx = shndx == SIZE_MAX ? SHN_UNDEF : (unsigned)shndx;
            o->name = sname ? sname : "";
        }
    }
    return 0;
}
