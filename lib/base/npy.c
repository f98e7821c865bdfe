/*
 * npy.c - reads and writes NumPy .npy files (the format of numpy.lib.format).
 *
 * A file is: the magic "\x93NUMPY", a version (1, 2 or 3), the header length (2 bytes in
 * version 1, 4 after), a Python dict literal with 'descr', 'fortran_order' and 'shape', padded
 * so the data starts on a 64-byte boundary, then the raw little-endian data.  Everything read
 * from the file is checked before use: a truncated, oversized or malformed file is an input
 * error that says which and where, never a crash.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensor.h"

static int bad(nop_error *err, const char *path, const char *fmt, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is not a valid .npy file: %s",
                     path, msg);
}

/* The header is a Python dict literal that numpy reads with ast.literal_eval and then checks:
 * exactly the keys 'descr', 'fortran_order' and 'shape', shape a tuple of ints, fortran_order
 * a bool.  This reads the part of Python's literal grammar a header can use: strings (no
 * escapes or prefixes), whole numbers (decimal, 0x, 0o, 0b, with _ and a sign), True, False,
 * None, tuples, lists and dicts, with Python's whitespace, comments and line continuations.
 * Anything else is refused, never guessed at. */
typedef enum { HV_STR, HV_INT, HV_BOOL, HV_NONE, HV_TUPLE, HV_LIST, HV_DICT } hv_kind;

typedef struct {
    hv_kind kind;
    const char *text;             /* the value as written, for messages */
    size_t textlen;
    const char *str;              /* HV_STR: the characters between the quotes */
    size_t strlen;
    long long i;                  /* HV_INT */
    bool big;                     /* HV_INT, or a HV_TUPLE's item: past a long long */
    bool b;                       /* HV_BOOL */
    int n;                        /* HV_TUPLE: items, every one counted */
    bool all_int;                 /* HV_TUPLE: every item an int */
    int64_t sizes[NOPI_MAX_DIMS]; /* HV_TUPLE: the first items, when ints */
} hv;

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
static int hp_int(hparse *h, hv *v)
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
    v->kind = HV_INT;
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

static int hp_value(hparse *h, hv *v, int depth);

