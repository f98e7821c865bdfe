/*
 * tensor.c - tensor allocation, shape limits and element conversion (see tensor.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"

static const struct {
    const char *name, *suffix;
    size_t size;
    bool is_float;
} dtypes[] = {
    [NT_F32] = { "float32", "f32", 4, true },
    [NT_BF16] = { "bfloat16", "bf16", 2, true },
    [NT_F16] = { "float16", "f16", 2, true },
    [NT_I32] = { "int32", "i32", 4, false },
    [NT_I8] = { "int8", "i8", 1, false },
    [NT_I64] = { "int64", "i64", 8, false },
    [NT_I16] = { "int16", "i16", 2, false },
    [NT_U8] = { "uint8", "u8", 1, false },
};

size_t nopi_dtype_size(nt_dtype d) { return dtypes[d].size; }
const char *nopi_dtype_name(nt_dtype d)
{
    return (unsigned)d < NOPI_ARRAY_LEN(dtypes) ? dtypes[d].name : "?";
}
const char *nopi_dtype_article(nt_dtype d)
{
    return nopi_dtype_name(d)[0] == 'i' ? "an" : "a";
}
const char *nopi_number_article(const char *text)
{
    /* "an" before a number read aloud from "eight", "eleven", "eighteen" or "eighty": its
     * leading group of up to three digits (8,000 is "eight thousand") is 8, 11, 18, 80-89 or
     * 800-899 */
    size_t n = strspn(text, "0123456789");
    if (n == 0)
        return "a";
    size_t lead = n % 3 ? n % 3 : 3;
    int group = 0;
    for (size_t i = 0; i < lead; i++)
        group = group * 10 + (text[i] - '0');
    bool an = group == 8 || group == 11 || group == 18 || (group >= 80 && group <= 89) ||
              (group >= 800 && group <= 899);
    return an ? "an" : "a";
}

const char *nopi_dtype_suffix(nt_dtype d)
{
    return (unsigned)d < NOPI_ARRAY_LEN(dtypes) ? dtypes[d].suffix : "?";
}
bool nopi_dtype_is_float(nt_dtype d) { return dtypes[d].is_float; }

void nopi_dtype_names(char *buf, size_t size)
{
    size_t at = 0, n = NOPI_ARRAY_LEN(dtypes);
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s",
                               i == 0 ? "" : i + 1 == n ? " or " : ", ", dtypes[i].name);
}

int nopi_dtype_parse(const char *s)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(dtypes); i++)
        if (strcmp(s, dtypes[i].name) == 0 || strcmp(s, dtypes[i].suffix) == 0)
            return (int)i;
    return -1;
}

bool nopi_shape_ok(int ndim, const int64_t *sizes, char *why, size_t size)
{
    if (ndim < 0 || ndim > NOPI_MAX_DIMS) {
        snprintf(why, size, "%d dimensions; the device allows at most %d", ndim, NOPI_MAX_DIMS);
        return false;
    }
    bool small = true;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            snprintf(why, size, "dimension %d has negative size %lld", i, (long long)sizes[i]);
            return false;
        }
        if (sizes[i] > 65535)
            small = false;
        if (sizes[i] > 4294967295LL) {
            snprintf(why, size, "dimension %d is %lld; the device allows at most 4294967295",
                     i, (long long)sizes[i]);
            return false;
        }
    }
    if (!small && ndim > 4) {
        snprintf(why, size, "a dimension over 65535 in a %d-D tensor; the device allows "
                 "dimensions over 65535 only up to 4-D", ndim);
        return false;
    }
    return true;
}

/* fill: the data's bytes, mapped now */
static nt_tensor *alloc(nt_dtype d, int ndim, const int64_t *sizes, bool shape_only, int fill)
{
    if ((unsigned)d >= NOPI_ARRAY_LEN(dtypes) || ndim < 0 || ndim > NOPI_MAX_DIMS)
        return NULL;
    nt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->magic = NOPI_TENSOR_MAGIC;
    t->dtype = d;
    t->ndim = ndim;
    t->itemsize = dtypes[d].size;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0 || (sizes[i] && t->numel > INT64_MAX / 16 / sizes[i])) {
            free(t);
            return NULL;
        }
        t->sizes[i] = sizes[i];
        t->numel *= sizes[i];
    }
    t->shape_only = shape_only;
    if (!shape_only) {
        /* an empty tensor's pointer is still a valid one (calloc(0) may return NULL) */
        size_t bytes = (size_t)(t->numel ? t->numel : 1) * t->itemsize;
        t->data = nopi_host_block(bytes);
        if (t->data)
            memset(t->data, fill, bytes);
        if (!t->data) {
            free(t);
            return NULL;
        }
    }
    return t;
}

