/*
 * describe.c - a built library's self-description read from its file, without loading it
 * (nop_library_describe; `neuronop inspect`).
 *
 * dlopen runs a library's constructors, so a library with one (hand-made, or built before
 * neuronop refused them) would run code just by being inspected.  This reader never maps the
 * file for execution: it finds the descriptor's symbol in the ELF file, reads the descriptor
 * and everything it points to at their file offsets, and resolves each pointer through the
 * file's dynamic relocations (R_X86_64_RELATIVE, and R_X86_64_64 against a symbol), as the
 * loader would.  Every offset, count and string is bounds-checked: the file is untrusted.
 * The result is a nop_library whose metadata works as usual and whose code is not there.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "library.h"

#define MAX_ITEMS 4096   /* no descriptor array is longer: ops, sources, flags, refs */

/* The file and aligned copies of its tables (a file's offsets need not be aligned). */
typedef struct image {
    const char *data;
    size_t len;
    Elf64_Phdr *ph;
    int nph;
    Elf64_Rela *rel;     /* the dynamic relocations, sorted by r_offset */
    size_t nrel;
    Elf64_Sym *dynsym;
    size_t nsym;
    bool bad;            /* something pointed outside the file */
} image;

/* The file offset of n bytes at address v, or SIZE_MAX when they are not all in the file. */
static size_t offset_of(image *im, uint64_t v, size_t n)
{
    for (int i = 0; i < im->nph; i++) {
        const Elf64_Phdr *p = &im->ph[i];
        if (p->p_type == PT_LOAD && v >= p->p_vaddr && v - p->p_vaddr <= p->p_filesz &&
            n <= p->p_filesz - (v - p->p_vaddr) && p->p_offset <= im->len &&
            v - p->p_vaddr + n <= im->len - p->p_offset)
            return (size_t)(p->p_offset + (v - p->p_vaddr));
    }
    im->bad = true;
    return SIZE_MAX;
}

static int cmp_rela(const void *a, const void *b)
{
    const Elf64_Rela *x = a, *y = b;
    return x->r_offset < y->r_offset ? -1 : x->r_offset > y->r_offset;
}

/* The pointer stored at address v, as the loader would have relocated it (0 if none). */
static uint64_t read_ptr(image *im, uint64_t v)
{
    size_t lo = 0, hi = im->nrel;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (im->rel[mid].r_offset < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < im->nrel && im->rel[lo].r_offset == v) {
        const Elf64_Rela *r = &im->rel[lo];
        uint32_t sym = ELF64_R_SYM(r->r_info);
        switch (ELF64_R_TYPE(r->r_info)) {
        case R_X86_64_RELATIVE:
            return (uint64_t)r->r_addend;
        case R_X86_64_64:
            if (sym < im->nsym && im->dynsym[sym].st_shndx != SHN_UNDEF)
                return im->dynsym[sym].st_value + (uint64_t)r->r_addend;
            return 0;   /* outside the library: a runtime address */
        default:
            return 0;
        }
    }
    size_t off = offset_of(im, v, sizeof(uint64_t));
    uint64_t p = 0;
    if (off != SIZE_MAX)
        memcpy(&p, im->data + off, sizeof p);
    return p;
}

/* A copy of the NUL-terminated string at address v (malloc'd); NULL when v is 0 or it does
 * not end inside the file (and then the image is bad). */
static char *read_str(image *im, uint64_t v)
{
    if (!v)
        return NULL;
    size_t off = offset_of(im, v, 1);
    if (off == SIZE_MAX)
        return NULL;
    const char *end = memchr(im->data + off, '\0', im->len - off);
    if (!end) {
        im->bad = true;
        return NULL;
    }
    return strdup(im->data + off);
}

