/*
 * linkcheck.c - what the loader runs of a library the linker wrote, read as ld.so reads it.
 *
 * Every object is checked for load-time code before it is linked (check.c), but CC, CXX or
 * the manifest's `cxx:` can name a linker of the user's, which can add code no object shows
 * (-Wl,-init, an object or a needed library of its own).  So the linked file is read again,
 * through its program headers and dynamic segment (what ld.so uses: section headers can be
 * missing or made up), and it may run nothing at load or unload but the toolchain's own:
 *
 *   - DT_INIT and DT_FINI absent, or crti's _init and _fini: the bytes crti.o's and crtn.o's
 *     .init (.fini) sections hold, one after the other, nothing between;
 *   - at most one entry in each of the init and fini arrays, filled by a RELATIVE
 *     relocation: crtbeginS.o's frame_dummy and __do_global_dtors_aux, where its whole .text
 *     lies as the object holds it;
 *   - in both, a field a relocation of the object fills may differ, and must reach what the
 *     object names: its own code at the same place, a data address (a RIP-relative operand
 *     is read, never run), or a GOT slot (directly or through a PLT stub) that one GLOB_DAT
 *     or JUMP_SLOT relocation fills with the symbol the object names, left undefined here
 *     and defined by no symbol of the library, so that the loader finds it in neuronop or a
 *     system library or nowhere (0, which the code tests).  A PLT stub is taken to jump
 *     through its slot alone because every dlopen of a built library (library.c,
 *     register.c) binds with RTLD_NOW: lazily bound, it would go through the PLT's first
 *     entry and GOT[2], which this does not check;
 *   - needed libraries from the toolchain's own (libc, libm, libmvec, libstdc++, libgcc_s,
 *     ld.so); no search path, preinit array, audit or filter library, interpreter,
 *     executable stack (which dlopen gives every thread), indirect function (symbol or
 *     IRELATIVE relocation), relocation outside the writable segments, nor text relocation
 *     (but, with NOPI_LINKED_TEXTREL, for libtcc's memcheck libraries, an address or a
 *     call's displacement in an executable segment, never where the code above lies);
 *   - every table the loader reads while relocating (strings, symbols, hash tables,
 *     versions, the relocations), as far as it may read it, in one read-only segment, and
 *     no relocation onto one of them or the dynamic segment, nor of a symbol past those the
 *     hash tables count: the loader reads a relocation's symbol from memory as it applies
 *     it, after the relocations before it (with text relocations, the read-only segments
 *     writable), so an earlier one could make it a local indirect function, whose resolver
 *     it would call;
 *   - with NOPI_LINKED_EXPORTS, no definition the loader could bind another library's
 *     reference to but the library's own two symbols (a system library this one loads would
 *     otherwise run its definition of, say, _ITM_registerTMCloneTable from its own
 *     frame_dummy).
 *
 * The reference bytes are the system's crt objects, found at their fixed places and owned by
 * root, never through the compiler: a user's CC could give a reference library the same
 * additions as the real one.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builder.h"
#include "neuronop/abi.h"

#ifndef DT_RELR
#define DT_RELRSZ 35
#define DT_RELR 36
#endif

enum { CODE_MAX = 4096 };

/* The library being checked. */
typedef struct linked {
    const nopi_elf_image *im;
    const nopi_elf_rel *rels;
    size_t nrels;
    long nsyms;
    /* what the loader reads while relocating: each table's whole extent [at, at + n), by the
     * tag that gives its address, and the dynamic segment (check_tables) */
    struct { int64_t tag; uint64_t at, n; } tables[16];
    int ntables;
} linked;

/* Reads a root-owned crt object no one else may write; false when there is none. */
static bool read_trusted(const char *path, char **data, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & (S_IWGRP | S_IWOTH)))
        return false;
    return nopi_read_file(path, data, len) == 0;
}

