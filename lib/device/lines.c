/*
 * lines.c - reads a library's stabs into a table of functions, lines and locals (lines.h).
 *
 * libtcc's -g writes stabs: a .stab section of 12-byte records and a .stabstr of strings.
 * The records this reader uses, in the order tcc writes them for each unit:
 *   N_SO    the compile folder (a name ending in '/'), then the file; an empty name ends
 *           the unit, its value the end of the unit's code
 *   N_SOL   the file the following lines come from (#line, #include)
 *   N_FUN   a function: "name:F<type>", value its address
 *   N_SLINE a line: desc the line number, value its offset from the function's address
 *   N_LSYM  inside a function, a local: "name:<type>", value its offset from the frame
 *           pointer (a 32-bit two's complement number); outside one, a type
 *   N_STSYM, N_LCSYM  a static variable (initialised or not): "name:S<type>", value its
 *           address (globals, N_GSYM, carry no address: the dynamic symbol table has them)
 * Values are addresses in the file; the table adds the library's load address.
 *
 * Each unit's records begin with a header (type 0) and name strings of the unit's own part
 * of .stabstr.  Where a header gives that part's size (its value), the next unit's part
 * follows it; libtcc's linker leaves the value 0 and the names unrelocated, so a unit's part
 * is taken to end after the last string its records name (tcc puts only strings it names).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "base/elfsyms.h"
#include "base/mangle.h"
#include "lines.h"

enum {
    N_UNDF = 0, N_FUN = 0x24, N_STSYM = 0x26, N_LCSYM = 0x28, N_SLINE = 0x44, N_LSYM = 0x80, N_SO = 0x64,
    N_SOL = 0x84
};

struct stab {
    uint32_t strx;
    uint8_t type, other;
    uint16_t desc;
    uint32_t value;
};

typedef struct fn {
    uintptr_t lo, hi;           /* its code: [lo, hi) */
    const char *name, *file, *dir;
    size_t first_line, nlines, first_local, nlocals;
} fn;

typedef struct line {
    uintptr_t addr;
    int line;
    const char *file;
} line;

typedef struct local {
    long off;
    const char *name;
} local;

typedef struct named {
    uintptr_t addr;
    const char *name;
} named;

struct nopi_lines {
    char *strs;                 /* a copy of .stabstr; names are cut at their ':' in place */
    size_t strsize;
    fn *fns;
    size_t nfns;
    line *lines;
    size_t nlines;
    local *locals;
    size_t nlocals;
    named *statics;
    size_t nstatics;
};

/* The string at strx, or NULL when strx is out of range or the string runs off the end. */
static const char *str_at(nopi_lines *l, uint32_t strx)
{
    if (strx >= l->strsize || !memchr(l->strs + strx, '\0', l->strsize - strx))
        return NULL;
    return l->strs + strx;
}

/* Cuts "name:type" to "name"; returns the character after the ':' ('\0' when none). */
static char cut_name(const char *s)
{
    char *colon = strchr(s, ':');
    if (!colon)
        return '\0';
    *colon = '\0';
    return colon[1];
}

/* A C++ function's mangled name becomes its qualified name, in place (never longer), in
 * the table's own copy of the strings, as cut_name writes. */
static void readable_name(const char *s)
{
    nopi_cxxfn f;
    if (s && strncmp(s, "_Z", 2) == 0 && nopi_cxx_read(s, &f) && f.qual[0] &&
        strlen(f.qual) <= strlen(s))
        memmove((char *)s, f.qual, strlen(f.qual) + 1);
}