/* Fills *desc (all of whose pointers end up in the heap) from the descriptor at v. */
static void read_desc(image *im, uint64_t v, nt__lib_desc *d)
{
    size_t off = offset_of(im, v, sizeof *d);
    if (off == SIZE_MAX)
        return;
    memcpy(d, im->data + off, sizeof *d);
    /* its pointers are the file's: none may be freed or followed until replaced */
    d->neuronop_version = d->name = d->stack_size_from = d->build_key = NULL;
    d->cflags = NULL;
    d->sources = NULL;
    d->ops = NULL;
    d->refs = NULL;
    d->api = NULL;
    d->ns = NULL;
#define PTR(field) read_ptr(im, v + offsetof(nt__lib_desc, field))
    uint64_t ns = PTR(ns);   /* NULL in a C library */
    d->ns = ns ? read_str(im, ns) : NULL;
    d->neuronop_version = read_str(im, PTR(neuronop_version));
    d->name = read_str(im, PTR(name));
    d->stack_size_from = read_str(im, PTR(stack_size_from));
    d->build_key = read_str(im, PTR(build_key));
    uint64_t cflags = PTR(cflags), sources = PTR(sources), ops = PTR(ops), refs = PTR(refs);
#undef PTR
    d->api = NULL;
    if (d->ncflags < 0 || d->ncflags > MAX_ITEMS || d->nsources < 0 ||
        d->nsources > MAX_ITEMS || d->nops < 0 || d->nops > MAX_ITEMS || d->nrefs < 0 ||
        d->nrefs > MAX_ITEMS) {
        d->ncflags = d->nsources = d->nops = d->nrefs = 0;
        im->bad = true;
        return;
    }
    const char **fl = calloc((size_t)d->ncflags + 1, sizeof *fl);
    nt__source_desc *src = calloc((size_t)d->nsources + 1, sizeof *src);
    nt__op_desc *op = calloc((size_t)d->nops + 1, sizeof *op);
    nt__ref_desc *ref = calloc((size_t)d->nrefs + 1, sizeof *ref);
    d->cflags = fl;
    d->sources = src;
    d->ops = op;
    d->refs = ref;
    if (!fl || !src || !op || !ref) {
        im->bad = true;
        return;
    }
    for (int i = 0; i < d->ncflags; i++)
        fl[i] = read_str(im, read_ptr(im, cflags + (uint64_t)i * sizeof(void *)));
    for (int i = 0; i < d->nsources; i++) {
        uint64_t s = sources + (uint64_t)i * sizeof *src;
        src[i].path = read_str(im, read_ptr(im, s + offsetof(nt__source_desc, path)));
        src[i].role = read_str(im, read_ptr(im, s + offsetof(nt__source_desc, role)));
        src[i].hash = read_str(im, read_ptr(im, s + offsetof(nt__source_desc, hash)));
    }
    for (int i = 0; i < d->nops; i++) {
        uint64_t o = ops + (uint64_t)i * sizeof *op;
        size_t at = offset_of(im, o, sizeof *op);
        if (at == SIZE_MAX)
            return;
        memcpy(&op[i], im->data + at, sizeof *op);
        op[i].argtypes = NULL;
        op[i].name = read_str(im, read_ptr(im, o + offsetof(nt__op_desc, name)));
        op[i].kernel = read_str(im, read_ptr(im, o + offsetof(nt__op_desc, kernel)));
        op[i].shape = read_str(im, read_ptr(im, o + offsetof(nt__op_desc, shape)));
        op[i].call_kernel = op[i].call_shape = NULL;   /* no code: nothing to call */
        int n = op[i].nargs;
        int *types = calloc((size_t)(n > 0 && n <= NOP_MAX_ARGS ? n : 1), sizeof *types);
        op[i].argtypes = types;
        if (!types || n < 0 || n > NOP_MAX_ARGS) {
            op[i].nargs = 0;
            im->bad = true;
            continue;
        }
        uint64_t t = read_ptr(im, o + offsetof(nt__op_desc, argtypes));
        size_t toff = n ? offset_of(im, t, (size_t)n * sizeof *types) : 0;
        if (n && toff != SIZE_MAX)
            memcpy(types, im->data + toff, (size_t)n * sizeof *types);
    }
    for (int i = 0; i < d->nrefs; i++) {
        uint64_t r = refs + (uint64_t)i * sizeof *ref;
        size_t at = offset_of(im, r, sizeof *ref);
        if (at == SIZE_MAX)
            return;
        memcpy(&ref[i], im->data + at, sizeof *ref);
        ref[i].name = read_str(im, read_ptr(im, r + offsetof(nt__ref_desc, name)));
        ref[i].call = NULL;
        if (ref[i].op < 0 || ref[i].op >= d->nops)
            im->bad = true;
    }
}

