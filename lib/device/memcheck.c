/*
 * memcheck.c - checks a kernel's own pointer accesses: the memcheck hooks of api.h.
 *
 * A library built with --memcheck has its kernels compiled with libtcc's bounds checking
 * (-b).  Before each access through a pointer the code calls __bound_ptr_indirN(p, off),
 * pointer arithmetic calls __bound_ptr_add(p, off), a function with local arrays (or locals
 * whose address it takes) registers them on entry with __bound_local_new(table) and drops
 * them on return, and memcpy, strlen and the like become __bound_memcpy, __bound_strlen ...
 * libtcc's own implementation of those (bcheck.o) keeps one process-wide tree under a
 * spinlock, replaces malloc and exits the process on an error.  neuronop implements the
 * same entry points here instead, per core, against what the device knows: the core's live
 * tcm_malloc buffers, the kernel's live locals and the library's global and static arrays.  A bad access ends that core with a report
 * naming the line, and cores check in parallel.
 *
 * The rules: an access through a pointer into a live region must stay inside it; any access
 * to the core's TCM pool must be inside a live tcm_malloc buffer (this catches use after
 * tcm_free); pointer arithmetic on a pointer into a region must stay inside it or one past
 * its end (C leaves anything further undefined).  The last rule matters more than it seems:
 * tcc folds a float or double read into an arithmetic instruction (sum += buf[i]) after
 * checking only the arithmetic, so such a read is caught when its index is past the end by
 * more than one element, and not at exactly one past.  Pointers into anything else (host
 * memory the API returned, such as nt_sizes) are not checked here: the API checks its own
 * arguments.
 *
 * Hooks run on the kernel's stack, so they use little of it; a report is written on the
 * host's stack (nopi_on_host_stack), where reading the source line is safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"

#define INITIAL_LOCALS 64

int nopi_memcheck_start(nopi_core *c)
{
    memset(&c->mc, 0, sizeof c->mc);
    c->mc.cap = INITIAL_LOCALS;
    c->mc.locals = malloc(c->mc.cap * sizeof *c->mc.locals);
    return c->mc.locals ? 0 : -1;
}

void nopi_memcheck_end(nopi_core *c)
{
    free(c->mc.locals);
    memset(&c->mc, 0, sizeof c->mc);
}

void nopi_memcheck_array(nopi_core *c, const void *p, size_t n, const char *api)
{
    if (!c->run->memcheck || !c->mc.locals)
        return;
    nopi_memcheck *m = &c->mc;
    for (size_t i = 0; i < m->narrays && i < NOPI_ARRAY_LEN(m->arrays); i++)
        if (m->arrays[i].start == (uintptr_t)p) {
            m->arrays[i].size = n;
            return;
        }
    m->arrays[m->narrays++ % NOPI_ARRAY_LEN(m->arrays)] =
        (nopi_mc_region){ (uintptr_t)p, n, NOPI_MC_RUNTIME, api, 0, 0 };
}

/* The core a hook checks for; NULL outside a memcheck run's kernel code, where a hook only
 * does its arithmetic. */
static nopi_core *checked_core(void)
{
    nopi_core *c = nopi_current();
    return c && c->run->memcheck && !c->shape_mode && c->mc.locals ? c : NULL;
}

/* ---- regions ----------------------------------------------------------------------------- */

static bool holds(const nopi_mc_region *r, uintptr_t a, bool end_ok)
{
    return a >= r->start && (a - r->start < r->size || (end_ok && a - r->start == r->size));
}

static bool in_tcm(const nopi_core *c, uintptr_t a)
{
    uintptr_t pool = (uintptr_t)c->tcm;
    return a >= pool && a - pool < (uintptr_t)c->run->profile->tcm_bytes;
}