/* The segment flags (PF_*) of [at, at + n) with the high bit set, so never 0; 0 when it is
 * not in one segment. */
static uint32_t flags_of(const linked *l, uint64_t at, uint64_t n)
{
    int i = nopi_elf_image_segment(l->im, at, n);
    return i < 0 ? 0 : l->im->load[i].flags | 0x80000000u;
}

/* Whether [at, at + n) is code, in one executable segment, and no relocation writes there
 * (libtcc's memcheck libraries have text relocations). */
static bool is_code(const linked *l, uint64_t at, uint64_t n)
{
    uint32_t f = flags_of(l, at, n);
    if (!f || !(f & PF_X) || (f & PF_W))
        return false;
    for (size_t i = 0; i < l->nrels; i++)   /* each is in a segment: check_relocs */
        if (l->rels[i].offset < at + n && at < l->rels[i].offset + 8)
            return false;
    return true;
}

/* Whether dynamic symbol `name` is defined by the library itself. */
static bool defines(const linked *l, const char *name)
{
    for (long i = 1; i < l->nsyms; i++) {
        Elf64_Sym s;
        const char *n;
        if (nopi_elf_image_sym(l->im, (size_t)i, &s, &n) && s.st_shndx != SHN_UNDEF &&
            strcmp(n, name) == 0)
            return true;
    }
    return false;
}

/* Whether the pointer at slot is what the loader finds for `name` elsewhere: one GLOB_DAT,
 * JUMP_SLOT or 64 relocation, of an undefined symbol of that name, fills it. */
static bool slot_of(const linked *l, uint64_t slot, const char *name)
{
    uint32_t f = flags_of(l, slot, 8);
    if (!f || !(f & PF_W) || !name[0])
        return false;
    const nopi_elf_rel *only = NULL;
    for (size_t i = 0; i < l->nrels; i++)
        if (l->rels[i].offset < slot + 8 && slot < l->rels[i].offset + 8) {
            if (only)
                return false;
            only = &l->rels[i];
        }
    Elf64_Sym s;
    const char *n;
    return only && only->offset == slot && only->addend == 0 &&
           (only->type == R_X86_64_GLOB_DAT || only->type == R_X86_64_JUMP_SLOT ||
            only->type == R_X86_64_64) &&
           nopi_elf_image_sym(l->im, only->sym, &s, &n) && s.st_shndx == SHN_UNDEF &&
           strcmp(n, name) == 0 && !defines(l, name);
}

/* Whether a call to `at` goes through a PLT stub to what the loader finds for `name`:
 * [endbr64] [bnd] jmp *slot(%rip). */
static bool plt_to(const linked *l, uint64_t at, const char *name)
{
    unsigned char c[11];
    if (!is_code(l, at, sizeof c) || !nopi_elf_image_read(l->im, at, c, sizeof c))
        return false;
    size_t k = 0;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
        k = 4;
    if (c[k] == 0xf2)
        k++;
    if (c[k] != 0xff || c[k + 1] != 0x25)
        return false;
    int32_t d;
    memcpy(&d, c + k + 2, sizeof d);
    return slot_of(l, at + k + 6 + (uint64_t)(int64_t)d, name);
}

/* Whether the field of relocation r, at p in the library (where the object's section
 * `index` starts at base), holding v, reaches what the object names.  op[1] is the byte
 * before the field, op[0] the one before that: a ModRM byte of a RIP-relative operand
 * ((b & 0xc7) == 5) makes the field a memory operand, anything else (after e8, e9: call,
 * jmp) a branch target.  A memory operand the code branches through (ff /2 to /5) is taken
 * for data by no rule here: refused.  Any other is data the code reads or writes (in gcc
 * 12's crtbeginS: the sizes of the TM clone table, which gate a call through a checked GOT
 * slot, its done flag, the handle it passes to __cxa_finalize). */
