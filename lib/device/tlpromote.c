/*
 * tlpromote.c - ATen's dtype rules for the tensor library: type promotion
 * (torch.result_type), which casts an output accepts, Scalars converted to a dtype with and
 * without c10's overflow check, and the names c10 gives dtypes in its messages.
 * Written from c10/core/ScalarType.h, ATen's TensorIterator and c10/util/TypeCast.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorlib.h"

static bool is_float(nt_dtype d) { return nopi_dtype_is_float(d); }

/* bits of an integral dtype, and whether it is unsigned */
static int int_bits(nt_dtype d)
{
    switch (d) {
    case NT_I8: case NT_U8: return 8;
    case NT_I16: return 16;
    case NT_I32: return 32;
    default: return 64;
    }
}

nt_dtype nopi_promote(nt_dtype a, nt_dtype b)
{
    if (a == b)
        return a;
    if (is_float(a) != is_float(b))
        return is_float(a) ? a : b;
    if (is_float(a))   /* two different floating dtypes: bf16 with f16 too gives float32 */
        return NT_F32;
    if (a == NT_U8 || b == NT_U8) {   /* uint8 with a signed type: the next signed width up */
        nt_dtype s = a == NT_U8 ? b : a;
        return s == NT_I8 ? NT_I16 : s;
    }
    return int_bits(a) >= int_bits(b) ? a : b;
}

/* -1 stands for no dtype yet (c10's Undefined). */
static int promote_u(int a, nt_dtype b) { return a < 0 ? (int)b : (int)nopi_promote((nt_dtype)a, b); }

/* c10's combine_categories: a higher-priority class wins unless the lower one is floating and
 * the higher integral */
static int combine(int higher, int lower)
{
    if (higher >= 0 && is_float((nt_dtype)higher))
        return higher;
    if (lower >= 0 && is_float((nt_dtype)lower))
        return higher < 0 ? lower : promote_u(higher, (nt_dtype)lower);
    return higher >= 0 ? higher : lower;
}

nt_dtype nopi_result_type(const nopi_operand *ops, int n)
{
    int dim = -1, zero = -1, wrapped = -1;
    for (int k = 0; k < n; k++) {
        if (ops[k].t && ops[k].t->ndim > 0)
            dim = promote_u(dim, ops[k].t->dtype);
        else if (ops[k].t)
            zero = promote_u(zero, ops[k].t->dtype);
        else   /* a wrapped number: int64, or the default floating dtype */
            wrapped = promote_u(wrapped, ops[k].s.is_int ? NT_I64 : NT_F32);
    }
    return (nt_dtype)combine(dim, combine(zero, wrapped));
}

bool nopi_can_cast(nt_dtype from, nt_dtype to) { return !(is_float(from) && !is_float(to)); }

const char *nopi_torch_type_name(nt_dtype d)
{
    static const char *const names[] = {
        [NT_F32] = "Float", [NT_BF16] = "BFloat16", [NT_F16] = "Half", [NT_I32] = "Int",
        [NT_I8] = "Char", [NT_I64] = "Long", [NT_I16] = "Short", [NT_U8] = "Byte",
    };
    return names[d];
}

const char *nopi_torch_cpp_name(nt_dtype d)
{
    static const char *const names[] = {
        [NT_F32] = "float", [NT_BF16] = "at::BFloat16", [NT_F16] = "at::Half", [NT_I32] = "int",
        [NT_I8] = "int8_t", [NT_I64] = "int64_t", [NT_I16] = "int16_t", [NT_U8] = "uint8_t",
    };
    return names[d];
}

int64_t nopi_wrap(nt_dtype d, int64_t v)
{
    switch (d) {
    case NT_I8: return (int8_t)(uint8_t)(uint64_t)v;
    case NT_U8: return (uint8_t)(uint64_t)v;
    case NT_I16: return (int16_t)(uint16_t)(uint64_t)v;
    case NT_I32: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

float nopi_round_to(nt_dtype d, float v)
{
    if (d == NT_BF16)
        return nopi_bf16_to_f32(nopi_f32_to_bf16(v));
    if (d == NT_F16)
        return nopi_f16_to_f32(nopi_f32_to_f16(v));
    return v;
}

/* the largest finite value of a floating dtype */
static double float_max(nt_dtype d)
{
    return d == NT_F16 ? 65504.0 : d == NT_BF16 ? 0x1.fep127 : 0x1.fffffep127;
}

static int64_t int_min(nt_dtype d)
{
    return d == NT_U8 ? 0 : d == NT_I64 ? INT64_MIN : -((int64_t)1 << (int_bits(d) - 1));
}

static int64_t int_max(nt_dtype d)
{
    return d == NT_U8 ? 255 : d == NT_I64 ? INT64_MAX : ((int64_t)1 << (int_bits(d) - 1)) - 1;
}

void nopi_scalar_cast(nt_scalar s, nt_dtype d, int64_t *i, float *f)
{
    if (is_float(d)) {
        *f = nopi_round_to(d, s.is_int ? (float)s.i : (float)s.f);
        *i = 0;
        return;
    }
    *f = 0;
    if (s.is_int) {
        *i = nopi_wrap(d, s.i);
    } else {   /* double to an integer: toward zero; what int64 cannot hold is undefined in C */
        double v = s.f;
        int64_t x = isnan(v) ? 0 : v >= 0x1p63 ? INT64_MIN : v < -0x1p63 ? INT64_MIN : (int64_t)v;
        *i = nopi_wrap(d, x);
    }
}

bool nopi_scalar_checked(nt_scalar s, nt_dtype d, int64_t *i, float *f)
{
    nopi_scalar_cast(s, d, i, f);
    if (is_float(d)) {
        if (s.is_int)   /* only half's range is smaller than an int64's */
            return (double)s.i <= float_max(d) && (double)s.i >= -float_max(d);
        return isinf(s.f) || isnan(s.f) || fabs(s.f) <= float_max(d);
    }
    if (!s.is_int) {
        double v = s.f;
        return !isnan(v) && v >= (double)int_min(d) && v <= (double)int_max(d);
    }
    if (d == NT_U8)   /* c10 lets a negative value wrap into an unsigned type */
        return s.i <= 255 && s.i >= -255;
    return s.i >= int_min(d) && s.i <= int_max(d);
}

void nopi_scalar_str(nt_scalar s, char *buf, size_t size)
{
    if (s.is_bool) {
        snprintf(buf, size, "%s", s.i ? "true" : "false");
        return;
    }
    if (s.is_int) {
        snprintf(buf, size, "%lld", (long long)s.i);
        return;
    }
    if (isnan(s.f)) {
        snprintf(buf, size, "nan");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {   /* the shortest that reads back */
        snprintf(buf, size, "%.*g", prec, s.f);
        if (strtod(buf, NULL) == s.f)
            break;
    }
    if (!strpbrk(buf, ".eni"))   /* a double stays visibly a double: 2.0, not 2 */
        snprintf(buf + strlen(buf), size - strlen(buf), ".0");
}