static int cmp_fn(const void *a, const void *b)
{
    const fn *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Reads every record; the arrays are sized for the worst case (one entry per record). */
static int parse(nopi_lines *l, const char *data, size_t n, uintptr_t base)
{
    l->fns = calloc(n ? n : 1, sizeof *l->fns);
    l->lines = calloc(n ? n : 1, sizeof *l->lines);
    l->locals = calloc(n ? n : 1, sizeof *l->locals);
    l->statics = calloc(n ? n : 1, sizeof *l->statics);
    if (!l->fns || !l->lines || !l->locals || !l->statics)
        return -1;
    const char *dir = NULL, *file = NULL;
    fn *cur = NULL;
    uint64_t unit = 0, next = 0, end = 0;   /* this unit's strings' base; the next one's */
    for (size_t i = 0; i < n; i++) {
        struct stab st;
        memcpy(&st, data + i * sizeof st, sizeof st);
        if (st.type == N_UNDF) {   /* a unit's header */
            unit = next ? next : end;
            next = st.value ? unit + st.value : 0;
            end = unit;
            continue;
        }
        const char *s = unit + st.strx <= UINT32_MAX ? str_at(l, (uint32_t)(unit + st.strx))
                                                     : NULL;
        if (s && st.strx && unit + st.strx + strlen(s) + 1 > end)
            end = unit + st.strx + strlen(s) + 1;
        switch (st.type) {
        case N_SO:
            /* the unit's end; ld linking libtcc's stabs leaves it at the unit's start */
            if (cur && !cur->hi && base + st.value > cur->lo)
                cur->hi = base + st.value;
            cur = NULL;
            if (s && s[0] && s[strlen(s) - 1] == '/')
                dir = s;
            else if (s && s[0])
                file = s;
            break;
        case N_SOL:
            if (s && s[0])
                file = s;
            break;
        case N_FUN:
            if (!s || !s[0])
                break;
            if (cur && !cur->hi)
                cur->hi = base + st.value;
            cur = &l->fns[l->nfns++];
            cut_name(s);
            readable_name(s);
            *cur = (fn){ base + st.value, 0, s, file, dir, l->nlines, 0, l->nlocals, 0 };
            break;
        case N_SLINE:
            if (cur) {
                l->lines[l->nlines++] = (line){ cur->lo + st.value, st.desc, file };
                cur->nlines++;
            }
            break;
        case N_LSYM:
            if (cur && s && s[0]) {
                char kind = cut_name(s);
                if (kind != 't' && kind != 'T')   /* a variable, not a type it declares */
                    l->locals[l->nlocals++] = (local){ (long)(int32_t)st.value, s };
                cur->nlocals = l->nlocals - cur->first_local;
            }
            break;
        case N_STSYM:
        case N_LCSYM:
            if (s && s[0]) {
                cut_name(s);
                l->statics[l->nstatics++] = (named){ base + st.value, s };
            }
            break;
        default:
            break;
        }
    }
    qsort(l->fns, l->nfns, sizeof *l->fns, cmp_fn);
    return 0;
}

/* Ends the functions whose end the stabs did not give: by the size the symbol table gives
 * the function, else up to the next function. */
static void end_functions(nopi_lines *l, const char *image, size_t len, uintptr_t base)
{
    for (size_t i = 0; i < l->nfns; i++) {
        fn *f = &l->fns[i];
        uint64_t size = 0;
        if (f->hi)
            continue;
        if (nopi_elf_symbol_at(image, len, f->lo - base, STT_FUNC, &size) && size)
            f->hi = f->lo + size;
        else
            f->hi = i + 1 < l->nfns ? l->fns[i + 1].lo : f->lo + 1;
    }
}

nopi_lines *nopi_lines_parse(const char *image, size_t len, uintptr_t base)
{
    size_t stab_off, stab_size, str_off, str_size;
    nopi_lines *l = NULL;
    if (nopi_elf_section(image, len, ".stab", &stab_off, &stab_size, NULL) != 0 ||
        nopi_elf_section(image, len, ".stabstr", &str_off, &str_size, NULL) != 0 ||
        !(l = calloc(1, sizeof *l)) || !(l->strs = malloc(str_size + 1)))
        goto fail;
    memcpy(l->strs, image + str_off, str_size);
    l->strs[str_size] = '\0';
    l->strsize = str_size + 1;
    if (parse(l, image + stab_off, stab_size / sizeof(struct stab), base) != 0)
        goto fail;
    end_functions(l, image, len, base);
    return l;
fail:
    nopi_lines_free(l);
    return NULL;
}

nopi_lines *nopi_lines_read(const char *path, uintptr_t base)
{
    char *data;
    size_t len;
    if (nopi_read_file(path, &data, &len) != 0)
        return NULL;
    nopi_lines *l = nopi_lines_parse(data, len, base);
    free(data);
    return l;
}

void nopi_lines_free(nopi_lines *l)
{
    if (!l)
        return;
    free(l->strs);
    free(l->fns);
    free(l->lines);
    free(l->locals);
    free(l->statics);
    free(l);
}

/* The function holding pc, or NULL. */
static const fn *fn_at(const nopi_lines *l, uintptr_t pc)
{
    if (!l)
        return NULL;
    size_t lo = 0, hi = l->nfns;   /* the last function starting at or before pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->fns[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const fn *f = &l->fns[lo - 1];
    if (pc >= f->hi)
        return NULL;
    return f;
}

bool nopi_lines_find(const nopi_lines *l, uintptr_t pc, nopi_where *w)
{
    memset(w, 0, sizeof *w);
    const fn *f = fn_at(l, pc);
    if (!f)
        return false;
    w->func = f->name;
    w->file = f->file;
    w->dir = f->dir;
    for (size_t i = 0; i < f->nlines; i++) {   /* lines come in address order */
        const line *ln = &l->lines[f->first_line + i];
        if (ln->addr > pc)
            break;
        w->line = ln->line;
        w->file = ln->file;
    }
    return true;
}

const char *nopi_lines_local(const nopi_lines *l, uintptr_t pc, long off)
{
    const fn *f = fn_at(l, pc);
    for (size_t i = 0; f && i < f->nlocals; i++)
        if (l->locals[f->first_local + i].off == off)
            return l->locals[f->first_local + i].name;
    return NULL;
}

const char *nopi_lines_static(const nopi_lines *l, uintptr_t addr)
{
    for (size_t i = 0; l && i < l->nstatics; i++)
        if (l->statics[i].addr == addr)
            return l->statics[i].name;
    return NULL;
}