/* True when every string and array the metadata uses is there, and every argument type is
 * one there is: what a neuronop build always writes, and a damaged file may not have. */
static bool complete(const nt__lib_desc *d)
{
    if (!d->name || !d->neuronop_version || !d->stack_size_from || !d->build_key ||
        !d->cflags || !d->sources || !d->ops || !d->refs)
        return false;
    for (int i = 0; i < d->ncflags; i++)
        if (!d->cflags[i])
            return false;
    for (int i = 0; i < d->nsources; i++)
        if (!d->sources[i].path || !d->sources[i].role || !d->sources[i].hash)
            return false;
    for (int i = 0; i < d->nops; i++) {
        const nt__op_desc *o = &d->ops[i];
        if (!o->name || !o->kernel || !o->shape || !o->argtypes)
            return false;
        for (int k = 0; k < o->nargs; k++)
            if (o->argtypes[k] < NT_ARG_TENSOR || o->argtypes[k] > NT_ARG_INT64)
                return false;
    }
    for (int i = 0; i < d->nrefs; i++)
        if (!d->refs[i].name)
            return false;
    return true;
}

/* Finds the program headers, the dynamic symbols and relocations, and the descriptor's
 * address; -1 when the file is not an ELF64 shared object with one. */
static int index_image(image *im, uint64_t *desc, uint64_t *names)
{
    Elf64_Ehdr ehdr, *eh = &ehdr;
    if (im->len < sizeof ehdr)
        return -1;
    memcpy(&ehdr, im->data, sizeof ehdr);
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_phoff > im->len ||
        (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > im->len - eh->e_phoff ||
        eh->e_shoff > im->len ||
        (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > im->len - eh->e_shoff)
        return -1;
    if (!(im->ph = malloc(((size_t)eh->e_phnum + 1) * sizeof *im->ph)))
        return -1;
    memcpy(im->ph, im->data + eh->e_phoff, (size_t)eh->e_phnum * sizeof *im->ph);
    im->nph = eh->e_phnum;
    Elf64_Shdr *sh = malloc(((size_t)eh->e_shnum + 1) * sizeof *sh);
    if (!sh)
        return -1;
    memcpy(sh, im->data + eh->e_shoff, (size_t)eh->e_shnum * sizeof *sh);
    const char *dynstr = NULL;
    size_t ndynstr = 0;
    int rc = -1;
    for (int i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *s = &sh[i];
        if (s->sh_offset > im->len || s->sh_size > im->len - s->sh_offset)
            continue;
        if (s->sh_type == SHT_DYNSYM && !im->dynsym) {
            im->nsym = s->sh_size / sizeof(Elf64_Sym);
            if (!(im->dynsym = malloc((im->nsym + 1) * sizeof *im->dynsym)))
                goto out;
            memcpy(im->dynsym, im->data + s->sh_offset, im->nsym * sizeof *im->dynsym);
            if (s->sh_link < eh->e_shnum && sh[s->sh_link].sh_offset <= im->len &&
                sh[s->sh_link].sh_size <= im->len - sh[s->sh_link].sh_offset) {
                dynstr = im->data + sh[s->sh_link].sh_offset;
                ndynstr = sh[s->sh_link].sh_size;
            }
        } else if (s->sh_type == SHT_RELA && s->sh_size % sizeof(Elf64_Rela) == 0) {
            size_t n = s->sh_size / sizeof(Elf64_Rela);
            Elf64_Rela *all = realloc(im->rel, (im->nrel + n + 1) * sizeof *all);
            if (!all)
                goto out;
            memcpy(all + im->nrel, im->data + s->sh_offset, s->sh_size);
            im->rel = all;
            im->nrel += n;
        }
    }
    if (im->rel)
        qsort(im->rel, im->nrel, sizeof *im->rel, cmp_rela);
    *names = 0;
    for (size_t i = 0; dynstr && i < im->nsym; i++) {
        const Elf64_Sym *s = &im->dynsym[i];
        if (s->st_name < ndynstr && s->st_shndx != SHN_UNDEF &&
            strncmp(dynstr + s->st_name, NT_LIB_SYMBOL, ndynstr - s->st_name) == 0) {
            *desc = s->st_value;
            rc = 0;
        } else if (s->st_name < ndynstr && s->st_shndx != SHN_UNDEF &&
                   strncmp(dynstr + s->st_name, NOPI_ARGNAMES_SYMBOL,
                           ndynstr - s->st_name) == 0) {
            *names = s->st_value;   /* optional (argnames.c) */
        }
    }
out:
    free(sh);
    return rc;
}

/* Frees what read_desc allocated. */
static void free_desc(nt__lib_desc *d)
{
    free((char *)d->neuronop_version);
    free((char *)d->name);
    free((char *)d->stack_size_from);
    free((char *)d->build_key);
    free((char *)d->ns);
    for (int i = 0; d->cflags && i < d->ncflags; i++)
        free((char *)d->cflags[i]);
    free((void *)d->cflags);
    for (int i = 0; d->sources && i < d->nsources; i++) {
        free((char *)d->sources[i].path);
        free((char *)d->sources[i].role);
        free((char *)d->sources[i].hash);
    }
    free((void *)d->sources);
    for (int i = 0; d->ops && i < d->nops; i++) {
        free((char *)d->ops[i].name);
        free((char *)d->ops[i].kernel);
        free((char *)d->ops[i].shape);
        free((void *)d->ops[i].argtypes);
    }
    free((void *)d->ops);
    for (int i = 0; d->refs && i < d->nrefs; i++)
        free((char *)d->refs[i].name);
    free((void *)d->refs);
    free(d);
}

void nopi_library_free_described(nop_library *lib)
{
    free_desc((nt__lib_desc *)lib->desc);
}

int nop_library_describe(nop_library **out, const char *path, nop_error *err)
{
    *out = NULL;
    image im = { 0 };
    char *data;
    struct stat st = { 0 };   /* before the read, as nop_library_open's before its load */
    stat(path, &st);
    if (nopi_read_input(path, "library", (size_t)1 << 30, &data, &im.len, err) != 0)
        return -1;
    im.data = data;
    uint64_t at = 0, names = 0;
    nt__lib_desc *d = NULL;
    nop_library *lib = NULL;
    int rc = -1;
    if (index_image(&im, &at, &names) != 0 || offset_of(&im, at, sizeof *d) == SIZE_MAX) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op library", path);
        nopi_detail(err, "build one with 'neuronop build'");
        goto out;
    }
    unsigned head[2];   /* magic and version come first, in every format */
    memcpy(head, im.data + offset_of(&im, at, sizeof head), sizeof head);
    if (head[0] != NT_LIB_MAGIC) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op library", path);
        nopi_detail(err, "build one with 'neuronop build'");
        goto out;
    }
    if (head[1] != NT_ABI_VERSION) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' was built for library format %u; "
                  "this neuronop reads format %d", path, head[1], NT_ABI_VERSION);
        nopi_detail(err, "rebuild it with 'neuronop build --force'");
        goto out;
    }
    if (!(d = calloc(1, sizeof *d)) || !(lib = calloc(1, sizeof *lib)) ||
        !(lib->path = strdup(path))) {
        nopi_nomem(err);
        goto out;
    }
    lib->st = st;
    read_desc(&im, at, d);
    if (im.bad || !complete(d)) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has a damaged self-description", path);
        nopi_detail(err, "rebuild it with 'neuronop build --force'");
        goto out;
    }
    lib->desc = d;
    lib->argnames = read_str(&im, names);   /* NULL when it has none */
    im.bad = false;   /* and a damaged one is only a missing convenience */
    d = NULL;
    *out = lib;
    lib = NULL;
    rc = 0;
out:
    if (d)
        free_desc(d);
    if (lib)
        free(lib->path);
    free(lib);
    free(im.rel);
    free(im.ph);
    free(im.dynsym);
    free(data);
    return rc;
}