/* The items of a tuple, list or dict up to `close`; a tuple's are counted into v. */
static int hp_items(hparse *h, hv *v, char close, bool dict, int depth)
{
    for (;;) {
        hp_skip(h);
        if (h->p < h->end && *h->p == close) {
            h->p++;
            return 0;
        }
        hv item;
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
        if (v->kind == HV_TUPLE) {
            if (item.kind != HV_INT)
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

static int hp_value(hparse *h, hv *v, int depth)
{
    memset(v, 0, offsetof(hv, sizes));
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
        v->kind = HV_STR;
        v->str = h->p + 1;
        v->strlen = (size_t)(q - h->p - 1);
        h->p = q + 1;
    } else if (c == '(' || c == '[' || c == '{') {
        h->p++;
        hp_skip(h);
        if (c == '(' && h->p < h->end && *h->p != ')') {
            /* (x) is x, in Python; (x,) and (x, y) are tuples */
            hv first;
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
            v->kind = HV_TUPLE;
            v->all_int = first.kind == HV_INT;
            v->big = first.big;
            v->sizes[0] = first.i;
            v->n = 1;
        } else {
            v->kind = c == '(' ? HV_TUPLE : c == '[' ? HV_LIST : HV_DICT;
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
            v->kind = HV_BOOL, v->b = true;
        else if (n == 5 && memcmp(h->p, "False", 5) == 0)
            v->kind = HV_BOOL, v->b = false;
        else if (n == 4 && memcmp(h->p, "None", 4) == 0)
            v->kind = HV_NONE;
        else
            return hp_fail(h, "a value");
        h->p = p;
    }
    v->textlen = (size_t)(h->p - v->text);
    return rc;
}

/* The value as written, for messages: at most 48 characters, others than printable ASCII
 * shown as '?'. */
static const char *shown(const hv *v, char *buf, size_t size)
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
static bool negative(const hv *shape)
{
    for (int i = 0; i < shape->n && i < NOPI_MAX_DIMS; i++)
        if (shape->sizes[i] < 0)
            return true;
    return false;
}

/* A string's characters, shown as shown() shows a value. */
static const char *shown_str(const hv *v, char *buf, size_t size)
{
    hv s = { .text = v->str, .textlen = v->strlen };
    return shown(&s, buf, size);
}

#define DEVICE_DTYPES "float32, bfloat16, float16, int32, int8, int64, int16, uint8 " \
                      "(little-endian)"

static const char *const header_keys[] = { "descr", "fortran_order", "shape" };

/* Reads the header dict into its three values, refusing what numpy refuses (a header that is
 * not a dict literal, a key other than the three, one of them missing) and a key given twice,
 * which numpy would take the last of, silently. */
static int read_header(const char *path, const char *text, size_t len, bool py2_longs,
                       hv vals[3], nop_error *err)
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
        hv key;
        if (hp_value(&h, &key, 1) != 0)
            goto syntax;
        int k = -1;
        for (int i = 0; i < 3 && key.kind == HV_STR; i++)
            if (key.strlen == strlen(header_keys[i]) &&
                memcmp(key.str, header_keys[i], key.strlen) == 0)
                k = i;
        if (k < 0) {
            snprintf(msg, sizeof msg, "its header has the key %s; a .npy header has only "
                     "'descr', 'fortran_order' and 'shape'", shown(&key, buf, sizeof buf));
            return bad(err, path, "%s", msg);
        }
        if (seen[k]) {
            bad(err, path, "its header gives '%s' twice", header_keys[k]);
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
            return bad(err, path, "its header lacks '%s'", header_keys[i]);
    return 0;
syntax:
    return bad(err, path, "its header is not a Python dict literal as numpy writes one: %s",
               h.why);
}

/* Maps a descr to a dtype; bf16 comes as '<V2' (np.save of an ml_dtypes array) or
 * 'bfloat16' (written with ml_dtypes' name). */
static int parse_descr(const hv *v)
{
    static const struct { const char *descr; nt_dtype d; } known[] = {
        { "<f4", NT_F32 }, { "<f2", NT_F16 }, { "<i4", NT_I32 }, { "|i1", NT_I8 },
        { "<i8", NT_I64 }, { "<i2", NT_I16 }, { "|u1", NT_U8 }, { "<V2", NT_BF16 },
        { "|V2", NT_BF16 }, { "bfloat16", NT_BF16 }, { "<i1", NT_I8 }, { "<u1", NT_U8 },
        { "i1", NT_I8 }, { "u1", NT_U8 },
    };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(known); i++)
        if (v->strlen == strlen(known[i].descr) && memcmp(v->str, known[i].descr, v->strlen) == 0)
            return (int)known[i].d;
    return -1;
}

/* The bytes of data a shape of dtype needs; SIZE_MAX when that does not fit a size_t. */
static size_t data_bytes(int dtype, int ndim, const int64_t *sizes)
{
    size_t n = nopi_dtype_size((nt_dtype)dtype);
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] && n > SIZE_MAX / (size_t)sizes[i])
            return SIZE_MAX;
        n *= (size_t)sizes[i];
    }
    return n;
}

/* Fortran order stores the first index fastest: permute into C order. */
static void fortran_to_c(nt_tensor *t, const unsigned char *src)
{
    int64_t idx[NOPI_MAX_DIMS] = { 0 };
    for (int64_t c = 0; c < t->numel; c++) {
        int64_t f = 0, stride = 1;
        for (int d = 0; d < t->ndim; d++) {
            f += idx[d] * stride;
            stride *= t->sizes[d];
        }
        memcpy(t->data + (size_t)c * t->itemsize, src + (size_t)f * t->itemsize, t->itemsize);
        for (int d = t->ndim - 1; d >= 0; d--) {   /* next C-order index */
            if (++idx[d] < t->sizes[d])
                break;
            idx[d] = 0;
        }
    }
}