/* The library's global or static array holding a (shared by every core, read-only). */
static bool find_global(const nop_library *lib, uintptr_t a, bool end_ok, nopi_mc_region *r)
{
    size_t lo = 0, hi = lib->nglobals;   /* the last array starting at or before a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lib->globals[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    nopi_mc_region g = { lib->globals[lo - 1].start, lib->globals[lo - 1].size,
                         NOPI_MC_GLOBAL, lib->globals[lo - 1].name, 0, 0 };
    if (!holds(&g, a, end_ok))
        return false;
    *r = g;
    return true;
}

/* The region holding a, innermost local first; end_ok also accepts a region ending at a (a
 * pointer one past the end, from which code may index backwards). */
static bool find_in(nopi_core *c, uintptr_t a, bool end_ok, nopi_mc_region *r)
{
    for (size_t i = c->mc.nlocals; i-- > 0;)
        if (holds(&c->mc.locals[i], a, end_ok)) {
            *r = c->mc.locals[i];
            return true;
        }
    for (size_t i = 0; i < c->mc.narrays && i < NOPI_ARRAY_LEN(c->mc.arrays); i++)
        if (holds(&c->mc.arrays[i], a, end_ok)) {
            *r = c->mc.arrays[i];
            return true;
        }
    /* a TCM block: the one holding a, or (end_ok) the byte before it */
    int b = nopi_tcm_find(c, (const void *)a, 0);
    if (b < 0 && end_ok)
        b = nopi_tcm_find(c, (const void *)(a - 1), 0);
    if (b < 0)
        return !in_tcm(c, a) && find_global(c->run->lib, a, end_ok, r);
    const nopi_tcm_block *blk = &c->blocks[b];
    if (blk->stream >= 0)   /* a stream's TCM is the runtime's, never the kernel's */
        return false;
    *r = (nopi_mc_region){ (uintptr_t)c->tcm + blk->offset, blk->req, NOPI_MC_TCM, blk->site,
                           0, 0 };
    return true;
}

static bool find_region(nopi_core *c, uintptr_t a, nopi_mc_region *r)
{
    return find_in(c, a, false, r) || find_in(c, a, true, r);
}

static void grow_locals(nopi_core *c, void *arg)
{
    bool *ok = arg;
    size_t cap = c->mc.cap * 2;
    nopi_mc_region *v = realloc(c->mc.locals, cap * sizeof *v);
    *ok = v != NULL;
    if (v) {
        c->mc.locals = v;
        c->mc.cap = cap;
    }
}

static void push_local(nopi_core *c, const nopi_mc_region *r)
{
    if (c->mc.nlocals == c->mc.cap) {
        bool ok;
        nopi_on_host_stack(c, grow_locals, &ok);   /* malloc wants more stack than we have */
        if (!ok)
            nopi_core_fail(c, "out of memory (memcheck's table of local arrays)");
    }
    c->mc.locals[c->mc.nlocals++] = *r;
}

/* Drops the locals of the frame at fp and of every frame below it: they have returned. */
static void pop_frames(nopi_core *c, uintptr_t fp)
{
    while (c->mc.nlocals > 0 && c->mc.locals[c->mc.nlocals - 1].fp <= fp)
        c->mc.nlocals--;
}

/* ---- reports ----------------------------------------------------------------------------- */

typedef struct report {
    const char *op;             /* "access", "pointer arithmetic" or the libc function */
    const char *verb;           /* "", "reads " or "writes " */
    uintptr_t a;
    size_t n;
    const nopi_mc_region *r;    /* the region it left, or NULL: TCM outside every buffer */
    const void *pc;             /* the return address of the instrumented call */
    bool arithmetic;            /* pointer arithmetic, not an access: n is 0 */
} report;

/* "k.c:14 in 'f'", as much of it as the library's debug info knows. */
static void describe_code(const nopi_core *c, const void *pc, char *buf, size_t size,
                          nopi_where *w)
{
    /* pc is a return address: the call that made the access ends just before it */
    if (!nopi_lines_find(c->run->lib->lines, (uintptr_t)pc - 1, w) || !w->file)
        snprintf(buf, size, "%s%s%s", w->func ? "'" : "kernel code (no debug info)",
                 w->func ? w->func : "", w->func ? "'" : "");
    else if (w->func)
        snprintf(buf, size, "%s:%d in '%s'", w->file, w->line, w->func);
    else
        snprintf(buf, size, "%s:%d", w->file, w->line);
}

static void describe_region(const nopi_core *c, const nopi_mc_region *r, char *buf,
                            size_t size)
{
    const nopi_lines *lines = c->run->lib->lines;
    nopi_where w;
    char at[200];
    switch (r->kind) {
    case NOPI_MC_TCM:
        if (r->site) {
            describe_code(c, r->site, at, sizeof at, &w);
            snprintf(buf, size, "the %zu-byte TCM buffer from tcm_malloc at %s",
                     (size_t)r->size, at);
        } else {
            snprintf(buf, size, "a %zu-byte TCM buffer", (size_t)r->size);
        }
        break;
    case NOPI_MC_LOCAL: {
        nopi_lines_find(lines, (uintptr_t)r->site - 1, &w);
        const char *name = nopi_lines_local(lines, (uintptr_t)r->site - 1, r->frame_off);
        if (name && w.func)
            snprintf(buf, size, "the %zu-byte local '%s' of '%s'", (size_t)r->size, name,
                     w.func);
        else if (w.func)
            snprintf(buf, size, "a %zu-byte local of '%s'", (size_t)r->size, w.func);
        else
            snprintf(buf, size, "a %zu-byte local", (size_t)r->size);
        break;
    }
    case NOPI_MC_ALLOCA:
        snprintf(buf, size, "a %zu-byte variable-length array", (size_t)r->size);
        break;
    case NOPI_MC_RUNTIME:
        snprintf(buf, size, "the %zu-byte array %s returned (one int64_t per dimension: %zu)",
                 (size_t)r->size, (const char *)r->site, (size_t)r->size / sizeof(int64_t));
        break;
    case NOPI_MC_GLOBAL: {
        /* the stabs name statics; the symbol table names the rest, which are globals */
        const char *name = nopi_lines_static(lines, r->start);
        if (name)
            snprintf(buf, size, "the %zu-byte static '%s'", (size_t)r->size, name);
        else if (r->site)
            snprintf(buf, size, "the %zu-byte global '%s'", (size_t)r->size,
                     (const char *)r->site);
        else
            snprintf(buf, size, "a %zu-byte global or static array", (size_t)r->size);
        break;
    }
    }
}

/* The detail under an access to TCM outside every live buffer.  Some compilers' checks
 * (g++'s, for C++ kernels) give only the address, not the pointer it came from, so an index
 * well past a buffer's end lands here too: name the live buffer just below the address, the
 * likeliest culprit, without claiming it is the one. */
static void describe_no_buffer(nopi_core *c, uintptr_t a, char *buf, size_t size)
{
    const nopi_tcm_block *below = NULL;
    for (int i = 0; i < c->nblocks; i++) {
        const nopi_tcm_block *b = &c->blocks[i];
        if (b->stream < 0 && (uintptr_t)c->tcm + b->offset + b->req <= a)
            below = b;   /* blocks are kept in address order */
    }
    if (!below) {
        snprintf(buf, size, "the buffer was freed with tcm_free, or the pointer was never one "
                 "tcm_malloc returned");
        return;
    }
    nopi_mc_region r = { (uintptr_t)c->tcm + below->offset, below->req, NOPI_MC_TCM,
                         below->site, 0, 0 };
    char region[400];
    describe_region(c, &r, region, sizeof region);
    snprintf(buf, size, "%zu bytes past the end of %s: an index past its end?  Or the buffer "
             "was freed with tcm_free, or the pointer was never one tcm_malloc returned",
             (size_t)(a - (r.start + r.size)), region);
}

/* Writes the report into c->diag.  Runs on the host's stack. */
static void write_report(nopi_core *c, void *arg)
{
    const report *rep = arg;
    nopi_where w;
    char at[200], region[400];
    describe_code(c, rep->pc, at, sizeof at, &w);
    const char *plural = rep->n == 1 ? "" : "s";
    if (rep->arithmetic) {
        describe_region(c, rep->r, region, sizeof region);
        snprintf(c->diag.msg, sizeof c->diag.msg, "out-of-bounds %s at %s (memcheck): "
                 "makes a pointer to offset %lld of %s", rep->op, at,
                 (long long)(rep->a - rep->r->start), region);
    } else if (rep->r) {
        describe_region(c, rep->r, region, sizeof region);
        snprintf(c->diag.msg, sizeof c->diag.msg, "out-of-bounds %s at %s (memcheck): %s%zu "
                 "byte%s at offset %lld of %s", rep->op, at, rep->verb, rep->n, plural,
                 (long long)(rep->a - rep->r->start), region);
    } else {
        snprintf(c->diag.msg, sizeof c->diag.msg, "invalid TCM %s at %s (memcheck): %s%zu "
                 "byte%s at TCM offset %lld, in no live tcm_malloc buffer", rep->op, at,
                 rep->verb, rep->n, plural, (long long)(rep->a - (uintptr_t)c->tcm));
    }
    char text[512], *path = NULL;
    size_t used = 0;
    if (w.file && w.line > 0 && (path = nopi_path_join(w.dir ? w.dir : ".", w.file)) &&
        nopi_read_line(path, w.line, text, sizeof text) == 0)
        used = (size_t)snprintf(c->diag.detail, sizeof c->diag.detail, "%5d | %s\n", w.line,
                                text);
    free(path);
    if (used >= sizeof c->diag.detail)
        used = sizeof c->diag.detail - 1;
    if (rep->arithmetic)
        snprintf(c->diag.detail + used, sizeof c->diag.detail - used, "a pointer may point "
                 "at bytes [0, %zu] of it (the last just past its end); C leaves anything "
                 "further undefined", (size_t)rep->r->size);
    else if (rep->r)
        snprintf(c->diag.detail + used, sizeof c->diag.detail - used, "only bytes [0, %zu) "
                 "of it may be touched: check the index or the loop bound", (size_t)rep->r->size);
    else
        describe_no_buffer(c, rep->a, c->diag.detail + used, sizeof c->diag.detail - used);
}

static _Noreturn void fail(nopi_core *c, const report *rep)
{
    nopi_on_host_stack(c, write_report, (void *)rep);
    nopi_core_fail_diag(c);
}

/* ---- checks ------------------------------------------------------------------------------ */

/* Checks n bytes at a, reached through pointer `base` (a itself, or what a was computed
 * from by an offset).  Does not return when they are out of bounds. */
static void check(nopi_core *c, uintptr_t base, uintptr_t a, size_t n, const void *pc,
                  const char *op, const char *verb)
{
    if (n == 0)
        return;
    nopi_mc_region r;
    bool known = find_region(c, base, &r);
    if (known && (a < r.start || a - r.start > r.size || n > r.size - (a - r.start)))
        fail(c, &(report){ op, verb, a, n, &r, pc, false });
    if (!known && (in_tcm(c, a) || in_tcm(c, a + n - 1)))
        fail(c, &(report){ op, verb, a, n, NULL, pc, false });
}

/* The length of the string at s, checked to end inside its region: reading a string is
 * an access to each of its bytes and the terminating '\0'. */
static size_t checked_strlen(nopi_core *c, const char *s, size_t max, const void *pc,
                             const char *op)
{
    nopi_mc_region r;
    uintptr_t a = (uintptr_t)s;
    if (!find_in(c, a, false, &r)) {
        size_t len = strnlen(s, max);
        check(c, a, a, len < max ? len + 1 : len, pc, op, "reads ");
        return len;
    }
    size_t room = r.size - (a - r.start);
    size_t len = strnlen(s, room < max ? room : max);
    if (len == room && room < max)   /* no '\0' before the region ends */
        fail(c, &(report){ op, "reads ", a, room + 1, &r, pc, false });
    return len;
}

/* ---- the hooks --------------------------------------------------------------------------- */

void *nopi_mc_ptr_add(char *p, size_t off, const void *pc)
{
    uintptr_t a = (uintptr_t)p + off;   /* in integers: the result may leave its object */
    nopi_core *c = checked_core();
    nopi_mc_region r;
    if (c && find_region(c, (uintptr_t)p, &r) && !holds(&r, a, true))
        fail(c, &(report){ "pointer arithmetic", "", a, 0, &r, pc, true });
    return (void *)a;
}

void *nopi_mc_ptr_indir(char *p, size_t off, size_t size, const void *pc)
{
    uintptr_t a = (uintptr_t)p + off;
    nopi_core *c = checked_core();
    if (c)
        check(c, (uintptr_t)p, a, size, pc, "access", "");
    return (void *)a;
}

/* table: pairs of (offset from fp, size), ending with an offset of 0; an offset of 1 only
 * says the function uses alloca (those regions come through mc_new_region). */
void nopi_mc_local_new(const size_t *table, char *fp, const void *pc)
{
    nopi_core *c = checked_core();
    if (!c)
        return;
    uintptr_t frame = (uintptr_t)fp;
    pop_frames(c, frame);   /* whatever lived at or below this frame has returned */
    for (; table[0]; table += 2)
        if (table[0] != 1)
            push_local(c, &(nopi_mc_region){ frame + table[0], table[1], NOPI_MC_LOCAL, pc,
                                             (long)table[0], frame });
}

void nopi_mc_local_delete(const size_t *table, char *fp)
{
    (void)table;
    nopi_core *c = checked_core();
    if (c)
        pop_frames(c, (uintptr_t)fp);
}

void nopi_mc_new_region(void *p, size_t size, char *fp)
{
    nopi_core *c = checked_core();
    if (c)
        push_local(c, &(nopi_mc_region){ (uintptr_t)p, size, NOPI_MC_ALLOCA, NULL, 0,
                                         (uintptr_t)fp });
}

void *nopi_mc_memcpy(void *d, const void *s, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        check(c, (uintptr_t)s, (uintptr_t)s, n, pc, "memcpy", "reads ");
        check(c, (uintptr_t)d, (uintptr_t)d, n, pc, "memcpy", "writes ");
    }
    return memcpy(d, s, n);
}