static bool field_ok(const linked *l, const nopi_elf_coderel *r, unsigned index, uint64_t base,
                     uint64_t p, int32_t v, const unsigned char *op)
{
    uint64_t s = p + (uint64_t)(int64_t)v - (uint64_t)r->addend;   /* S (or G + GOT) */
    bool operand = (op[1] & 0xc7) == 0x05;
    unsigned reg = op[1] >> 3 & 7;
    if (operand && op[0] == 0xff && reg >= 2 && reg <= 5 && r->type == R_X86_64_PC32)
        return false;
    switch (r->type) {
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX:
        return operand && r->shndx == SHN_UNDEF && slot_of(l, s, r->name);
    case R_X86_64_PC32:
    case R_X86_64_PLT32:
        if (r->type == R_X86_64_PC32 && operand)
            return true;   /* data */
        if (r->shndx == index)
            return s == base + r->value;
        return r->shndx == SHN_UNDEF && plt_to(l, s, r->name);
    default:
        return false;
    }
}

/* Whether the object sections parts[0..n) lie at `at`, one after the other, in code of the
 * library: byte-equal but for their relocations' fields, each reaching what it names. */
static bool code_at(const linked *l, uint64_t at, const nopi_elf_code *const *parts, int n)
{
    unsigned char got[CODE_MAX], mask[CODE_MAX];
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i]->size;
    if (total == 0 || total > CODE_MAX || !is_code(l, at, total) ||
        !nopi_elf_image_read(l->im, at, got, (size_t)total))
        return false;
    memset(mask, 0, (size_t)total);
    for (int i = 0, off = 0; i < n; off += (int)parts[i++]->size)
        for (size_t k = 0; k < parts[i]->nrels; k++)
            memset(mask + off + parts[i]->rels[k].offset, 1, 4);
    for (int i = 0, off = 0; i < n; off += (int)parts[i++]->size) {
        const nopi_elf_code *c = parts[i];
        for (size_t k = 0; k < c->size; k++)
            if (!mask[off + k] && got[off + k] != (unsigned char)c->bytes[k])
                return false;
        for (size_t k = 0; k < c->nrels; k++) {
            const nopi_elf_coderel *r = &c->rels[k];
            int32_t v;
            memcpy(&v, got + off + r->offset, sizeof v);
            if (off + r->offset < 2 || !field_ok(l, r, c->index, at + (uint64_t)off,
                                                 at + (uint64_t)off + r->offset, v,
                                                 got + off + r->offset - 2))
                return false;
        }
    }
    return true;
}

/* Whether DT_INIT (fini: DT_FINI) at `at` is crti's and crtn's code, of the pair in any of
 * the system's library folders; *none: there is no such pair. */
static bool is_crti(const linked *l, uint64_t at, bool fini, bool *none)
{
    static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                        "/usr/lib64", "/lib64", "/usr/lib" };
    bool ok = false;
    *none = true;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(dirs) && !ok; i++) {
        char pi[64], pn[64], *di = NULL, *dn = NULL;
        size_t li, ln;
        snprintf(pi, sizeof pi, "%s/crti.o", dirs[i]);
        snprintf(pn, sizeof pn, "%s/crtn.o", dirs[i]);
        nopi_elf_code ci, cn;
        const nopi_elf_code *parts[] = { &ci, &cn };
        const char *sec = fini ? ".fini" : ".init";
        bool found = read_trusted(pi, &di, &li) && read_trusted(pn, &dn, &ln) &&
                     nopi_elf_object_code(di, li, sec, &ci) == 0 &&
                     nopi_elf_object_code(dn, ln, sec, &cn) == 0;
        if (found)
            *none = false;
        ok = found && code_at(l, at, parts, 2);
        free(di);
        free(dn);
    }
    return ok;
}

/* Whether the function at `at` is crtbeginS.o's frame_dummy (fini: __do_global_dtors_aux),
 * the function its .init_array (.fini_array) names, of any gcc installed; *none: there is
 * no such object. */
