/*
 * npyheader.c - a .npy file's header (see npy.h): the part of Python's literal grammar a
 * header can use, read as numpy reads it with ast.literal_eval, and numpy's checks of it.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int nopi_npy_invalid(nop_error *err, const char *path, const char *fmt, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a valid .npy file: %s",
                     path, msg);
}

typedef struct {
    const char *s, *p, *end;
    bool py2_longs;   /* versions 1 and 2: numpy drops Python 2's L after a number */
    char why[96];     /* what is wrong, when parsing failed */
} hparse;

#define HP_MAX_DEPTH 100

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Skips what Python skips between tokens: spaces, tabs, form feeds, comments and, within
 * brackets (always, for a header: the dict is one), line ends and backslash continuations. */
static void hp_skip(hparse *h)
{
    while (h->p < h->end) {
        char c = *h->p;
        if (c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r') {
            h->p++;
        } else if (c == '\\' && h->p + 1 < h->end && (h->p[1] == '\n' || h->p[1] == '\r')) {
            h->p += 2;
        } else if (c == '#') {
            while (h->p < h->end && *h->p != '\n' && *h->p != '\r')
                h->p++;
        } else {
            break;
        }
    }
}

static int hp_fail(hparse *h, const char *what)
{
    if (h->p >= h->end)
        snprintf(h->why, sizeof h->why, "it ends where %s should be", what);
    else if (isprint((unsigned char)*h->p))
        snprintf(h->why, sizeof h->why, "'%c' at byte %zu, where %s should be", *h->p,
                 (size_t)(h->p - h->s), what);
    else
        snprintf(h->why, sizeof h->why, "byte 0x%02x at byte %zu, where %s should be",
                 (unsigned char)*h->p, (size_t)(h->p - h->s), what);
    return -1;
}

static int digit_value(char c)
{
    return isdigit((unsigned char)c) ? c - '0'
         : isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10 : 99;
}