nt_tensor *nopi_tensor_alloc(nt_dtype d, int ndim, const int64_t *sizes, bool shape_only)
{
    return alloc(d, ndim, sizes, shape_only, 0);
}

nt_tensor *nopi_tensor_alloc_filled(nt_dtype d, int ndim, const int64_t *sizes,
                                    unsigned char byte)
{
    return alloc(d, ndim, sizes, false, byte);
}

void nopi_tensor_free(nt_tensor *t)
{
    if (!t)
        return;
    t->magic = 0;
    free(t->data);
    free(t->track);
    free(t);
}

bool nopi_same_shape(const nt_tensor *a, const nt_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i])
            return false;
    return true;
}

void nopi_shape_str(const nt_tensor *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    if (t->ndim == 0) {
        snprintf(buf, size, "scalar");
        return;
    }
    for (int i = 0; i < t->ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "x" : "",
                                 (long long)t->sizes[i]);
}

/* ---- 16-bit floats: round to nearest even ---- */

uint16_t nopi_f32_to_bf16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)       /* NaN: keep it quiet and a NaN */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float nopi_bf16_to_f32(uint16_t v)
{
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t nopi_f32_to_f16(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t exp = (u >> 23) & 0xffu, mant = u & 0x7fffffu;
    if (exp == 0xff)                              /* inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)                                  /* overflow: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {                                 /* subnormal or zero */
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
        half++;                                   /* may carry into the exponent: correct */
    return (uint16_t)(sign | half);
}

float nopi_f16_to_f32(uint16_t v)
{
    uint32_t sign = (uint32_t)(v & 0x8000u) << 16, exp = (v >> 10) & 0x1fu, mant = v & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        if (mant == 0) {
            u = sign;
        } else {                                  /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                mant <<= 1;
            } while (!(mant & 0x400u));
            u = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        u = sign | 0x7f800000u | (mant << 13);
    } else {
        u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- element access ---- */

double nopi_get_f(const nt_tensor *t, int64_t i)
{
    const unsigned char *p = t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NT_F32: { float v; memcpy(&v, p, 4); return v; }
    case NT_BF16: { uint16_t v; memcpy(&v, p, 2); return nopi_bf16_to_f32(v); }
    case NT_F16: { uint16_t v; memcpy(&v, p, 2); return nopi_f16_to_f32(v); }
    case NT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case NT_I8: return (int8_t)p[0];
    case NT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case NT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case NT_U8: return p[0];
    }
    return 0;
}

int64_t nopi_get_i(const nt_tensor *t, int64_t i)
{
    if (t->dtype == NT_I64) {
        int64_t v;
        memcpy(&v, t->data + (size_t)i * 8, 8);
        return v;
    }
    double d = nopi_get_f(t, i);
    if (isnan(d))
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (int64_t)d;
}

void nopi_set_i(nt_tensor *t, int64_t i, int64_t v)
{
    unsigned char *p = t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NT_I32: { int32_t x = (int32_t)(uint32_t)v; memcpy(p, &x, 4); return; }
    case NT_I8: p[0] = (unsigned char)v; return;
    case NT_I64: memcpy(p, &v, 8); return;
    case NT_I16: { int16_t x = (int16_t)(uint16_t)v; memcpy(p, &x, 2); return; }
    case NT_U8: p[0] = (unsigned char)v; return;
    default: nopi_set_f(t, i, (double)v); return;
    }
}

void nopi_set_f(nt_tensor *t, int64_t i, double v)
{
    unsigned char *p = t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NT_F32: { float x = (float)v; memcpy(p, &x, 4); return; }
    case NT_BF16: { uint16_t x = nopi_f32_to_bf16((float)v); memcpy(p, &x, 2); return; }
    case NT_F16: { uint16_t x = nopi_f32_to_f16((float)v); memcpy(p, &x, 2); return; }
    default:
        /* to an integer: truncate toward zero, saturating what int64 cannot hold */
        if (isnan(v))
            v = 0;
        nopi_set_i(t, i, v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v);
        return;
    }
}