void *nopi_mc_memmove(void *d, const void *s, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        check(c, (uintptr_t)s, (uintptr_t)s, n, pc, "memmove", "reads ");
        check(c, (uintptr_t)d, (uintptr_t)d, n, pc, "memmove", "writes ");
    }
    return memmove(d, s, n);
}

void *nopi_mc_memset(void *d, int v, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c)
        check(c, (uintptr_t)d, (uintptr_t)d, n, pc, "memset", "writes ");
    return memset(d, v, n);
}

int nopi_mc_memcmp(const void *a, const void *b, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        check(c, (uintptr_t)a, (uintptr_t)a, n, pc, "memcmp", "reads ");
        check(c, (uintptr_t)b, (uintptr_t)b, n, pc, "memcmp", "reads ");
    }
    return memcmp(a, b, n);
}

size_t nopi_mc_strlen(const char *s, const void *pc)
{
    nopi_core *c = checked_core();
    return c ? checked_strlen(c, s, SIZE_MAX, pc, "strlen") : strlen(s);
}

char *nopi_mc_strcpy(char *d, const char *s, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        size_t n = checked_strlen(c, s, SIZE_MAX, pc, "strcpy") + 1;
        check(c, (uintptr_t)d, (uintptr_t)d, n, pc, "strcpy", "writes ");
    }
    return strcpy(d, s);
}

