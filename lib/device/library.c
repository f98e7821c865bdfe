/*
 * library.c - loads a built op library and reads its self-description.
 *
 * A library is opened with RTLD_NOW | RTLD_LOCAL: missing symbols fail here rather than in
 * the middle of a kernel, and two libraries loaded at once keep their own trampolines.
 */
#include <dlfcn.h>
#include <link.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/elfsyms.h"
#include "library.h"

/* The address range of the library's code, where the device may stop a kernel (fiber.c). */
static int text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    nop_library *lib = arg;
    uintptr_t base = info->dlpi_addr, desc = (uintptr_t)lib->desc;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        mine = ph->p_type == PT_LOAD && desc >= base + ph->p_vaddr &&
               desc < base + ph->p_vaddr + ph->p_memsz;
    }
    if (!mine)
        return 0;
    lib->base = base;
    lib->map_lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (base + ph->p_vaddr < lib->map_lo)
            lib->map_lo = base + ph->p_vaddr;
        if (base + ph->p_vaddr + ph->p_memsz > lib->map_hi)
            lib->map_hi = base + ph->p_vaddr + ph->p_memsz;
    }
    /* the writable segment is the one .data and .bss are in: not one that is all RELRO
     * (read-only once relocated), which ld.lld puts first */
    uintptr_t relro_lo = 0, relro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            relro_lo = base + info->dlpi_phdr[i].p_vaddr;
            relro_hi = relro_lo + info->dlpi_phdr[i].p_memsz;
        }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            lib->text_lo = lo;
            lib->text_hi = hi;
        } else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && !lib->data_hi &&
                   !(lo >= relro_lo && hi <= relro_hi)) {
            lib->data_lo = lo;
            lib->data_hi = hi;
        }
    }
    return 1;
}

static void find_text(nop_library *lib)
{
    dl_iterate_phdr(text_of, lib);
}

static int cmp_global(const void *a, const void *b)
{
    const nopi_global *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* memcheck: the library's global and static arrays.  libtcc's -b lists them in .bounds as
 * (address, size) pairs, which the loader has relocated; read them in memory, sorted.
 * Without them memcheck still checks TCM and locals.  image: the library file's bytes. */
static void find_globals(nop_library *lib, const char *image, size_t len)
{
    size_t off, size;
    uint64_t addr = 0;
    int found = nopi_elf_section(image, len, ".bounds", &off, &size, &addr);
    uintptr_t at = lib->base + (uintptr_t)addr;
    if (found != 0 || at < lib->map_lo || at > lib->map_hi || size > lib->map_hi - at ||
        at % sizeof(uintptr_t) != 0)
        return;
    const uintptr_t *pairs = (const uintptr_t *)at;
    size_t n = size / (2 * sizeof *pairs);
    if (!(lib->globals = calloc(n ? n : 1, sizeof *lib->globals)))
        return;
    for (size_t i = 0; i < n; i++) {
        if (!pairs[2 * i] || !pairs[2 * i + 1])
            continue;
        /* by the full symbol table, which a system link's version script leaves whole */
        const char *name = nopi_elf_symbol_at(image, len, pairs[2 * i] - lib->base,
                                              STT_OBJECT, NULL);
        lib->globals[lib->nglobals++] =
            (nopi_global){ pairs[2 * i], pairs[2 * i + 1], name ? strdup(name) : NULL };
    }
    qsort(lib->globals, lib->nglobals, sizeof *lib->globals, cmp_global);
}

/* memcheck: what its reports need, from one read of the library file: the source lines and
 * the global arrays.  Either may be missing; memcheck then says less or checks less. */
static void load_memcheck_info(nop_library *lib)
{
    char *image;
    size_t len;
    if (nopi_read_file(lib->path, &image, &len) != 0)
        return;
    lib->lines = nopi_lines_parse(image, len, lib->base);
    find_globals(lib, image, len);
    free(image);
}

int nop_library_open(nop_library **out, const char *path, nop_error *err)
{
    *out = NULL;
    if (access(path, R_OK) != 0)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s': %s", path,
                         strerror(errno));
    /* dlopen searches the library path for a name without a slash; ours is a file */
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, strchr(path, '/') ? "" : "./");
    nopi_sb_puts(&sb, path);
    char *full = nopi_sb_take(&sb);
    if (!full)
        return nopi_nomem(err);
    /* before the load: a file replaced between the two is seen as changed, never kept */
    struct stat st = { 0 };
    stat(path, &st);
    void *h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot load '%s': %s", path, dlerror());
        free(full);
        return -1;
    }
    const nt__lib_desc *d = dlsym(h, NT_LIB_SYMBOL);
    if (!d || d->magic != NT_LIB_MAGIC) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a neuronop op library", path);
        nopi_detail(err, "build one with 'neuronop build'");
        dlclose(h);
        free(full);
        return -1;
    }
    if (d->abi_version != NT_ABI_VERSION) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' was built by neuronop %s for "
                  "library format %u; this neuronop reads format %d", path,
                  d->neuronop_version, d->abi_version, NT_ABI_VERSION);
        nopi_detail(err, "rebuild it with 'neuronop build --force'");
        dlclose(h);
        free(full);
        return -1;
    }
    nop_library *lib = calloc(1, sizeof *lib);
    if (!lib) {
        dlclose(h);
        free(full);
        return nopi_nomem(err);
    }
    lib->handle = h;
    lib->desc = d;
    lib->path = full;
    lib->st = st;
    const char *names = dlsym(h, NOPI_ARGNAMES_SYMBOL);
    lib->argnames = names ? strdup(names) : NULL;   /* without: no names, not an error */
    /* bind the library's trampolines to the runtime, once, before any call */
    *d->api = &nopi_api_table;
    find_text(lib);
    if (d->memcheck)
        load_memcheck_info(lib);
    *out = lib;
    return 0;
}