static bool is_crtbegin(const linked *l, uint64_t at, bool fini, bool *none)
{
    static const char *const pats[] = { "/usr/lib/gcc/x86_64*-linux-gnu/*/crtbeginS.o",
                                        "/usr/lib64/gcc/x86_64*-linux-gnu/*/crtbeginS.o" };
    bool ok = false;
    *none = true;
    for (size_t p = 0; p < NOPI_ARRAY_LEN(pats) && !ok; p++) {
        glob_t g;
        if (glob(pats[p], 0, NULL, &g) != 0)
            continue;
        for (size_t i = 0; i < g.gl_pathc && !ok; i++) {
            char *d = NULL;
            size_t len;
            nopi_elf_code text, arr;
            const nopi_elf_code *parts[] = { &text };
            if (read_trusted(g.gl_pathv[i], &d, &len) &&
                nopi_elf_object_code(d, len, ".text", &text) == 0 &&
                nopi_elf_object_code(d, len, fini ? ".fini_array" : ".init_array", &arr) == 0 &&
                arr.nrels == 1 && arr.rels[0].shndx == text.index) {
                *none = false;
                uint64_t fn = arr.rels[0].value + (uint64_t)arr.rels[0].addend;
                ok = fn < text.size && at >= fn && code_at(l, at - fn, parts, 1);
            }
            free(d);
        }
        globfree(&g);
    }
    return ok;
}

/* The dynamic tags whose presence alone is refused, and what each is. */
static const struct { int64_t tag; const char *what; } refused_tags[] = {
    { DT_RPATH, "a library search path (DT_RPATH)" },
    { DT_RUNPATH, "a library search path (DT_RUNPATH)" },
    { DT_PREINIT_ARRAY, "a preinit array (DT_PREINIT_ARRAY)" },
    { DT_PREINIT_ARRAYSZ, "a preinit array (DT_PREINIT_ARRAYSZ)" },
    { DT_AUDIT, "an audit library (DT_AUDIT)" },
    { DT_DEPAUDIT, "an audit library (DT_DEPAUDIT)" },
    { DT_FILTER, "a filter (DT_FILTER)" },
    { DT_AUXILIARY, "a filter (DT_AUXILIARY)" },
    { DT_TEXTREL, "relocations of its code (DT_TEXTREL)" },
};

/* What the toolchain's link needs: the C and C++ runtimes, the loader (__tls_get_addr). */
static const char *const allowed_needed[] = { "libc.so.6", "libm.so.6", "libmvec.so.1",
                                              "libstdc++.so.6", "libgcc_s.so.1",
                                              "ld-linux-x86-64.so.2" };

/* Checks the dynamic segment's tags: 0, or 1 with what filled. */
static int check_tags(const linked *l, unsigned how, char *what, size_t size)
{
    const nopi_elf_image *im = l->im;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(refused_tags); i++)
        if (nopi_elf_image_tag(im, refused_tags[i].tag, NULL) &&
            (refused_tags[i].tag != DT_TEXTREL || !(how & NOPI_LINKED_TEXTREL)))
            return snprintf(what, size, "%s", refused_tags[i].what), 1;
    uint64_t flags = 0;
    if (nopi_elf_image_tag(im, DT_FLAGS, &flags) && (flags & DF_TEXTREL) &&
        !(how & NOPI_LINKED_TEXTREL))
        return snprintf(what, size, "relocations of its code (DF_TEXTREL)"), 1;
    /* the loader keeps the last of a tag given twice: one of each, so none is overlooked */
    for (size_t i = 0; i < im->ndyn; i++)
        if (im->dyn[i].tag != DT_NEEDED && nopi_elf_image_tag(im, im->dyn[i].tag, NULL) > 1)
            return snprintf(what, size, "the dynamic tag 0x%llx twice",
                             (unsigned long long)im->dyn[i].tag), 1;
    for (size_t i = 0; i < im->ndyn; i++) {
        if (im->dyn[i].tag != DT_NEEDED)
            continue;
        const char *name = nopi_elf_image_string(im, im->dyn[i].val);
        bool ok = false;
        for (size_t k = 0; name && k < NOPI_ARRAY_LEN(allowed_needed) && !ok; k++)
            ok = strcmp(name, allowed_needed[k]) == 0;
        if (!ok)
            return snprintf(what, size, "a needed library '%s' (DT_NEEDED), which is not the "
                            "toolchain's", name ? name : "(unreadable)"), 1;
    }
    return 0;
}

