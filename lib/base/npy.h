/*
 * npy.h - the parts of the .npy reader that npy.c (the file: magic, version, data) and
 * npyheader.c (its header, a Python dict literal) share.
 */
#ifndef NEURONOP_NPY_H
#define NEURONOP_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

/* A .npy header is a Python dict literal that numpy reads with ast.literal_eval and then checks:
 * exactly the keys 'descr', 'fortran_order' and 'shape', shape a tuple of ints, fortran_order
 * a bool.  This reads the part of Python's literal grammar a header can use: strings (no
 * escapes or prefixes), whole numbers (decimal, 0x, 0o, 0b, with _ and a sign), True, False,
 * None, tuples, lists and dicts, with Python's whitespace, comments and line continuations.
 * Anything else is refused, never guessed at. */
typedef enum { NOPI_HV_STR, NOPI_HV_INT, NOPI_HV_BOOL, NOPI_HV_NONE, NOPI_HV_TUPLE, NOPI_HV_LIST, NOPI_HV_DICT } nopi_hv_kind;

typedef struct {
    nopi_hv_kind kind;
    const char *text;             /* the value as written, for messages */
    size_t textlen;
    const char *str;              /* NOPI_HV_STR: the characters between the quotes */
    size_t strlen;
    long long i;                  /* NOPI_HV_INT */
    bool big;                     /* NOPI_HV_INT, or a NOPI_HV_TUPLE's item: past a long long */
    bool b;                       /* NOPI_HV_BOOL */
    int n;                        /* NOPI_HV_TUPLE: items, every one counted */
    bool all_int;                 /* NOPI_HV_TUPLE: every item an int */
    int64_t sizes[NOPI_MAX_DIMS]; /* NOPI_HV_TUPLE: the first items, when ints */
} nopi_hv;

/* Fails err as "'path' is not a valid .npy file: " and fmt with what; -1. */
int nopi_npy_invalid(nop_error *err, const char *path, const char *fmt, const char *what);

/* Reads the header text[0, len) into the values of 'descr', 'fortran_order' and 'shape', in
 * that order, refusing what numpy refuses (a header that is no dict literal, a key other than
 * the three, one of them missing) and a key given twice, which numpy would take the last of,
 * silently.  py2_longs: versions 1 and 2, where numpy drops Python 2's L after a number.
 * 0, or -1 with err filled about path.  The values point into text. */
int nopi_npy_header(const char *path, const char *text, size_t len, bool py2_longs,
                    nopi_hv vals[3], nop_error *err);

/* The value as written, for messages: at most 48 characters, others than printable ASCII
 * shown as '?'; buf (size bytes) holds it. */
const char *nopi_hv_shown(const nopi_hv *v, char *buf, size_t size);
/* A string value's characters, shown as nopi_hv_shown shows a value. */
const char *nopi_hv_shown_str(const nopi_hv *v, char *buf, size_t size);
/* Whether a shape has a size below 0, which numpy refuses too. */
bool nopi_hv_negative(const nopi_hv *shape);

#endif