bool nop_library_changed(const nop_library *lib)
{
    struct stat now;
    return stat(lib->path, &now) != 0 || !nopi_same_file(&now, &lib->st);
}

const nop_library *nopi_library_runnable(const nop_library *lib, nop_library **opened,
                                         nop_error *err)
{
    *opened = NULL;
    if (lib->handle)
        return lib;
    if (nop_library_open(opened, lib->path, err) != 0)
        return NULL;
    /* the very file the caller described, and still it once loaded: a rebuild in between
     * would run another build's code under this description, and in `neuronop test` judge
     * one build's kernel against another's reference (a red team rebuilt during a test, and
     * cases that fail with either build passed) */
    if (!nopi_same_file(&(*opened)->st, &lib->st) || nop_library_changed(*opened)) {
        nop_library_close(*opened);
        *opened = NULL;
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' changed (was it rebuilt?) since "
                  "neuronop read it for this command; run the command again", lib->path);
        return NULL;
    }
    return *opened;
}

void nop_library_close(nop_library *lib)
{
    if (!lib)
        return;
    if (lib->handle)
        dlclose(lib->handle);
    else
        nopi_library_free_described(lib);   /* described from its file: describe.c */
    nopi_lines_free(lib->lines);
    for (size_t i = 0; i < lib->nglobals; i++)
        free(lib->globals[i].name);
    free(lib->globals);
    free(lib->argnames);
    free(lib->path);
    free(lib);
}

char *nop_library_json(const nop_library *lib)
{
    const nt__lib_desc *d = lib->desc;
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "{\n  \"library\": ");
    nopi_sb_json_string(&sb, d->name);
    nopi_sb_puts(&sb, ",\n  \"namespace\": ");
    if (d->ns)
        nopi_sb_json_string(&sb, d->ns);
    else
        nopi_sb_puts(&sb, "null");
    nopi_sb_puts(&sb, ",\n  \"path\": ");
    nopi_sb_json_string(&sb, lib->path);
    nopi_sb_puts(&sb, ",\n  \"neuronop_version\": ");
    nopi_sb_json_string(&sb, d->neuronop_version);
    nopi_sb_printf(&sb, ",\n  \"format\": %u,\n  \"multicore\": %s,\n  \"memcheck\": %s,\n"
                   "  \"stack_size\": %lld,\n  \"stack_size_from\": ", d->abi_version,
                   d->multicore ? "true" : "false", d->memcheck ? "true" : "false",
                   (long long)d->stack_size);
    nopi_sb_json_string(&sb, d->stack_size_from);
    nopi_sb_puts(&sb, ",\n  \"extra_cflags\": [");
    for (int i = 0; i < d->ncflags; i++) {
        nopi_sb_puts(&sb, i ? ", " : "");
        nopi_sb_json_string(&sb, d->cflags[i]);
    }
    nopi_sb_puts(&sb, "],\n  \"sources\": [");
    for (int i = 0; i < d->nsources; i++) {
        nopi_sb_puts(&sb, i ? ",\n    {\"path\": " : "\n    {\"path\": ");
        nopi_sb_json_string(&sb, d->sources[i].path);
        nopi_sb_puts(&sb, ", \"role\": ");
        nopi_sb_json_string(&sb, d->sources[i].role);
        nopi_sb_puts(&sb, ", \"xxh3_128\": ");
        nopi_sb_json_string(&sb, d->sources[i].hash);
        nopi_sb_puts(&sb, "}");
    }
    nopi_sb_puts(&sb, "\n  ],\n  \"ops\": [");
    for (int i = 0; i < d->nops; i++) {
        const nt__op_desc *op = &d->ops[i];
        nopi_sb_puts(&sb, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
        nopi_sb_json_string(&sb, op->name);
        nopi_sb_puts(&sb, ", \"args\": [");
        for (int k = 0; k < op->nargs; k++)
            nopi_sb_printf(&sb, "%s\"%s\"", k ? ", " : "",
                           nop_argtype_name((enum nop_argtype)op->argtypes[k]));
        nopi_sb_puts(&sb, "], \"kernel\": ");
        nopi_sb_json_string(&sb, op->kernel);
        nopi_sb_puts(&sb, ", \"shape\": ");
        nopi_sb_json_string(&sb, op->shape);
        /* the parameters' names, when the library records any (argnames.c): one it left
         * unnamed is "" */
        char name[128];
        bool named = false;
        for (int k = 0; k < op->nargs; k++)
            named |= nop_library_op_argname(lib, i, k, name, sizeof name);
        for (int k = 0; named && k < op->nargs; k++) {
            if (!nop_library_op_argname(lib, i, k, name, sizeof name))
                name[0] = '\0';
            nopi_sb_puts(&sb, k ? ", " : ", \"argnames\": [");
            nopi_sb_json_string(&sb, name);
            nopi_sb_puts(&sb, k == op->nargs - 1 ? "]" : "");
        }
        nopi_sb_puts(&sb, "}");
    }
    nopi_sb_puts(&sb, "\n  ],\n  \"references\": [");
    for (int i = 0; i < d->nrefs; i++) {
        nopi_sb_puts(&sb, i ? ", {\"name\": " : "{\"name\": ");
        nopi_sb_json_string(&sb, d->refs[i].name);
        nopi_sb_puts(&sb, ", \"op\": ");
        nopi_sb_json_string(&sb, d->ops[d->refs[i].op].name);
        nopi_sb_puts(&sb, "}");
    }
    nopi_sb_puts(&sb, "],\n  \"build_key\": ");
    nopi_sb_json_string(&sb, d->build_key);
    nopi_sb_puts(&sb, "\n}\n");
    return nopi_sb_take(&sb);
}

