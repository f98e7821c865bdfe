/*
 * error.c - filling nop_error records and sending diagnostics to a caller's sink.
 *
 * Every failing path in lib/ ends in nopi_fail(), so there is one place that decides how an
 * error record is laid out.  Nothing here prints.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void nopi_strlcpy(char *dst, const char *src, size_t size)
{
    if (size == 0)
        return;
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Whether cp moves text where a reader does not expect it: a bidirectional control (the
 * marks, embeddings, overrides and isolates; in a log viewer that honours them, a file name
 * with U+202E shows a line's end reversed, and so could make a failing case's line read as
 * another), or the line and paragraph separators U+2028 and U+2029, which some viewers
 * (and JavaScript's) break lines at, so that a forged "ok" could begin a line of its own. */
static bool bidi_control(unsigned cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* The length of the UTF-8 character at s that is plain text (1 to 4), or 0: a byte that
 * starts no character, a truncated or overlong one, a surrogate, past U+10FFFF, a control
 * character but newline and tab, a bidirectional control, or U+FFFE or U+FFFF. */
static size_t text_char(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return (c >= 0x20 && c != 0x7f) || c == '\n' || c == '\t' ? 1 : 0;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    unsigned cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (n == 0 || (n == 2 && cp < 0xa0) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp == 0xfffe || cp == 0xffff ||
        bidi_control(cp))
        return 0;
    return n;
}

/* Whether the character at s (n bytes, plain text) is one .NET's TrimStart() removes, as
 * GitHub's runner does before it looks for a "::command::" (char.IsWhiteSpace). */
static bool blank(const unsigned char *s, size_t n)
{
    if (n == 1)
        return s[0] == ' ' || s[0] == '\t' || s[0] == '\v' || s[0] == '\f' || s[0] == '\r';
    unsigned cp = n == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
                : n == 3 ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu) : 0;
    return cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

void nopi_text_clean(char *s)
{
    bool line_start = true;   /* nothing but blanks yet on this line */
    while (*s) {
        size_t n = text_char((const unsigned char *)s);
        if (n == 0) {
            *s++ = '?';
            line_start = false;
            continue;
        }
        /* a CI runner's commands in a log, which hide or rewrite its lines: GitHub Actions'
         * "##[command]" anywhere and "::command::" first on a line, Azure's "##vso[" */
        if (s[0] == '#' && s[1] == '#' && (s[2] == '[' || strncmp(s + 2, "vso[", 4) == 0))
            s[1] = '?';
        else if (line_start && s[0] == ':' && s[1] == ':')
            s[1] = '?';
        line_start = s[0] == '\n' || (line_start && blank((const unsigned char *)s, n));
        s += n;
    }
}

void nopi_line_clean(char *s)
{
    nopi_text_clean(s);
    for (; *s; s++)
        if (*s == '\n' || *s == '\t')
            *s = '?';
}

void nopi_diag_clean(nop_diag *d)
{
    nopi_line_clean(d->file);
    nopi_line_clean(d->where);
    nopi_line_clean(d->msg);
    nopi_text_clean(d->detail);
}

static void fill_diag(nop_diag *d, enum nop_severity sev, const char *file, int line, int col,
                      const char *fmt, va_list ap)
{
    memset(d, 0, sizeof *d);
    d->severity = sev;
    nopi_strlcpy(d->file, file ? file : "", sizeof d->file);
    d->line = line;
    d->col = col;
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    nopi_diag_clean(d);
}

int nopi_vfail(nop_error *err, enum nop_errkind kind, const char *file, int line, int col,
               const char *fmt, va_list ap)
{
    if (err) {
        err->kind = kind;
        err->fault = NOP_FAULT_NONE;   /* nopi_fault sets it; nop_error_fault reads it */
        fill_diag(&err->diag, NOP_SEV_ERROR, file, line, col, fmt, ap);
    }
    return -1;
}

int nopi_fault(nop_error *err, enum nop_fault fault, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nopi_vfail(err, NOP_ERR_DEVICE, NULL, 0, 0, fmt, ap);
    va_end(ap);
    if (err)
        err->fault = fault;
    return -1;
}

int nopi_fail(nop_error *err, enum nop_errkind kind, const char *file, int line, int col,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nopi_vfail(err, kind, file, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

int nopi_nomem(nop_error *err)
{
    return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

void nopi_detail(nop_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char *d = err->diag.detail;
    size_t used = strlen(d), cap = sizeof err->diag.detail;
    if (used && used + 1 < cap)
        d[used++] = '\n', d[used] = '\0';
    if (used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d + used, cap - used, fmt, ap);
    va_end(ap);
    nopi_text_clean(d + used);
}

void nopi_emit(nop_diag_fn *fn, void *ctx, enum nop_severity sev, const char *file, int line,
               int col, const char *fmt, ...)
{
    if (!fn)
        return;
    nop_diag d;
    va_list ap;
    va_start(ap, fmt);
    fill_diag(&d, sev, file, line, col, fmt, ap);
    va_end(ap);
    fn(ctx, &d);
}
