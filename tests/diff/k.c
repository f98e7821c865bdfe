/*
 * k.c - runs the case table of tests/diff/diff.py through the C API (nt_*): each row names an
 * op, its form (allocating, _out into a new tensor, in place, aliasing other), the operands'
 * dtypes and raw element bits, and Scalars; the result's dtype and raw bits go to the output.
 */
#include <neuronop.h>
#include <math.h>
#include <string.h>
#include "table.h"


/* a tensor of n elements of dtype d whose raw bits are data[at .. at+n) */
static nt_tensor *make(nt_tcm_accessor *data, int64_t at, int64_t n, nt_dtype d)
{
    nt_tensor *t = nt_empty(NT_SHAPE(n), d);
    if (n == 0)
        return t;
    int64_t *v = tcm_malloc(MAXN * 8);
    unsigned char *raw = tcm_malloc(MAXN * 8);
    nt_tensor_to_tcm(data, v, at, n);
    int size = d == NT_I64 ? 8 : d == NT_F32 || d == NT_I32 ? 4 : d == NT_I8 || d == NT_U8 ? 1 : 2;
    for (int64_t i = 0; i < n; i++)
        memcpy(raw + i * size, &v[i], size);   /* little-endian: the low bytes */
    nt_tcm_accessor acc = nt_tcm_accessor_of(t);
    nt_tcm_to_tensor(&acc, raw, 0, n);
    tcm_free(raw);
    tcm_free(v);
    return t;
}

static nt_scalar scalar(int64_t kind, int64_t bits)
{
    if (kind == S_INT)
        return nt_scalar_i(bits);
    double f;
    memcpy(&f, &bits, 8);
    return nt_scalar_f(f);
}

static nt_tensor *unary(int op, nt_tensor *out, const nt_tensor *a)
{
    switch (op) {
    case ABS: return out ? nt_abs_out(out, a) : nt_abs(a);
    case CEIL: return out ? nt_ceil_out(out, a) : nt_ceil(a);
    case FLOOR: return out ? nt_floor_out(out, a) : nt_floor(a);
    case SIN: return out ? nt_sin_out(out, a) : nt_sin(a);
    case COS: return out ? nt_cos_out(out, a) : nt_cos(a);
    case TAN: return out ? nt_tan_out(out, a) : nt_tan(a);
    case LOG: return out ? nt_log_out(out, a) : nt_log(a);
    case LOG2: return out ? nt_log2_out(out, a) : nt_log2(a);
    case LOG10: return out ? nt_log10_out(out, a) : nt_log10(a);
    case EXP: return out ? nt_exp_out(out, a) : nt_exp(a);
    default: return out ? nt_bitwise_not_out(out, a) : nt_bitwise_not(a);
    }
}