const char *nop_library_name(const nop_library *lib) { return lib->desc->name; }
const char *nop_library_path(const nop_library *lib) { return lib->path; }
bool nop_library_multicore(const nop_library *lib) { return lib->desc->multicore != 0; }
bool nop_library_memcheck(const nop_library *lib) { return lib->desc->memcheck != 0; }
int64_t nop_library_stack_size(const nop_library *lib) { return lib->desc->stack_size; }
int nop_library_op_count(const nop_library *lib) { return lib->desc->nops; }

int nop_library_op(const nop_library *lib, int i, nop_opinfo *out)
{
    if (i < 0 || i >= lib->desc->nops)
        return -1;
    const nt__op_desc *op = &lib->desc->ops[i];
    memset(out, 0, sizeof *out);
    out->name = op->name;
    out->kernel = op->kernel;
    out->shape = op->shape;
    out->nargs = op->nargs < NOP_MAX_ARGS ? op->nargs : NOP_MAX_ARGS;
    for (int k = 0; k < out->nargs; k++)
        out->args[k] = (enum nop_argtype)op->argtypes[k];
    return 0;
}

const char *nop_library_namespace(const nop_library *lib) { return lib->desc->ns; }

void nopi_op_qualname(const nop_library *lib, const char *name, char *buf, size_t size)
{
    const char *ns = lib->desc->ns;
    snprintf(buf, size, "%s%s%s", ns ? ns : "", ns ? "::" : "", name);
}

int nop_library_find_op(const nop_library *lib, const char *name)
{
    /* "my_ops::relu" names op relu of a library registered as NEURON_LIBRARY(my_ops, m) */
    const char *ns = lib->desc->ns;
    size_t n = ns ? strlen(ns) : 0;
    if (n && strncmp(name, ns, n) == 0 && name[n] == ':' && name[n + 1] == ':')
        name += n + 2;
    for (int i = 0; i < lib->desc->nops; i++)
        if (strcmp(lib->desc->ops[i].name, name) == 0)
            return i;
    return -1;
}

int nopi_library_same_op(const nop_library *lib, int op, const char *name, nop_error *err)
{
    if (op >= 0 && op < lib->desc->nops && strcmp(lib->desc->ops[op].name, name) == 0)
        return op;
    for (int i = 0; i < lib->desc->nops; i++)
        if (strcmp(lib->desc->ops[i].name, name) == 0)
            return i;
    nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' no longer has op '%s': it was rebuilt "
              "without it since it was loaded", lib->path, name);
    return -1;
}

int nop_library_find_reference(const nop_library *lib, const char *name)
{
    for (int i = 0; i < lib->desc->nrefs; i++)
        if (strcmp(lib->desc->refs[i].name, name) == 0)
            return i;
    return -1;
}

bool nop_library_op_argname(const nop_library *lib, int op, int k, char *buf, size_t size)
{
    if (!lib->argnames || op < 0 || op >= lib->desc->nops || k < 0 ||
        k >= lib->desc->ops[op].nargs || size == 0)
        return false;
    const char *line = lib->argnames;
    for (int i = 0; i < op; i++) {   /* one line per op; fewer lines: no names */
        line = strchr(line, '\n');
        if (!line)
            return false;
        line++;
    }
    const char *end = line + strcspn(line, "\n");
    for (int i = 0; i < k; i++) {
        const char *comma = memchr(line, ',', (size_t)(end - line));
        if (!comma)
            return false;
        line = comma + 1;
    }
    size_t n = strcspn(line, ",\n");
    if (n == 0 || n >= size)
        return false;
    memcpy(buf, line, n);
    buf[n] = '\0';
    return true;
}