/* The extent of the version list (DT_VERNEED, DT_VERDEF) at `at`, which the loader walks by
 * each entry's offset to the next (0 ends it) and each entry's to its first auxiliary entry
 * and on: every entry lies after the one before, so the list spans [at, at + *n).  False
 * when an entry is not in the library's memory or the list is longer than a linker writes. */
static bool version_extent(const linked *l, uint64_t at, bool def, uint64_t *n)
{
    /* Elf64_Verneed: cnt at 2, aux at 8, next at 12 (16 bytes); Vernaux: next at 12 (16).
     * Elf64_Verdef: cnt at 6, aux at 12, next at 16 (20 bytes); Verdaux: next at 4 (8). */
    const unsigned size = def ? 20 : 16, cnt_at = def ? 6 : 2, aux_at = def ? 12 : 8,
                   next_at = def ? 16 : 12, asize = def ? 8 : 16, anext_at = def ? 4 : 12;
    uint64_t end = at, e = at;
    unsigned entries = 0;
    for (;;) {
        unsigned char h[20];
        uint16_t cnt;
        uint32_t aux, next;
        if (++entries > 4096 || e - at > (1u << 24) ||
            !nopi_elf_image_read(l->im, e, h, size))
            return false;
        memcpy(&cnt, h + cnt_at, sizeof cnt);
        memcpy(&aux, h + aux_at, sizeof aux);
        memcpy(&next, h + next_at, sizeof next);
        if (e + size > end)
            end = e + size;
        uint64_t a = e + aux;
        for (unsigned k = 0; k < cnt; k++) {
            unsigned char x[16];
            uint32_t anext;
            if (++entries > 4096 || a - at > (1u << 24) ||
                !nopi_elf_image_read(l->im, a, x, asize))
                return false;
            if (a + asize > end)
                end = a + asize;
            memcpy(&anext, x + anext_at, sizeof anext);
            if (anext == 0)
                break;
            a += anext;
        }
        if (next == 0)
            break;
        e += next;
    }
    *n = end - at;
    return true;
}

/* Finds the whole extent of each table the loader reads while relocating (the symbols and
 * their names, hash tables, versions, the relocations themselves) and checks that it lies in
 * one segment no relocation may make writable: 0, or 1 with what filled.  The relocations
 * are then checked against them (check_relocs), so that none rewrites, before the loader
 * reads it, a symbol or anything that leads to one. */