/* A whole number as Python writes one: 0, 123, 1_000, 0x1f, 0o17, 0b101 (no leading 0s). */
static int hp_int(hparse *h, nopi_hv *v)
{
    int base = 10;
    const char *p = h->p;
    if (*p == '0' && p + 1 < h->end && strchr("xXoObB", p[1]) && p[1]) {
        base = p[1] == 'x' || p[1] == 'X' ? 16 : p[1] == 'o' || p[1] == 'O' ? 8 : 2;
        p += 2;
        if (p < h->end && *p == '_')   /* 0x_1f is Python too */
            p++;
    }
    unsigned long long n = 0;
    int digits = 0;
    bool leading_zero = base == 10 && *p == '0';
    for (; p < h->end; p++) {
        if (*p == '_' && digits && p + 1 < h->end && digit_value(p[1]) < base)
            continue;     /* 1_000: one _ between two digits */
        int d = digit_value(*p);
        if (d >= base)
            break;
        if (leading_zero && d != 0)
            return hp_fail(h, "a number without leading zeros");
        if (n > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
            v->big = true;
        n = n * (unsigned)base + (unsigned)d;
        digits++;
    }
    bool py2_long = h->py2_longs && p < h->end && *p == 'L' &&
                    (p + 1 >= h->end || !ident_char(p[1]));
    if (!digits || (p < h->end && (*p == '.' || (ident_char(*p) && !py2_long)))) {
        h->p = p;
        return hp_fail(h, "a whole number");
    }
    h->p = p;
    v->kind = NOPI_HV_INT;
    v->big = v->big || n > LLONG_MAX;
    v->i = v->big ? 0 : (long long)n;
    for (;;) {     /* "4L" and "4 L L" were Python 2 longs: numpy drops each L */
        const char *save = h->p;
        hp_skip(h);
        if (h->py2_longs && h->p < h->end && *h->p == 'L' &&
            (h->p + 1 >= h->end || !ident_char(h->p[1]))) {
            h->p++;
            continue;
        }
        h->p = save;
        return 0;
    }
}

static int hp_value(hparse *h, nopi_hv *v, int depth);

/* The items of a tuple, list or dict up to `close`; a tuple's are counted into v. */
static int hp_items(hparse *h, nopi_hv *v, char close, bool dict, int depth)
{
    for (;;) {
        hp_skip(h);
        if (h->p < h->end && *h->p == close) {
            h->p++;
            return 0;
        }
        nopi_hv item;
        if (hp_value(h, &item, depth + 1) != 0)
            return -1;
        if (dict) {
            hp_skip(h);
            if (h->p >= h->end || *h->p != ':')
                return hp_fail(h, "':'");
            h->p++;
            if (hp_value(h, &item, depth + 1) != 0)
                return -1;
        }
        if (v->kind == NOPI_HV_TUPLE) {
            if (item.kind != NOPI_HV_INT)
                v->all_int = false;
            else if (item.big)
                v->big = true;
            else if (v->n < NOPI_MAX_DIMS)
                v->sizes[v->n] = item.i;
            if (v->n < INT_MAX)
                v->n++;
        }
        hp_skip(h);
        if (h->p < h->end && *h->p == ',')
            h->p++;
        else if (h->p >= h->end || *h->p != close)
            return hp_fail(h, close == ')' ? "',' or ')'" : close == ']' ? "',' or ']'"
                                                                          : "',' or '}'");
    }
}

static int hp_value(hparse *h, nopi_hv *v, int depth)
{
    memset(v, 0, offsetof(nopi_hv, sizes));
    hp_skip(h);
    if (depth > HP_MAX_DEPTH) {
        snprintf(h->why, sizeof h->why, "it nests deeper than %d brackets", HP_MAX_DEPTH);
        return -1;
    }
    if (h->p >= h->end)
        return hp_fail(h, "a value");
    v->text = h->p;
    char c = *h->p;
    int rc = 0;
    if (c == '\'' || c == '"') {
        const char *q = memchr(h->p + 1, c, (size_t)(h->end - h->p - 1));
        const char *nl = h->p + 1;
        while (nl < (q ? q : h->end) && *nl != '\n' && *nl != '\r' && *nl != '\\')
            nl++;
        if (!q || nl < q) {
            h->p = nl;
            return hp_fail(h, nl < h->end && *nl == '\\' ? "a string without escapes"
                                                        : "the string's closing quote");
        }
        v->kind = NOPI_HV_STR;
        v->str = h->p + 1;
        v->strlen = (size_t)(q - h->p - 1);
        h->p = q + 1;
    } else if (c == '(' || c == '[' || c == '{') {
        h->p++;
        hp_skip(h);
        if (c == '(' && h->p < h->end && *h->p != ')') {
            /* (x) is x, in Python; (x,) and (x, y) are tuples */
            nopi_hv first;
            const char *start = v->text;
            if (hp_value(h, &first, depth + 1) != 0)
                return -1;
            hp_skip(h);
            if (h->p < h->end && *h->p == ')') {
                h->p++;
                *v = first;
                v->text = start;
                v->textlen = (size_t)(h->p - start);
                return 0;
            }
            if (h->p >= h->end || *h->p != ',')
                return hp_fail(h, "',' or ')'");
            h->p++;
            v->kind = NOPI_HV_TUPLE;
            v->all_int = first.kind == NOPI_HV_INT;
            v->big = first.big;
            v->sizes[0] = first.i;
            v->n = 1;
        } else {
            v->kind = c == '(' ? NOPI_HV_TUPLE : c == '[' ? NOPI_HV_LIST : NOPI_HV_DICT;
            v->all_int = true;
        }
        rc = hp_items(h, v, c == '(' ? ')' : c == '[' ? ']' : '}', c == '{', depth);
    } else if (c == '+' || c == '-') {
        h->p++;
        hp_skip(h);
        if (h->p >= h->end || !isdigit((unsigned char)*h->p))
            return hp_fail(h, "a number");
        rc = hp_int(h, v);
        if (c == '-')
            v->i = -v->i;
    } else if (isdigit((unsigned char)c)) {
        rc = hp_int(h, v);
    } else {
        const char *p = h->p;
        while (p < h->end && ident_char(*p))
            p++;
        size_t n = (size_t)(p - h->p);
        if (n == 4 && memcmp(h->p, "True", 4) == 0)
            v->kind = NOPI_HV_BOOL, v->b = true;
        else if (n == 5 && memcmp(h->p, "False", 5) == 0)
            v->kind = NOPI_HV_BOOL, v->b = false;
        else if (n == 4 && memcmp(h->p, "None", 4) == 0)
            v->kind = NOPI_HV_NONE;
        else
            return hp_fail(h, "a value");
        h->p = p;
    }
    v->textlen = (size_t)(h->p - v->text);
    return rc;
}

/* The value as written, for messages: at most 48 characters, others than printable ASCII
 * shown as '?'. */
const char *nopi_hv_shown(const nopi_hv *v, char *buf, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < v->textlen && n + 4 < size && n < 48; i++)
        buf[n++] = isprint((unsigned char)v->text[i]) ? v->text[i] : '?';
    if (n < v->textlen && n + 4 <= size)
        memcpy(buf + n, "...", 3), n += 3;
    buf[n] = '\0';
    return buf;
}

