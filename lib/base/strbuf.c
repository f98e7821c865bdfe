/*
 * strbuf.c - a growable NUL-terminated string, used to generate C sources, JSON and reports.
 *
 * Out of memory is sticky (sb->oom) rather than returned by every append, so generators can
 * append freely and check once at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool reserve(nopi_strbuf *sb, size_t extra)
{
    if (sb->oom)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *s = realloc(sb->s, cap);
    if (!s) {
        sb->oom = true;
        return false;
    }
    sb->s = s;
    sb->cap = cap;
    return true;
}

void nopi_sb_add(nopi_strbuf *sb, const char *s, size_t n)
{
    if (!reserve(sb, n))
        return;
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void nopi_sb_puts(nopi_strbuf *sb, const char *s)
{
    nopi_sb_add(sb, s, strlen(s));
}

void nopi_sb_printf(nopi_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

/* Escapes shared by C and JSON string literals; C additionally splits "??" trigraphs. */
static void quoted(nopi_strbuf *sb, const char *s, bool c_syntax)
{
    nopi_sb_puts(sb, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': nopi_sb_puts(sb, "\\\""); break;
        case '\\': nopi_sb_puts(sb, "\\\\"); break;
        case '\n': nopi_sb_puts(sb, "\\n"); break;
        case '\t': nopi_sb_puts(sb, "\\t"); break;
        case '\r': nopi_sb_puts(sb, "\\r"); break;
        case '?':
            nopi_sb_puts(sb, c_syntax && p[1] == '?' ? "?\"\"" : "?");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                nopi_sb_printf(sb, c_syntax ? "\\%03o" : "\\u%04x", *p);
            else
                nopi_sb_add(sb, (const char *)p, 1);
        }
    }
    nopi_sb_puts(sb, "\"");
}

void nopi_sb_c_string(nopi_strbuf *sb, const char *s)
{
    quoted(sb, s, true);
}

void nopi_sb_json_string(nopi_strbuf *sb, const char *s)
{
    quoted(sb, s, false);
}

char *nopi_sb_take(nopi_strbuf *sb)
{
    char *s = sb->oom ? NULL : sb->s;
    if (sb->oom)
        free(sb->s);
    if (s == NULL && !sb->oom)
        s = calloc(1, 1);
    sb->s = NULL;
    sb->len = sb->cap = 0;
    sb->oom = false;
    return s;
}

void nopi_sb_free(nopi_strbuf *sb)
{
    free(sb->s);
    sb->s = NULL;
    sb->len = sb->cap = 0;
    sb->oom = false;
}
