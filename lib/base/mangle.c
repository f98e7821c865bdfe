/*
 * mangle.c - a reader for the subset of Itanium C++ mangling an op's functions use (mangle.h).
 *
 * Grammar read (Itanium C++ ABI, section 5.1): _Z <name> <bare-function-type>, where <name> is
 * a <source-name> or N <source-name>+ E, and each type is a builtin letter, K/V/P/R/O applied
 * to a type, a class (<source-name>, N...E, St <source-name>) or a substitution S_, S<n>_,
 * which names an earlier class, namespace prefix or qualified type.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mangle.h"

#define MAX_SUBS 64

typedef struct type {
    char text[256];
    int kind;             /* enum nop_argtype of the unqualified type, or -1 */
    bool is_const;        /* top-level const */
    bool is_ref, ref_to_const;
} type;

typedef struct reader {
    const char *p;
    type subs[MAX_SUBS];
    int nsubs;
    bool bad;
} reader;

static void add_sub(reader *r, const type *t)
{
    if (r->nsubs < MAX_SUBS)
        r->subs[r->nsubs++] = *t;
    else
        r->bad = true;
}

static bool source_name(reader *r, char *out, size_t size)
{
    if (!isdigit((unsigned char)*r->p))
        return false;
    char *end;
    long n = strtol(r->p, &end, 10);
    if (n <= 0 || (size_t)n >= size || strnlen(end, (size_t)n) < (size_t)n)
        return false;
    memcpy(out, end, (size_t)n);
    out[n] = '\0';
    r->p = end + n;
    return true;
}

/* S_ is 0, S0_ is 1, S1_ is 2, ... (base 36). */
static bool substitution(reader *r, type *out)
{
    if (r->p[0] != 'S')
        return false;
    const char *q = r->p + 1;
    long idx = 0;
    if (*q != '_') {
        long v = 0;
        while (isdigit((unsigned char)*q) || isupper((unsigned char)*q)) {
            v = v * 36 + (isdigit((unsigned char)*q) ? *q - '0' : *q - 'A' + 10);
            q++;
        }
        if (*q != '_')
            return false;
        idx = v + 1;
    }
    if (idx >= r->nsubs)
        return false;
    *out = r->subs[idx];
    r->p = q + 1;
    return true;
}

static int kind_of_class(const char *text)
{
    if (strcmp(text, "torch::Tensor") == 0)
        return NOP_ARG_TENSOR;
    if (strcmp(text, "torch::Scalar") == 0)
        return NOP_ARG_SCALAR;
    return -1;
}

/* N <prefix components> E: each component but the last full name is a substitution. */
static bool nested(reader *r, type *out, bool is_type)
{
    r->p++;   /* N */
    char full[256] = "";
    type t = { .kind = -1 };
    int parts = 0;
    while (*r->p && *r->p != 'E') {
        char part[200];
        bool known = false;   /* already a substitution: not added again */
        if (parts == 0 && r->p[0] == 'S' && r->p[1] == 't') {
            r->p += 2;
            nopi_strlcpy(full, "std", sizeof full);
            known = true;
        } else if (parts == 0 && substitution(r, &t)) {
            nopi_strlcpy(full, t.text, sizeof full);
            known = true;
        } else if (source_name(r, part, sizeof part)) {
            size_t used = strlen(full);
            snprintf(full + used, sizeof full - used, "%s%s", used ? "::" : "", part);
        } else {
            return false;
        }
        parts++;
        /* the last component of a function's name is not a substitution candidate */
        if (!known && (*r->p != 'E' || is_type)) {
            memset(&t, 0, sizeof t);
            nopi_strlcpy(t.text, full, sizeof t.text);
            t.kind = kind_of_class(full);
            add_sub(r, &t);
        }
    }
    if (*r->p != 'E' || parts == 0)
        return false;
    r->p++;
    memset(out, 0, sizeof *out);
    nopi_strlcpy(out->text, full, sizeof out->text);
    out->kind = kind_of_class(full);
    return true;
}

static const struct { char code; const char *name; int kind; } builtins[] = {
    { 'v', "void", -1 }, { 'b', "bool", -1 }, { 'c', "char", -1 }, { 'a', "signed char", -1 },
    { 'h', "unsigned char", -1 }, { 's', "short", -1 }, { 't', "unsigned short", -1 },
    { 'i', "int", -1 }, { 'j', "unsigned int", -1 }, { 'l', "long", NOP_ARG_INT64 },
    { 'm', "unsigned long", -1 }, { 'x', "long long", -1 }, { 'y', "unsigned long long", -1 },
    { 'f', "float", -1 }, { 'd', "double", NOP_ARG_DOUBLE }, { 'e', "long double", -1 },
    { 'w', "wchar_t", -1 }, { 'z', "...", -1 },
};