#define TWO(name) \
    (b ? (out ? nt_##name##_out(out, a, b) : nt_##name(a, b)) \
       : (out ? nt_##name##_s_out(out, a, s1) : nt_##name##_s(a, s1)))
#define ALPHA(name) \
    (b ? (out ? nt_##name##_out(out, a, b, s2) : nt_##name(a, b, s2)) \
       : (out ? nt_##name##_s_out(out, a, s1, s2) : nt_##name##_s(a, s1, s2)))

static nt_tensor *binary(int op, nt_tensor *out, const nt_tensor *a, const nt_tensor *b,
                         nt_scalar s1, nt_scalar s2)
{
    switch (op) {
    case ADD: return ALPHA(add);
    case SUB: return ALPHA(sub);
    case MUL: return TWO(mul);
    case DIV: return TWO(div);
    case AND: return TWO(bitwise_and);
    case OR: return TWO(bitwise_or);
    case POW: return out ? nt_pow_out(out, a, s1) : nt_pow(a, s1);
    case POW_T: return out ? nt_pow_t_out(out, a, b) : nt_pow_t(a, b);
    case POW_S: return out ? nt_pow_s_out(out, s1, a) : nt_pow_s(s1, a);
    default: return out ? nt_clamp_out(out, a, s1, s2) : nt_clamp(a, s1, s2);
    }
}

nt_tensor *cases(const nt_tensor *spec, const nt_tensor *data)
{
    nt_tcm_accessor sa = nt_tcm_accessor_of(spec), da = nt_tcm_accessor_of(data);
    nt_tensor *dst = get_dst_tensor();
    nt_tcm_accessor oa = nt_tcm_accessor_of(dst);
    int64_t *row = tcm_malloc((2 + MAXN) * 8);
    unsigned char *raw = tcm_malloc(MAXN * 8);
    int64_t *f = tcm_malloc(NF * 8);
    for (int64_t c = 0; c < nt_size(spec, 0); c++) {
        nt_tensor_to_tcm(&sa, f, c * NF, NF);
        int op = (int)f[F_OP], form = (int)f[F_FORM];
        int64_t n = f[F_N], od = f[F_OTHER];
        nt_scalar s1 = scalar(f[F_S1_KIND], f[F_S1]);
        nt_scalar s2 = scalar(f[F_S2_KIND], f[F_S2]);
        nt_dtype outd = (nt_dtype)f[F_OUT];
        nt_tensor *r;
        if (op == FULL) {
            r = nt_full(NT_SHAPE(n), s1, outd);
        } else {
            nt_tensor *a = make(&da, f[F_SELF_AT], n, (nt_dtype)f[F_SELF]);
            nt_tensor *b = od >= 0 ? make(&da, f[F_OTHER_AT], n, (nt_dtype)od) : NULL;
            nt_tensor *out = form == OUT_NEW ? nt_empty(NT_SHAPE(n), outd)
                           : form == OUT_SELF ? a : form == OUT_OTHER ? b : NULL;
            if (op == FILL)
                r = nt_fill_(a, s1);
            else if (op <= NOT)
                r = unary(op, out, a);
            else
                r = binary(op, out, a, b, s1, s2);
        }
        nt_dtype d = nt_dtype_of(r);
        int size = d == NT_I64 ? 8 : d == NT_F32 || d == NT_I32 ? 4 : d == NT_I8 || d == NT_U8 ? 1 : 2;
        memset(row, 0, (2 + MAXN) * 8);
        row[0] = d;
        row[1] = nt_numel(r);
        nt_tcm_accessor ra = nt_tcm_accessor_of(r);
        nt_tensor_to_tcm(&ra, raw, 0, nt_numel(r));
        for (int64_t i = 0; i < nt_numel(r); i++)
            memcpy(&row[2 + i], raw + i * size, size);   /* zero-extended raw bits */
        nt_tcm_to_tensor(&oa, row, c * (2 + MAXN), 2 + MAXN);
    }
    tcm_free(f);
    tcm_free(raw);
    tcm_free(row);
    return dst;
}

nt_tensor *add_scalar(const nt_tensor *x, nt_scalar s)
{
    return nt_add_s_out(get_dst_tensor(), x, s, nt_scalar_i(1));
}

/* self ^ s, on tensors longer than the table's (t0220) */
nt_tensor *pow_scalar(const nt_tensor *x, nt_scalar s)
{
    return nt_pow_out(get_dst_tensor(), x, s);
}

/* self + alpha * other, on tensors longer than the table's (t0220) */
nt_tensor *add_alpha(const nt_tensor *x, const nt_tensor *y, nt_scalar alpha)
{
    return nt_add_out(get_dst_tensor(), x, y, alpha);
}

/* op number k of x, a 16-bit or float32 tensor longer than the table's, for the NaNs ATen's
 * vectorised and scalar loops make (t0220, which lists the same ops in torch's terms) */
nt_tensor *nan_op(const nt_tensor *x, nt_scalar k)
{
    nt_tensor *r = get_dst_tensor();
    const nt_scalar one = nt_scalar_i(1);
    switch (k.i) {
    case 0: return nt_abs_out(r, x);
    case 1: return nt_sin_out(r, x);
    case 2: return nt_ceil_out(r, x);
    case 3: return nt_exp_out(r, x);
    case 4: return nt_log_out(r, x);
    case 5: return nt_clamp_out(r, x, nt_scalar_i(0), nt_scalar_i(2));
    case 6: return nt_clamp_out(r, x, nt_scalar_f(NAN), nt_scalar_i(2));
    case 7: return nt_pow_out(r, x, nt_scalar_i(1));
    case 8: return nt_pow_out(r, x, nt_scalar_f(0.5));
    case 9: return nt_pow_out(r, x, nt_scalar_f(1.7));
    case 10: return nt_pow_out(r, x, nt_scalar_i(2));
    case 11: return nt_pow_out(r, x, nt_scalar_f(-0.5));
    case 12: return nt_mul_out(r, x, x);
    case 13: return nt_div_out(r, x, x);
    case 14: return nt_sub_out(r, x, x, one);
    case 15: return nt_add_s_out(r, x, nt_scalar_f(-INFINITY), one);
    case 16: return nt_pow_s_out(r, nt_scalar_f(-1.5), x);
    case 17: return nt_pow_t_out(r, x, x);
    case 18: return nt_fill_(r, nt_scalar_f(-NAN));
    default: {   /* float32 arithmetic cast to the bfloat16 _out */
        nt_tensor *f = nt_add(x, nt_zeros(nt_dim(x), nt_sizes(x), NT_F32), one);
        return nt_mul_out(r, f, f);
    }
    }
}

/* op number k of x and y (NaNs of other payloads and signs), for the NaN ATen takes of two,
 * and more ops of one NaN (t0220, which lists the same ops in torch's terms) */
/* A NaN Scalar of these bits: libtcc's NAN is the processor's default NaN, negative on x86,
 * where g++'s and Python's are positive. */
static nt_scalar nan_of(uint64_t bits)
{
    double f;
    memcpy(&f, &bits, 8);
    return nt_scalar_f(f);
}

nt_tensor *nan_op2(const nt_tensor *x, const nt_tensor *y, nt_scalar k)
{
    nt_tensor *r = get_dst_tensor();
    const nt_scalar one = nt_scalar_i(1), nnan = nt_scalar_f(-NAN);
    switch (k.i) {
    case 0: return nt_add_out(r, x, y, one);
    case 1: return nt_sub_out(r, x, y, nt_scalar_i(2));
    case 2: return nt_mul_out(r, x, y);
    case 3: return nt_div_out(r, x, y);
    case 4: return nt_pow_t_out(r, x, y);
    case 5: return nt_add_s_out(r, x, nnan, one);
    case 6: return nt_mul_s_out(r, x, nnan);
    case 7: return nt_div_s_out(r, x, nnan);
    case 8: return nt_pow_s_out(r, nnan, x);
    case 9: return nt_pow_out(r, x, nnan);
    case 10: return nt_cos_out(r, x);
    case 11: return nt_tan_out(r, x);
    case 12: return nt_log2_out(r, x);
    case 13: return nt_log10_out(r, x);
    case 14: return nt_floor_out(r, x);
    case 15: return nt_pow_out(r, x, nt_scalar_i(3));
    case 16: return nt_pow_out(r, x, nt_scalar_i(-1));
    case 17: return nt_pow_out(r, x, nt_scalar_i(-2));
    case 18: return nt_div_s_out(r, x, nt_scalar_f(0.0));
    case 19: return nt_mul_s_out(r, x, nt_scalar_f(INFINITY));
    case 20: return nt_sub_out(r, y, x, one);
    case 21: return nt_mul_out(r, y, x);
    case 22: return nt_pow_t_out(r, y, x);
    case 23: return nt_add_out(r, x, y, nan_of(0x7ff8000000000000ull));   /* Python's nan */
    default: return nt_sub_out(r, x, y, nan_of(0xfff8000000000000ull));   /* and -nan */
    }
}

/* self + alpha * s, for tensors past ATen's scalar loop (t0220) */
nt_tensor *add_s_alpha(const nt_tensor *x, nt_scalar s, nt_scalar alpha)
{
    return nt_add_s_out(get_dst_tensor(), x, s, alpha);
}

/* s ^ x, for tensors past ATen's scalar loop (t0220) */
nt_tensor *pow_base(const nt_tensor *x, nt_scalar s)
{
    return nt_pow_s_out(get_dst_tensor(), s, x);
}

/* self ^ a C++ bool (k: true or false), for tensors past ATen's scalar loop (t0220) */
nt_tensor *pow_bool(const nt_tensor *x, nt_scalar k)
{
    nt_scalar b = nt_scalar_i(k.i != 0);
    b.is_bool = 1;
    return nt_pow_out(get_dst_tensor(), x, b);
}