static int check_tables(linked *l, char *what, size_t size)
{
    const nopi_elf_image *im = l->im;
    static const int64_t tags[][2] = { { DT_STRTAB, DT_STRSZ }, { DT_RELA, DT_RELASZ },
                                       { DT_JMPREL, DT_PLTRELSZ }, { DT_RELR, DT_RELRSZ },
                                       { DT_SYMTAB, -1 }, { DT_HASH, -1 },
                                       { DT_GNU_HASH, -1 }, { DT_VERSYM, -1 },
                                       { DT_VERNEED, -1 }, { DT_VERDEF, -1 } };
    uint64_t nsyms = (uint64_t)l->nsyms;   /* >= 0 here, at most 1 << 24 */
    l->ntables = 0;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(tags); i++) {
        int64_t tag = tags[i][0];
        uint64_t at, n = 0;
        uint32_t h[4] = { 0 };
        bool ok = true;
        if (!nopi_elf_image_tag(im, tag, &at))
            continue;
        if (tags[i][1] >= 0)
            nopi_elf_image_tag(im, tags[i][1], &n);
        else if (tag == DT_SYMTAB)
            n = nsyms * sizeof(Elf64_Sym);
        else if (tag == DT_VERSYM)
            n = nsyms * 2;
        else if (tag == DT_HASH) {   /* nbucket, nchain, then their words */
            ok = nopi_elf_image_read(im, at, h, 8);
            n = 8 + 4 * ((uint64_t)h[0] + h[1]);
        } else if (tag == DT_GNU_HASH) {   /* nbuckets, symoffset, bloom words, shift */
            ok = nopi_elf_image_read(im, at, h, 16);
            n = 16 + 8 * (uint64_t)h[2] + 4 * (uint64_t)h[0] +
                4 * (nsyms > h[1] ? nsyms - h[1] : 0);
        } else
            ok = version_extent(l, at, tag == DT_VERDEF, &n);
        uint32_t f = ok ? flags_of(l, at, n ? n : 1) : 0;
        if (!f || (f & PF_W))
            return snprintf(what, size, "a table of its dynamic segment (tag 0x%llx) in "
                            "writable memory or outside it", (unsigned long long)tag), 1;
        l->tables[l->ntables].tag = tag;
        l->tables[l->ntables].at = at;
        l->tables[l->ntables++].n = n;
    }
    l->tables[l->ntables].tag = DT_NULL;   /* the dynamic segment, to its DT_NULL */
    l->tables[l->ntables].at = im->dyn_vaddr;
    l->tables[l->ntables++].n = (im->ndyn + 1) * sizeof(Elf64_Dyn);
    return 0;
}

/* Checks the relocations and the dynamic symbols: 0, or 1 with what filled. */
static int check_relocs(const linked *l, unsigned how, char *what, size_t size)
{
    const nopi_elf_image *im = l->im;
    for (size_t i = 0; i < l->nrels; i++) {
        const nopi_elf_rel *r = &l->rels[i];
        uint32_t f = flags_of(l, r->offset, 8);
        Elf64_Sym s;
        const char *name;
        if (r->type == R_X86_64_IRELATIVE)
            return snprintf(what, size, "an indirect function (an IRELATIVE relocation, whose "
                            "resolver the loader calls)"), 1;
        /* the loader reads the symbol, as it relocates, from memory earlier relocations may
         * have written: only the symbols the hash tables reach lie in checked tables */
        if (r->sym >= (uint64_t)l->nsyms)
            return snprintf(what, size, "a relocation of dynamic symbol %u, past the %ld its "
                            "hash tables reach", r->sym, l->nsyms), 1;
        for (int t = 0; t < l->ntables; t++)
            if (r->offset < l->tables[t].at + l->tables[t].n &&
                l->tables[t].at < r->offset + 8)
                return snprintf(what, size, l->tables[t].tag == DT_NULL
                                ? "a relocation at 0x%llx, outside its writable data"
                                : "a relocation at 0x%llx, onto a table the loader reads "
                                  "(tag 0x%llx)", (unsigned long long)r->offset,
                                (unsigned long long)l->tables[t].tag), 1;
        /* libtcc's text relocations (memcheck's): an address or a call's displacement
         * written into code, not code; in the executable segments alone, as ld.so makes
         * every segment with one writable while it relocates */
        bool text = (how & NOPI_LINKED_TEXTREL) && (f & PF_X) &&
                    (r->type == R_X86_64_RELATIVE || r->type == R_X86_64_64 ||
                     r->type == R_X86_64_PC32 || r->type == R_X86_64_32 ||
                     r->type == R_X86_64_32S);
        if (r->type != R_X86_64_RELATIVE && r->type != R_X86_64_GLOB_DAT &&
            r->type != R_X86_64_JUMP_SLOT && r->type != R_X86_64_64 &&
            r->type != R_X86_64_DTPMOD64 && r->type != R_X86_64_DTPOFF64 &&
            r->type != R_X86_64_TPOFF64 && !text)
            return snprintf(what, size, "a relocation of type %u, which no linker gives a "
                            "library it can load", r->type), 1;
        if (!f || (!(f & PF_W) && !text))
            return snprintf(what, size, "a relocation at 0x%llx, outside its writable data",
                            (unsigned long long)r->offset), 1;
        if (r->sym && (!nopi_elf_image_sym(im, r->sym, &s, &name) ||
                       ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC))
            return snprintf(what, size, "a relocation of an indirect or unreadable symbol "
                            "'%s'", name), 1;
    }
    for (long i = 1; i < l->nsyms; i++) {
        Elf64_Sym s;
        const char *name;
        if (!nopi_elf_image_sym(im, (size_t)i, &s, &name))
            return snprintf(what, size, "a dynamic symbol outside the library"), 1;
        if (s.st_shndx == SHN_UNDEF)
            continue;
        if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC)
            return snprintf(what, size, "an indirect function '%s'", name), 1;
        if ((how & NOPI_LINKED_EXPORTS) && ELF64_ST_BIND(s.st_info) != STB_LOCAL &&
            strcmp(name, NT_LIB_SYMBOL) != 0 && strcmp(name, "neuronop_argnames") != 0)
            return snprintf(what, size, "a definition of '%s' that other libraries could "
                            "bind to", name), 1;
    }
    return 0;
}

