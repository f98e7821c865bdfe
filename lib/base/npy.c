/*
 * npy.c - reads and writes NumPy .npy files (the format of numpy.lib.format).
 *
 * A file is: the magic "\x93NUMPY", a version (1, 2 or 3), the header length (2 bytes in
 * version 1, 4 after), a Python dict literal with 'descr', 'fortran_order' and 'shape', padded
 * so the data starts on a 64-byte boundary, then the raw little-endian data (the header's
 * literal is read by npyheader.c).  Everything read from the file is checked before use: a
 * truncated, oversized or malformed file is an input error that says which and where, never
 * a crash.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

/* the longest header np.load reads by default (its max_header_size): no file numpy.save
 * writes has a longer one */
#define NPY_MAX_HEADER 10000
#define DEVICE_DTYPES "float32, bfloat16, float16, int32, int8, int64, int16, uint8 " \
                      "(little-endian)"

/* Maps a descr to a dtype: what np.save writes ('<f4'), and what numpy also reads as the same
 * little-endian type (no byte order, '=' for native, which is little on the machines neuronop
 * runs on, and a type's name); bf16 comes as '<V2' (np.save of an ml_dtypes array) or
 * 'bfloat16' (written with ml_dtypes' name).  A big-endian '>' descr is no dtype here. */
static int parse_descr(const nopi_hv *v)
{
    static const struct { const char *descr; nt_dtype d; } known[] = {
        { "<f4", NT_F32 }, { "<f2", NT_F16 }, { "<i4", NT_I32 }, { "|i1", NT_I8 },
        { "<i8", NT_I64 }, { "<i2", NT_I16 }, { "|u1", NT_U8 }, { "<V2", NT_BF16 },
        { "|V2", NT_BF16 }, { "bfloat16", NT_BF16 }, { "<i1", NT_I8 }, { "<u1", NT_U8 },
        { "i1", NT_I8 }, { "u1", NT_U8 }, { "=i1", NT_I8 }, { "=u1", NT_U8 },
        { "f4", NT_F32 }, { "=f4", NT_F32 }, { "float32", NT_F32 },
        { "f2", NT_F16 }, { "=f2", NT_F16 }, { "float16", NT_F16 },
        { "i4", NT_I32 }, { "=i4", NT_I32 }, { "int32", NT_I32 },
        { "i8", NT_I64 }, { "=i8", NT_I64 }, { "int64", NT_I64 },
        { "i2", NT_I16 }, { "=i2", NT_I16 }, { "int16", NT_I16 },
        { "int8", NT_I8 }, { "uint8", NT_U8 },
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
        nopi_npy_invalid(err, path, "%s", "it does not start with the .npy magic \\x93NUMPY");
        goto out;
    }
    unsigned major = u[6], minor = u[7];
    size_t hlen, hstart;
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        char v[16];
        snprintf(v, sizeof v, "%u.%u", major, minor);
        nopi_npy_invalid(err, path, "unsupported format version %s (numpy writes 1.0, 2.0 and 3.0)", v);
        goto out;
    }
    if (major == 1) {
        hlen = (size_t)u[8] | (size_t)u[9] << 8;
        hstart = 10;
    } else {
        if (len < 12) {
            nopi_npy_invalid(err, path, "%s", "truncated header");
            goto out;
        }
        hlen = (size_t)u[8] | (size_t)u[9] << 8 | (size_t)u[10] << 16 | (size_t)u[11] << 24;
        hstart = 12;
    }
    if (hlen > len - hstart) {
        nopi_npy_invalid(err, path, "%s", "truncated header");
        goto out;
    }
    if (hlen > NPY_MAX_HEADER) {
        char n[64];
        snprintf(n, sizeof n, "%zu bytes, and numpy reads at most %d", hlen, NPY_MAX_HEADER);
        nopi_npy_invalid(err, path, "its header is %s", n);
        nopi_detail(err, "np.load refuses it too unless told to trust the file; save the "
                    "array again with numpy.save");
        goto out;
    }
    nopi_hv vals[3];
    if (nopi_npy_header(path, data + hstart, hlen, major <= 2, vals, err) != 0)
        goto out;
    const nopi_hv *dv = &vals[0], *fv = &vals[1], *sv = &vals[2];
    int dtype = dv->kind == NOPI_HV_STR ? parse_descr(dv) : -1;
    int ndim = sv->n;
    const int64_t *sizes = sv->sizes;
    char why[256], buf[64];
    if (dv->kind == NOPI_HV_LIST) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has a structured dtype (fields %s), "
                  "which the device does not have", path, nopi_hv_shown(dv, buf, sizeof buf));
        nopi_detail(err, "device dtypes: " DEVICE_DTYPES "; save each field as an array of "
                    "its own");
    } else if (dv->kind != NOPI_HV_STR) {
        nopi_npy_invalid(err, path, "its 'descr' is %s, not a dtype string like '<f4'",
            nopi_hv_shown(dv, buf, sizeof buf));
    } else if (dtype < 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' has dtype '%s', which the device "
                  "does not have", path, nopi_hv_shown_str(dv, buf, sizeof buf));
        nopi_detail(err, "device dtypes: " DEVICE_DTYPES);
    } else if (fv->kind != NOPI_HV_BOOL) {
        nopi_npy_invalid(err, path, "its 'fortran_order' is %s, not True or False",
            nopi_hv_shown(fv, buf, sizeof buf));
    } else if (sv->kind != NOPI_HV_TUPLE || !sv->all_int) {
        char msg[192];
        snprintf(msg, sizeof msg, "its 'shape' is %s, not a tuple of sizes like (4,) or "
                 "(2, 3)%s", nopi_hv_shown(sv, buf, sizeof buf), sv->kind == NOPI_HV_INT &&
                 sv->text[0] == '(' ? " (in Python, (4) is the number 4; (4,) is a tuple)"
                                    : "");
        nopi_npy_invalid(err, path, "%s", msg);
    } else if (sv->big || nopi_hv_negative(sv)) {
        nopi_npy_invalid(err, path, "its 'shape' %s has a size below 0 or past 64 bits",
            nopi_hv_shown(sv, buf, sizeof buf));
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
        nopi_npy_invalid(err, path, "%s", msg);
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