/* Whether a shape has a size below 0, which numpy refuses too (the device's limits are
 * checked after: a file numpy reads and the device cannot hold is not an invalid file). */
bool nopi_hv_negative(const nopi_hv *shape)
{
    for (int i = 0; i < shape->n && i < NOPI_MAX_DIMS; i++)
        if (shape->sizes[i] < 0)
            return true;
    return false;
}

/* A string's characters, shown as nopi_hv_shown() shows a value. */
const char *nopi_hv_shown_str(const nopi_hv *v, char *buf, size_t size)
{
    nopi_hv s = { .text = v->str, .textlen = v->strlen };
    return nopi_hv_shown(&s, buf, size);
}

static const char *const header_keys[] = { "descr", "fortran_order", "shape" };

/* Reads the header dict into its three values, refusing what numpy refuses (a header that is
 * not a dict literal, a key other than the three, one of them missing) and a key given twice,
 * which numpy would take the last of, silently. */
int nopi_npy_header(const char *path, const char *text, size_t len, bool py2_longs,
                       nopi_hv vals[3], nop_error *err)
{
    hparse h = { .s = text, .p = text, .end = text + len, .py2_longs = py2_longs };
    bool seen[3] = { false, false, false };
    char msg[256], buf[64];
    hp_skip(&h);
    if (h.p >= h.end || *h.p != '{') {
        hp_fail(&h, "'{'");
        goto syntax;
    }
    h.p++;
    for (;;) {
        hp_skip(&h);
        if (h.p < h.end && *h.p == '}') {
            h.p++;
            break;
        }
        nopi_hv key;
        if (hp_value(&h, &key, 1) != 0)
            goto syntax;
        int k = -1;
        for (int i = 0; i < 3 && key.kind == NOPI_HV_STR; i++)
            if (key.strlen == strlen(header_keys[i]) &&
                memcmp(key.str, header_keys[i], key.strlen) == 0)
                k = i;
        if (k < 0) {
            snprintf(msg, sizeof msg, "its header has the key %s; a .npy header has only "
                     "'descr', 'fortran_order' and 'shape'", nopi_hv_shown(&key, buf, sizeof buf));
            return nopi_npy_invalid(err, path, "%s", msg);
        }
        if (seen[k]) {
            nopi_npy_invalid(err, path, "its header gives '%s' twice", header_keys[k]);
            nopi_detail(err, "numpy would take the last silently; neuronop refuses: give "
                        "each key once");
            return -1;
        }
        seen[k] = true;
        hp_skip(&h);
        if (h.p >= h.end || *h.p != ':') {
            hp_fail(&h, "':'");
            goto syntax;
        }
        h.p++;
        if (hp_value(&h, &vals[k], 1) != 0)
            goto syntax;
        hp_skip(&h);
        if (h.p < h.end && *h.p == ',') {
            h.p++;
        } else if (h.p >= h.end || *h.p != '}') {
            hp_fail(&h, "',' or '}'");
            goto syntax;
        }
    }
    hp_skip(&h);
    if (h.p < h.end) {
        hp_fail(&h, "the end of the header");
        goto syntax;
    }
    for (int i = 0; i < 3; i++)
        if (!seen[i])
            return nopi_npy_invalid(err, path, "its header lacks '%s'", header_keys[i]);
    return 0;
syntax:
    return nopi_npy_invalid(err, path, "its header is not a Python dict literal as numpy writes one: %s",
               h.why);
}