/* The address the loader stores in the 8 bytes at slot: one RELATIVE relocation (RELA or
 * RELR) must fill them, else false. */
static bool relative_at(const linked *l, uint64_t slot, uint64_t *value)
{
    int n = 0;
    for (size_t i = 0; i < l->nrels; i++)
        if (l->rels[i].offset < slot + 8 && slot < l->rels[i].offset + 8) {
            if (n++ || l->rels[i].offset != slot || l->rels[i].type != R_X86_64_RELATIVE)
                return false;
            *value = (uint64_t)l->rels[i].addend;
        }
    return n == 1;
}

/* Checks DT_INIT, DT_FINI and the init and fini arrays: 0, or 1 with what filled. */
static int check_entries(const linked *l, char *what, size_t size)
{
    static const char nothing[] = " (the system has no such object, owned by root, to "
                                  "compare it with)";
    for (int fini = 0; fini < 2; fini++) {
        const char *fn = fini ? "a fini function (DT_FINI)" : "an init function (DT_INIT)";
        uint64_t at, arr = 0, sz = 0;
        bool none = false;
        if (nopi_elf_image_tag(l->im, fini ? DT_FINI : DT_INIT, &at) &&
            !is_crti(l, at, fini, &none))
            return snprintf(what, size, "%s other than crti's %s%s", fn,
                            fini ? "_fini" : "_init", none ? nothing : ""), 1;
        const char *kind = fini ? "fini" : "init";
        size_t has = nopi_elf_image_tag(l->im, fini ? DT_FINI_ARRAY : DT_INIT_ARRAY, &arr);
        if (nopi_elf_image_tag(l->im, fini ? DT_FINI_ARRAYSZ : DT_INIT_ARRAYSZ, &sz) != has)
            return snprintf(what, size, "an %s array with no size", kind), 1;
        if (sz % 8 != 0 || sz > 8)
            return snprintf(what, size, "%llu entries in its %s array (%s_ARRAYSZ %llu), where "
                            "the toolchain adds one", (unsigned long long)(sz / 8), kind,
                            fini ? "DT_FINI" : "DT_INIT", (unsigned long long)sz), 1;
        uint64_t target = 0;
        if (sz && (!relative_at(l, arr, &target) || !is_crtbegin(l, target, fini, &none)))
            return snprintf(what, size, "an entry in its %s array other than crtbegin's %s%s",
                            kind, fini ? "__do_global_dtors_aux" : "frame_dummy",
                            none ? nothing : ""), 1;
    }
    return 0;
}

