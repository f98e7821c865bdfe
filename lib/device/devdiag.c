/*
 * devdiag.c - what the device tells the caller while an op runs: warnings naming the op and
 * the core (sent through the device's diag sink, formatted on the host stack), and the printf
 * ring the kernels write into, read out after the op as the device does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "library.h"
#include "lines.h"

void nopi_run_op_name(const nopi_run *run, char *buf, size_t size)
{
    /* a C++ library's op in its namespace, as run and bench name it: my_ops::relu */
    if (run->lib)
        nopi_op_qualname(run->lib, run->op->name, buf, size);
    else
        snprintf(buf, size, "%s", run->op->name);
}

void nopi_core_where(const nopi_core *c, char *buf, size_t size)
{
    char op[300];
    nopi_run_op_name(c->run, op, sizeof op);
    if (c->shape_mode)
        snprintf(buf, size, "%s: shape function '%s'", op, c->run->op->shape);
    else if (c->run->ref_name)   /* a reference's mistake is not the kernel's */
        snprintf(buf, size, "%s: reference function '%s'", op, c->run->ref_name);
    else
        snprintf(buf, size, "%s: core %u", op, c->id);
}

enum nopi_role nopi_core_role(const nopi_core *c)
{
    return c->shape_mode ? NOPI_ROLE_SHAPE
           : c->run->ref_name ? NOPI_ROLE_REFERENCE : NOPI_ROLE_KERNEL;
}

const char *nopi_role_name(int role)
{
    return role == NOPI_ROLE_KERNEL ? "kernel"
           : role == NOPI_ROLE_SHAPE ? "shape function"
           : role == NOPI_ROLE_REFERENCE ? "reference function" : "user code";
}

void nopi_core_call_site(const nopi_core *c, nop_diag *d)
{
    const nop_library *lib = c->run->lib;
    nopi_where w;
    if (!c->call_pc || !lib || nopi_core_is_cxx(c) ||
        !nopi_lines_find(lib->lines, (uintptr_t)c->call_pc - 1, &w) || !w.file || w.line <= 0)
        return;
    char head[700], text[512] = "", *path = nopi_path_join(w.dir ? w.dir : ".", w.file);
    int n = snprintf(head, sizeof head, "called at %s:%d", w.file, w.line);
    if (w.func && n > 0 && (size_t)n < sizeof head)
        snprintf(head + n, sizeof head - (size_t)n, " in '%s'", w.func);
    bool excerpt = path && nopi_read_line(path, w.line, text, sizeof text) == 0;
    free(path);
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_printf(&sb, "%s", head);
    if (excerpt)
        nopi_sb_printf(&sb, "\n%5d | %s", w.line, text);
    if (d->detail[0])
        nopi_sb_printf(&sb, "\n%s", d->detail);
    if (sb.s)   /* a detail too long is cut, as any is */
        nopi_strlcpy(d->detail, sb.s, sizeof d->detail);
    nopi_sb_free(&sb);
}

typedef struct warning {
    const char *fmt;
    va_list *ap;
} warning;

/* Runs on the host stack: formatting and the caller's sink may need far more stack than a
 * kernel has. */
static void emit_warning(nopi_core *c, void *arg)
{
    warning *w = arg;
    nopi_run *run = c->run;
    nop_diag d;
    memset(&d, 0, sizeof d);
    d.severity = NOP_SEV_WARNING;
    nopi_core_where(c, d.where, sizeof d.where);
    va_list ap;
    va_copy(ap, *w->ap);
    vsnprintf(d.msg, sizeof d.msg, w->fmt, ap);
    va_end(ap);
    nopi_core_diag_words(c, &d);
    nopi_diag_clean(&d);
    pthread_mutex_lock(&run->diag_lock);
    run->diag(run->diag_ctx, &d);
    pthread_mutex_unlock(&run->diag_lock);
}

void nopi_core_warn(nopi_core *c, const char *fmt, ...)
{
    if (!c->run->diag)
        return;
    va_list ap;
    va_start(ap, fmt);
    warning w = { fmt, &ap };
    if (nopi_current() == c)   /* called from the kernel, on its stack */
        nopi_on_host_stack(c, emit_warning, &w);
    else
        emit_warning(c, &w);
    va_end(ap);
}

void nopi_ring_write(nopi_run *run, const char *s, size_t n)
{
    if (!run->ring_size)
        return;   /* printf disabled: it still cost time (counted by the caller) */
    pthread_mutex_lock(&run->ring_lock);
    for (size_t i = 0; i < n; i++)
        run->ring[(run->ring_head + i) & (run->ring_size - 1)] = s[i];
    run->ring_head = (run->ring_head + n) & (run->ring_size - 1);
    run->ring_total += n;
    if (run->printf_sink)
        run->printf_sink(run->printf_ctx, s, n);
    pthread_mutex_unlock(&run->ring_lock);
}

/* The ring's contents, oldest first. */
char *nopi_ring_text(const nopi_run *run, bool *lost)
{
    size_t n = run->ring_total < run->ring_size ? (size_t)run->ring_total : run->ring_size;
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    size_t start = run->ring_total < run->ring_size ? 0 : run->ring_head;
    for (size_t i = 0; i < n; i++)
        s[i] = run->ring[(start + i) & (run->ring_size - 1)];
    s[n] = '\0';
    *lost = run->ring_total > run->ring_size;
    return s;
}