static bool read_type(reader *r, type *out)
{
    memset(out, 0, sizeof *out);
    out->kind = -1;
    char c = *r->p;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(builtins); i++) {
        if (builtins[i].code == c) {
            r->p++;
            nopi_strlcpy(out->text, builtins[i].name, sizeof out->text);
            /* int64_t is long on x86-64 Linux: its display says so */
            if (c == 'l')
                nopi_strlcpy(out->text, "int64_t", sizeof out->text);
            out->kind = builtins[i].kind;
            return true;
        }
    }
    type inner;
    if (c == 'K' || c == 'V' || c == 'P' || c == 'R' || c == 'O') {
        r->p++;
        if (!read_type(r, &inner))
            return false;
        *out = inner;
        char text[sizeof inner.text + 16];
        if (c == 'K' || c == 'V') {
            snprintf(text, sizeof text, "%s %s", c == 'K' ? "const" : "volatile", inner.text);
            out->is_const = c == 'K';
        } else {
            snprintf(text, sizeof text, "%s %s", inner.text, c == 'P' ? "*" : c == 'R' ? "&"
                                                                                     : "&&");
            out->is_ref = c == 'R';
            out->ref_to_const = c == 'R' && inner.is_const && !inner.is_ref;
            if (c != 'R' || inner.is_ref)
                out->kind = -1;
            out->is_const = false;
        }
        if (c == 'P' || (c == 'V'))
            out->kind = -1;
        nopi_strlcpy(out->text, text, sizeof out->text);
        add_sub(r, out);
        return true;
    }
    if (c == 'N')
        return nested(r, out, true);
    if (c == 'S' && r->p[1] == 't') {
        r->p += 2;
        char part[200];
        if (!source_name(r, part, sizeof part))
            return false;
        snprintf(out->text, sizeof out->text, "std::%s", part);
        add_sub(r, out);
        return true;
    }
    if (c == 'S')
        return substitution(r, out);
    if (isdigit((unsigned char)c)) {
        if (!source_name(r, out->text, sizeof out->text))
            return false;
        add_sub(r, out);
        return true;
    }
    return false;
}

static void append(char *buf, size_t size, const char *s)
{
    size_t used = strlen(buf);
    if (used < size)
        snprintf(buf + used, size - used, "%s", s);
}

bool nopi_cxx_read(const char *sym, nopi_cxxfn *out)
{
    memset(out, 0, sizeof *out);
    out->nparams = -1;
    if (strncmp(sym, "_Z", 2) != 0) {
        nopi_strlcpy(out->name, sym, sizeof out->name);
        nopi_strlcpy(out->qual, sym, sizeof out->qual);
        nopi_strlcpy(out->display, sym, sizeof out->display);
        return true;
    }
    out->cxx = true;
    reader *r = calloc(1, sizeof *r);
    if (!r)
        return false;
    r->p = sym + 2;
    if (*r->p == 'L')   /* internal linkage (a static): _ZL5start */
        r->p++;
    type fn = { .text = "" };   /* an operator (_Znwm) is no source name: fn stays empty */
    bool ok;
    if (*r->p == 'N') {
        ok = nested(r, &fn, false);
        const char *last = strrchr(fn.text, ':');
        nopi_strlcpy(out->name, last ? last + 1 : fn.text, sizeof out->name);
    } else {
        ok = source_name(r, fn.text, sizeof fn.text);
        nopi_strlcpy(out->name, fn.text, sizeof out->name);
    }
    if (!ok) {
        free(r);
        return false;
    }
    nopi_strlcpy(out->qual, fn.text, sizeof out->qual);
    snprintf(out->display, sizeof out->display, "%s(", fn.text);
    int n = 0;
    bool whole = true;
    if (r->p[0] == 'v' && r->p[1] == '\0') {
        r->p++;
    } else {
        while (*r->p && n < NOPI_CXX_MAX_PARAMS) {
            type t;
            if (!read_type(r, &t) || r->bad) {
                whole = false;
                break;
            }
            bool cref = t.is_ref && t.ref_to_const;
            out->params[n].kind = t.kind;
            out->params[n].byref = cref;
            if (t.is_ref && !cref)
                out->params[n].kind = -1;
            if (n)
                append(out->display, sizeof out->display, ", ");
            append(out->display, sizeof out->display, t.text);
            n++;
        }
        whole = whole && *r->p == '\0';
    }
    if (whole) {
        out->nparams = n;
        append(out->display, sizeof out->display, ")");
    } else {
        nopi_strlcpy(out->display, sym, sizeof out->display);
    }
    free(r);
    return true;
}

static const char *const kind_text[4] = { "torch::Tensor", "torch::Scalar", "double",
                                          "int64_t" };

void nopi_cxx_signature(const char *fname, int nargs, const int *kinds, const bool *byref,
                        char *buf, size_t size)
{
    snprintf(buf, size, "%s(", fname);
    for (int i = 0; i < nargs; i++) {
        char one[64];
        int k = kinds[i] >= 0 && kinds[i] < 4 ? kinds[i] : 0;
        snprintf(one, sizeof one, "%s%s%s%s", i ? ", " : "", byref && byref[i] ? "const " : "",
                 kind_text[k], byref && byref[i] ? " &" : "");
        append(buf, size, one);
    }
    append(buf, size, ")");
}