char *nopi_mc_strncpy(char *d, const char *s, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        checked_strlen(c, s, n, pc, "strncpy");
        check(c, (uintptr_t)d, (uintptr_t)d, n, pc, "strncpy", "writes ");
    }
    return strncpy(d, s, n);
}

int nopi_mc_strcmp(const char *a, const char *b, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        checked_strlen(c, a, SIZE_MAX, pc, "strcmp");
        checked_strlen(c, b, SIZE_MAX, pc, "strcmp");
    }
    return strcmp(a, b);
}

int nopi_mc_strncmp(const char *a, const char *b, size_t n, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        checked_strlen(c, a, n, pc, "strncmp");
        checked_strlen(c, b, n, pc, "strncmp");
    }
    return strncmp(a, b, n);
}

char *nopi_mc_strcat(char *d, const char *s, const void *pc)
{
    nopi_core *c = checked_core();
    if (c) {
        size_t dl = checked_strlen(c, d, SIZE_MAX, pc, "strcat");
        size_t sl = checked_strlen(c, s, SIZE_MAX, pc, "strcat");
        check(c, (uintptr_t)d, (uintptr_t)d + dl, sl + 1, pc, "strcat", "writes ");
    }
    return strcat(d, s);
}

char *nopi_mc_strchr(const char *s, int ch, const void *pc)
{
    nopi_core *c = checked_core();
    if (c)
        checked_strlen(c, s, SIZE_MAX, pc, "strchr");
    return strchr(s, ch);
}