int nop_tensor_load_npy(nop_tensor **out, const char *path, nop_error *err)
{
    *out = NULL;
    char *data;
    size_t len;
    if (nopi_read_input(path, ".npy file", (size_t)1 << 40, &data, &len, err) != 0)
        return -1;
    int rc = -1;
    const unsigned char *u = (const unsigned char *)data;
    if (len < 10 || memcmp(data, "\x93NUMPY", 6) != 0) {
        bad(err, path, "%s", "it does not start with the .npy magic \\x93NUMPY");
        goto out;
    }
    unsigned major = u[6], minor = u[7];
    size_t hlen, hstart;
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        char v[16];
        snprintf(v, sizeof v, "%u.%u", major, minor);
        bad(err, path, "unsupported format version %s (numpy writes 1.0, 2.0 and 3.0)", v);
        goto out;
    }
    if (major == 1) {
        hlen = (size_t)u[8] | (size_t)u[9] << 8;
        hstart = 10;
    } else {
        if (len < 12) {
            bad(err, path, "%s", "truncated header");
            goto out;
        }
        hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
        hstart = 12;
    }
    if (hlen > len - hstart) {
        bad(err, path, "%s", "truncated header");
        goto out;
    }
    hv vals[3];
    if (read_header(path, data + hstart, hlen, major <= 2, vals, err) != 0)
        goto out;
    const hv *dv = &vals[0], *fv = &vals[1], *sv = &vals[2];
    int dtype = dv->kind == HV_STR ? parse_descr(dv) : -1;
    int ndim = sv->n;
    const int64_t *sizes = sv->sizes;
    char why[256], buf[64];
    if (dv->kind == HV_LIST) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has a structured dtype (fields %s), "
                  "which the device does not have", path, shown(dv, buf, sizeof buf));
        nopi_detail(err, "device dtypes: " DEVICE_DTYPES "; save each field as an array of "
                    "its own");
    } else if (dv->kind != HV_STR) {
        bad(err, path, "its 'descr' is %s, not a dtype string like '<f4'",
            shown(dv, buf, sizeof buf));
    } else if (dtype < 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has dtype '%s', which the device "
                  "does not have", path, shown_str(dv, buf, sizeof buf));
        nopi_detail(err, "device dtypes: " DEVICE_DTYPES);
    } else if (fv->kind != HV_BOOL) {
        bad(err, path, "its 'fortran_order' is %s, not True or False",
            shown(fv, buf, sizeof buf));
    } else if (sv->kind != HV_TUPLE || !sv->all_int) {
        char msg[192];
        snprintf(msg, sizeof msg, "its 'shape' is %s, not a tuple of sizes like (4,) or "
                 "(2, 3)%s", shown(sv, buf, sizeof buf), sv->kind == HV_INT &&
                 sv->text[0] == '(' ? " (in Python, (4) is the number 4; (4,) is a tuple)"
                                    : "");
        bad(err, path, "%s", msg);
    } else if (sv->big || negative(sv)) {
        bad(err, path, "its 'shape' %s has a size below 0 or past 64 bits",
            shown(sv, buf, sizeof buf));
    } else if (!nopi_shape_ok(ndim, sizes, why, sizeof why)) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has a shape the device cannot hold: "
                  "%s", path, why);
    } else if (data_bytes(dtype, ndim, sizes) != len - hstart - hlen) {
        /* checked against the file before anything is allocated: a 130-byte file may claim
         * billions of elements, and must not cost more than its own size to reject */
        size_t need = data_bytes(dtype, ndim, sizes), have = len - hstart - hlen;
        char msg[160];
        if (need == SIZE_MAX)
            snprintf(msg, sizeof msg, "its shape needs more bytes than memory can hold, "
                     "the file has %zu", have);
        else
            snprintf(msg, sizeof msg, "its shape needs %zu bytes of data, the file has %zu%s",
                     need, have, have < need ? " (truncated)" : " (extra bytes at the end)");
        bad(err, path, "%s", msg);
    } else {
        nt_tensor *t = nopi_tensor_alloc((nt_dtype)dtype, ndim, sizes, false);
        if (!t) {
            nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is too large to load", path);
        } else {
            const unsigned char *src = u + hstart + hlen;
            size_t need = (size_t)t->numel * t->itemsize;
            if (fv->b)
                fortran_to_c(t, src);
            else if (need)
                memcpy(t->data, src, need);
            *out = t;
            rc = 0;
        }
    }
out:
    free(data);
    return rc;
}

int nop_tensor_save_npy(const nop_tensor *t, const char *path, nop_error *err)
{
    static const char *const descr[] = {
        [NT_F32] = "<f4", [NT_BF16] = "<V2", [NT_F16] = "<f2", [NT_I32] = "<i4",
        [NT_I8] = "|i1", [NT_I64] = "<i8", [NT_I16] = "<i2", [NT_U8] = "|u1",
    };
    nopi_strbuf hdr = NOPI_STRBUF_INIT;
    nopi_sb_printf(&hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr[t->dtype]);
    for (int i = 0; i < t->ndim; i++)
        nopi_sb_printf(&hdr, "%lld,%s", (long long)t->sizes[i], i + 1 < t->ndim ? " " : "");
    nopi_sb_puts(&hdr, "), }");
    while ((10 + hdr.len + 1) % 64)   /* pad so the data starts on a 64-byte boundary */
        nopi_sb_puts(&hdr, " ");
    nopi_sb_puts(&hdr, "\n");
    if (hdr.oom || hdr.len > 65535) {
        nopi_sb_free(&hdr);
        return nopi_nomem(err);
    }
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(hdr.len & 0xff), (unsigned char)(hdr.len >> 8) };
    const void *bufs[] = { pre, hdr.s, t->data };
    size_t lens[] = { sizeof pre, hdr.len, (size_t)t->numel * t->itemsize };
    int rc = nopi_write_output(path, bufs, lens, 3, err);
    nopi_sb_free(&hdr);
    return rc;
}