/* Whether segment l lies inside the image's PT_GNU_RELRO, which the loader makes read-only
 * once it has relocated (ld.lld gives RELRO a writable segment of its own). */
static bool all_relro(const nopi_elf_image *im, const nopi_elf_load *l)
{
    return im->relro_size && l->vaddr >= im->relro_vaddr &&
           l->vaddr + l->memsz <= im->relro_vaddr + im->relro_size;
}

int nopi_check_linked(builder *b, const char *data, size_t len, unsigned how)
{
    nopi_elf_image *im = malloc(sizeof *im);
    if (!im)
        return nopi_nomem(b->err);
    linked l = { .im = im, .nsyms = -1 };
    char what[256] = "";
    const char *why = nopi_elf_image_open(data, len, im);
    nopi_elf_rel *rels = NULL;
    if (!why)
        why = nopi_elf_image_relocs(im, &rels, &l.nrels);
    l.rels = rels;
    if (!why && (l.nsyms = nopi_elf_image_nsyms(im)) < 0)
        why = "no symbol hash table the loader can read";
    int found = 0;
    if (!why) {
        if (im->interp || im->exec_stack) {   /* dlopen makes every thread's stack so */
            snprintf(what, sizeof what, "%s", im->interp ? "an interpreter (PT_INTERP)"
                                                         : "an executable stack (PT_GNU_STACK)");
            found = 1;
        }
        for (int i = 0; i < im->nload && !found; i++)
            if ((im->load[i].flags & (PF_W | PF_X)) == (PF_W | PF_X)) {
                snprintf(what, sizeof what, "a segment both writable and executable");
                found = 1;
            }
        if (!found)
            found = check_tags(&l, how, what, sizeof what);
        if (!found)
            found = check_tables(&l, what, sizeof what);
        if (!found)
            found = check_relocs(&l, how, what, sizeof what);
        if (!found)
            found = check_entries(&l, what, sizeof what);
    }
    /* one writable segment: the device run compares it to find a core that wrote the
     * library's data (and puts back what a shape function wrote); a second, which a
     * large-model or custom section gets (.ldata), would go unchecked (a device-rules
     * tester's find: a static scratch array there raced silently) */
    int writable = 0;
    for (int i = 0; !why && i < im->nload; i++)
        writable += (im->load[i].flags & PF_W) && !all_relro(im, &im->load[i]);
    free(rels);
    free(im);
    if (why)
        return nopi_fail(b->err, NOP_ERR_COMPILE, NULL, 0, 0, "the linker wrote no shared "
                         "library neuronop can read for '%s': %s", b->lib_path, why);
    if (!found && writable > 1) {
        nopi_fail(b->err, NOP_ERR_COMPILE, NULL, 0, 0, "the %s linked for '%s' has %d "
                  "writable segments: a source put data in a section of its own (a "
                  "large-model .ldata or .lbss, or a section attribute)",
                  how & NOPI_LINKED_PROBE ? "registration's probe library" : "library",
                  b->lib_path, writable);
        nopi_detail(b->err, "neuronop checks the one segment .data and .bss make for writes "
                    "the device's cores would race on; keep variables in those sections");
        return -1;
    }
    if (!found)
        return 0;
    nopi_fail(b->err, NOP_ERR_COMPILE, NULL, 0, 0, "the %s linked for '%s' has code that runs "
              "when it loads or unloads, which no source showed: %s",
              how & NOPI_LINKED_PROBE ? "registration's probe library" : "library", b->lib_path,
              what);
    nopi_detail(b->err, "the linker added it; the device runs no code at load or unload, and "
                "every worker loads the whole library: link with the toolchain as it is "
                "installed");
    return -1;
}
