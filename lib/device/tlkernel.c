/*
 * tlkernel.c - the tensor library's element kernels: one resolved op (tensorlib.h) over every
 * element, in the op's compute dtype as ATen's CPU kernels compute it, in its vectorised
 * loop or its scalar one as the element falls (neuronop-api(3)).  A float32 op on float32
 * tensors runs a plain float loop; the rest read and write through the dtype.
 */
#include <math.h>
#include <string.h>

#include "tensorlib.h"
#include "tlsleef.h"

/* ---- elements -------------------------------------------------------------------------- */

/* c10's Half to float: the value its bits say, a signalling NaN made quiet (c10 converts by
 * a multiplication, which quiets it; the kernel API's own reads keep the bit).  As a pow's
 * operand the difference shows: libm's powf of a signalling NaN to 0 is a NaN, of a quiet
 * one 1, as torch gives (an ATen tester's find). */
static float half_c10(uint16_t v)
{
    float f = nopi_f16_to_f32(v);
    if ((v & 0x7c00u) == 0x7c00u && (v & 0x3ffu)) {
        uint32_t u;
        memcpy(&u, &f, 4);
        u |= 0x00400000u;
        memcpy(&f, &u, 4);
    }
    return f;
}

static float ld_f(const nt_tensor *t, int64_t i)
{
    const unsigned char *p = t->data + (size_t)i * t->itemsize;
    switch (t->dtype) {
    case NT_F32: { float v; memcpy(&v, p, 4); return v; }
    case NT_BF16: { uint16_t v; memcpy(&v, p, 2); return nopi_bf16_to_f32(v); }
    case NT_F16: { uint16_t v; memcpy(&v, p, 2); return half_c10(v); }
    case NT_I64: { int64_t v; memcpy(&v, p, 8); return (float)v; }   /* one rounding */
    default: return (float)nopi_get_i(t, i);
    }
}

static int64_t ld_i(const nt_tensor *t, int64_t i) { return nopi_get_i(t, i); }

static void st_f(nt_tensor *r, int64_t i, float v)
{
    unsigned char *p = r->data + (size_t)i * r->itemsize;
    switch (r->dtype) {
    case NT_F32: memcpy(p, &v, 4); return;
    case NT_BF16: { uint16_t x = nopi_f32_to_bf16(v); memcpy(p, &x, 2); return; }
    case NT_F16: { uint16_t x = nopi_f32_to_f16(v); memcpy(p, &x, 2); return; }
    default: nopi_set_f(r, i, v); return;   /* unreachable for ops: the cast is refused */
    }
}

static void st_i(nt_tensor *r, int64_t i, int64_t v)
{
    if (nopi_dtype_is_float(r->dtype))
        st_f(r, i, (float)v);
    else
        nopi_set_i(r, i, v);
}

/* A float as C++'s static_cast makes it an integer of dtype d on x86, which ATen's copy_
 * does: truncated; a NaN or a value out of range is the conversion's "indefinite" integer
 * (INT64_MIN to int64, else INT32_MIN, of which a narrower type keeps the low bits). */
static int64_t float_to_int(float v, nt_dtype d)
{
    if (d == NT_I64)
        return v == v && v >= -0x1p63f && v < 0x1p63f ? (int64_t)v : INT64_MIN;
    return v == v && v >= -0x1p31f && v < 0x1p31f ? (int64_t)(int32_t)v : INT32_MIN;
}

void nopi_tl_copy_cast(nt_tensor *dst, const nt_tensor *src)
{
    bool from_float = nopi_dtype_is_float(src->dtype), to_float = nopi_dtype_is_float(dst->dtype);
    for (int64_t i = 0; i < dst->numel; i++) {
        if (!from_float)
            st_i(dst, i, ld_i(src, i));
        else if (to_float)
            st_f(dst, i, ld_f(src, i));
        else
            nopi_set_i(dst, i, float_to_int(ld_f(src, i), dst->dtype));
    }
}

/* ---- integral ops: in the compute dtype's width, wrapping ------------------------------ */

static int64_t wmul(nt_dtype ct, int64_t x, int64_t y)
{
    return nopi_wrap(ct, (int64_t)((uint64_t)x * (uint64_t)y));
}

/* ATen's powi: a negative exponent gives 1, -1 or 0; otherwise square and multiply */
static int64_t powi(nt_dtype ct, int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
    int64_t r = 1;
    while (b) {
        if (b & 1)
            r = wmul(ct, r, a);
        b /= 2;
        a = wmul(ct, a, a);
    }
    return r;
}

static int64_t iop(const nopi_tl_args *x, int64_t a, int64_t b)
{
    nt_dtype ct = x->ct;
    switch (x->op) {
    case NOPI_TL_ABS: return nopi_wrap(ct, a < 0 ? (int64_t)(0 - (uint64_t)a) : a);
    case NOPI_TL_NOT: return nopi_wrap(ct, ~a);
    case NOPI_TL_ADD: return nopi_wrap(ct, (int64_t)((uint64_t)a + (uint64_t)wmul(ct, x->ai, b)));
    case NOPI_TL_MUL: return wmul(ct, a, b);
    case NOPI_TL_AND: return a & b;
    case NOPI_TL_OR: return a | b;
    case NOPI_TL_POW: return powi(ct, a, b);
    case NOPI_TL_CLAMP: { int64_t m = a < b ? b : a; return x->ci < m ? x->ci : m; }
    default: return a;   /* ceil, floor */
    }
}

/* ---- floating ops: in float, rounded to the compute dtype after each operation ---------- */

static float pow_scalar(const nopi_tl_args *x, float a)
{
    nt_dtype ct = x->ct;
    double e = x->ed;
    if (e == 0 && !x->pow_bool)   /* ATen's fill and copy (a bool exponent computes) */
        return 1;
    if (e == 1 && !x->pow_bool)
        return a;
    if (ct != NT_F16) {   /* ATen's sqrt, rsqrt and reciprocal kernels */
        if (e == 0.5)
            return sqrtf(a);
        if (e == -0.5)
            return 1 / nopi_round_to(ct, sqrtf(a));
        if (e == -1)
            return 1 / a;
    }
    if (ct == NT_F32) {   /* the exponent stays a double */
        if (e == 2)
            return a * a;
        if (e == 3)
            return a * a * a;
        if (e == -2)
            return 1 / (a * a);
        return (float)pow(a, e);
    }
    float eb = x->bf;   /* the exponent in ct */
    if (ct == NT_BF16) {
        if (eb == 2)
            return a * a;
        if (eb == 3)
            return nopi_round_to(ct, a * a) * a;
        if (eb == -2)
            return 1 / nopi_round_to(ct, a * a);
    }
    return powf(a, eb);
}

/* ---- transcendentals ---------------------------------------------------------------------- */

/* ATen's vectorised loop computes sin ... exp to the last element (float32, and bfloat16
 * widened to float) with Sleef's functions, which tlsleef.c calls, handing them 8 elements
 * at a time from the first (vec::map; the last few with zeros in the other lanes).  Sleef's
 * sin and cos compute the 8 together (one large lane changes the others' rounding), so an
 * element's result is its group's: a group is computed when its first element is asked for
 * and kept for the rest.  (Past 2048 elements ATen splits the loop among its threads, and a
 * thread's part may start inside a group, so torch's own bits there depend on its thread
 * count: one thread's are followed.) */
typedef struct group {
    int64_t first;   /* its first element, or -1: none yet */
    float out[8];
} group;

/* The Sleef function of a unary op, or -1 for an op without one. */
static int sleef_of(nopi_tl_op op)
{
    switch (op) {
    case NOPI_TL_SIN: return NOPI_SLEEF_SIN;
    case NOPI_TL_COS: return NOPI_SLEEF_COS;
    case NOPI_TL_TAN: return NOPI_SLEEF_TAN;
    case NOPI_TL_LOG: return NOPI_SLEEF_LOG;
    case NOPI_TL_LOG2: return NOPI_SLEEF_LOG2;
    case NOPI_TL_LOG10: return NOPI_SLEEF_LOG10;
    case NOPI_TL_EXP: return NOPI_SLEEF_EXP;
    default: return -1;
    }
}

/* A float operand in the compute dtype ct, as ATen's loops have it: an integral one rounds;
 * c10 widens a bfloat16 NaN as it is, signalling too, and quiets a half's. */
static float in_ct(nt_dtype ct, float v)
{
    if (ct == NT_F32)
        return v;
    return v != v && ct == NT_BF16 ? v : nopi_round_to(ct, v);
}

/* Element i of n of unary op fn (sleef_of) of x->a, computed with its group of 8 into g. */
static float in_group(group *g, const nopi_tl_args *x, nopi_sleef_fn fn, int64_t i, int64_t n)
{
    int64_t first = i - i % 8;
    if (g->first != first) {
        float in[8] = { 0 };
        for (int64_t j = first; j < n && j < first + 8; j++)
            in[j - first] = in_ct(x->ct, ld_f(x->a, j));
        nopi_sleef8(fn, in, g->out);
        g->first = first;
    }
    return g->out[i - first];
}

/* fn of n float32 elements a into o (o may be a), in Sleef's groups of 8. */
static void sleef_map(nopi_sleef_fn fn, const float *a, float *o, int64_t n)
{
    for (int64_t i = 0; i < n; i += 8) {
        float in[8] = { 0 }, out[8];
        size_t k = (size_t)(n - i < 8 ? n - i : 8);
        memcpy(in, a + i, k * sizeof *in);
        nopi_sleef8(fn, in, out);
        memcpy(o + i, out, k * sizeof *out);
    }
}

/* A transcendental function of a float by libm's, which rounds within 1 ulp of Sleef's and
 * stands in where Sleef's AVX2 functions cannot run (!nopi_sleef_ok). */
static float transcendental(nopi_sleef_fn fn, float a)
{
    switch (fn) {
    case NOPI_SLEEF_SIN: return (float)sin(a);
    case NOPI_SLEEF_COS: return (float)cos(a);
    case NOPI_SLEEF_TAN: return (float)tan(a);
    case NOPI_SLEEF_LOG: return (float)log(a);
    case NOPI_SLEEF_LOG2: return (float)log2(a);
    case NOPI_SLEEF_LOG10: return (float)log10(a);
    default: return (float)exp(a);
    }
}

static float fop(const nopi_tl_args *x, float a, float b)
{
    nt_dtype ct = x->ct;
    switch (x->op) {
    case NOPI_TL_ABS: return fabsf(a);
    case NOPI_TL_CEIL: return ceilf(a);
    case NOPI_TL_FLOOR: return floorf(a);
    case NOPI_TL_SIN: return transcendental(NOPI_SLEEF_SIN, a);
    case NOPI_TL_COS: return transcendental(NOPI_SLEEF_COS, a);
    case NOPI_TL_TAN: return transcendental(NOPI_SLEEF_TAN, a);
    case NOPI_TL_LOG: return transcendental(NOPI_SLEEF_LOG, a);
    case NOPI_TL_LOG2: return transcendental(NOPI_SLEEF_LOG2, a);
    case NOPI_TL_LOG10: return transcendental(NOPI_SLEEF_LOG10, a);
    case NOPI_TL_EXP: return transcendental(NOPI_SLEEF_EXP, a);
    case NOPI_TL_ADD: return ct == NT_F32 ? fmaf(x->af, b, a) : a + nopi_round_to(ct, x->af * b);
    case NOPI_TL_MUL: return a * b;
    case NOPI_TL_DIV: return a / b;
    case NOPI_TL_POW: return x->pow_special ? pow_scalar(x, a) : powf(a, b);
    case NOPI_TL_CLAMP: {
        if (x->clamp_nan)
            return NAN;
        float m = a < b ? b : a;   /* std::max then std::min: a NaN element stays NaN */
        return x->cf < m ? x->cf : m;
    }
    default: return a;
    }
}

/* ---- NaNs of bfloat16 results ------------------------------------------------------------ */

/* ATen computes a bfloat16 op in float and makes each result a bfloat16 again: in its scalar
 * loop by c10's conversion, which makes every NaN 0x7fc0, in its vectorised loop (AVX2) by
 * one that makes every NaN 0xffff.  So a NaN's bits say which loop computed the element, and
 * torch 1.13 on x86 gives (t0220 checks each against it):
 *   - ceil, floor, sin ... exp and pow by 0.5 (sqrt): vectorised to the last element, 0xffff;
 *   - clamp: 0xffff from the vectorised loop, and from the scalar one the NaN element itself
 *     (std::min and std::max return it, bits and all); a NaN bound fills 0x7fc0;
 *   - pow by 1: a copy, the element itself;
 *   - the rest (abs, add, sub, mul, div, pow): 0xffff from the vectorised loop, which takes
 *     the elements 32 at a time, 0x7fc0 from the scalar one, which takes the rest;
 *   - a float32 result cast to a bfloat16 _out: 0xffff (ATen's vectorised copy), a float16
 *     one 0x7fc0 (its copy converts one element at a time).
 * (ATen splits a tensor of more than 32768 elements among its threads, each with a scalar
 * tail of its own, so past that size its bits depend on the thread count: not followed.) */
enum { BF16_NAN_SCALAR, BF16_NAN_VECTOR, BF16_NAN_ELEMENT };

static int bf16_nan(const nopi_tl_args *x, int64_t i, int64_t vec)
{
    if (x->ct != NT_BF16)
        return x->ct == NT_F32 ? BF16_NAN_VECTOR : BF16_NAN_SCALAR;
    switch (x->op) {
    case NOPI_TL_CEIL: case NOPI_TL_FLOOR: case NOPI_TL_SIN: case NOPI_TL_COS:
    case NOPI_TL_TAN: case NOPI_TL_LOG: case NOPI_TL_LOG2: case NOPI_TL_LOG10:
    case NOPI_TL_EXP:
        return BF16_NAN_VECTOR;
    case NOPI_TL_CLAMP:
        if (x->clamp_nan)
            return BF16_NAN_SCALAR;
        return i < vec ? BF16_NAN_VECTOR : BF16_NAN_ELEMENT;
    case NOPI_TL_POW:
        if (x->pow_special && x->ed == 0.5)
            return BF16_NAN_VECTOR;
        if (x->pow_special && x->ed == 1 && !x->pow_bool)
            return BF16_NAN_ELEMENT;
        break;
    default:
        break;
    }
    return i < vec ? BF16_NAN_VECTOR : BF16_NAN_SCALAR;
}

/* Stores element i, a NaN, as ATen's loop would (above); the element itself is self's, a
 * bfloat16 tensor (clamp and pow keep self's dtype), copied without quieting it. */
static void st_bf16_nan(const nopi_tl_args *x, nt_tensor *r, int64_t i, int64_t vec)
{
    uint32_t u;
    switch (bf16_nan(x, i, vec)) {
    case BF16_NAN_VECTOR: u = 0xffff0000u; break;
    case BF16_NAN_SCALAR: u = 0x7fc00000u; break;
    default: {
        float e = ld_f(x->a, i);   /* exact: a bfloat16 widens by a shift */
        memcpy(&u, &e, 4);
    }
    }
    if (r->dtype == NT_BF16) {
        uint16_t h = (uint16_t)(u >> 16);
        memcpy(r->data + (size_t)i * 2, &h, 2);
    } else {
        float v;
        memcpy(&v, &u, 4);
        st_f(r, i, v);
    }
}

/* ---- NaNs of float32 and float16 results ------------------------------------------------ */

/* A float32 NaN's bits in ATen 1.13 on x86 (AVX2) depend on the code that made it (t0220
 * checks each rule against torch):
 *   - sin, cos, tan (Sleef, vectorised to the last element): every NaN 0xffffffff;
 *     log, log2, log10: every NaN 0x7fc00000; ceil, floor, exp: the element's NaN, quieted;
 *   - pow of the general case (by a Scalar but 0, 1, +-0.5, -1, 2, 3, -2; of two tensors; of
 *     a Scalar base): in the vectorised loop (the first n - n % 16 elements) Sleef's, which
 *     is 0xffffffff from a NaN operand, 0x7fc00000 from numbers, 1 for 1 ^ y and x ^ 0 even
 *     of a signalling NaN; in the scalar loop glibc's (a NaN quieted, its sign flipped by an
 *     odd integer exponent; 1 ^ sNaN a NaN);
 *   - of two NaN operands, one of them quieted, as the processor gives its first operand's:
 *     add and sub give other's (alpha * other is computed first), div self's, mul other's
 *     in the vectorised loop and, in the rest (n % 16 elements, which GCC 12 vectorised
 *     again), self's or other's element by element as the compiled loop has it (below);
 *   - a NaN made from numbers (0/0, inf - inf, sqrt(-1)): the processor's, 0xffc00000.
 * A float16 result is computed in float from operands c10 widened (quieting a signalling
 * NaN) and made a half again by c10, which keeps a NaN's sign only: of two NaNs add and sub
 * give other's in the vectorised loop (32 elements at a time) and self's in the rest; mul,
 * div and pow self's (the base's for a Scalar base).  pow by 1 copies self, NaNs and all. */

/* ATen's float32 mul in its scalar loop of r = n % 16 elements: bit j set where element j
 * of that loop takes self's NaN over other's (tensor * tensor, and tensor * Scalar) */
static const uint16_t mul_self_first[2][16] = {
    { 0x0000, 0x0000, 0x0002, 0x0006, 0x000f, 0x000f, 0x000f, 0x004f,
      0x0000, 0x0000, 0x0000, 0x0400, 0x0f00, 0x0f00, 0x0f00, 0x4f00 },
    { 0x0000, 0x0000, 0x0002, 0x0006, 0x000e, 0x0000, 0x0020, 0x0060,
      0x00e0, 0x0000, 0x0200, 0x0600, 0x0e00, 0x0000, 0x2000, 0x6000 },
};

static float quiet(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u |= 0x00400000u;
    memcpy(&v, &u, 4);
    return v;
}

static float nan_bits(uint32_t u)
{
    float v;
    memcpy(&v, &u, 4);
    return v;
}

/* first's NaN if it is one, else second's, quieted (what x86 gives for first op second) */
static float first_nan(float first, float second)
{
    return quiet(first != first ? first : second);
}

/* whether ATen computes element i of n of pow by Sleef's powf (above; bfloat16's vectorised
 * loop takes 32 elements at a time): the general case, not its sqrt, x * x ... forms */
static bool sleef_pow(const nopi_tl_args *x, int64_t i, int64_t n)
{
    /* ATen picks sqrt, rsqrt and reciprocal by the Scalar itself, and x * x ... by the
     * exponent in the compute dtype (a float32 one stays a double; bfloat16's is rounded:
     * 3.004 is 3, and computes x * x * x) */
    double e = x->ed, ec = x->ct == NT_F32 ? e : x->bf;
    if (x->op != NOPI_TL_POW || (x->pow_special && (e == 0.5 || e == -0.5 || e == -1 ||
                                                    ec == 2 || ec == 3 || ec == -2)))
        return false;
    return x->ct == NT_F32 ? i < n - n % 16 : x->ct == NT_BF16 && i < n - n % 32;
}

/* ATen's alpha * other, for element i of n of an add or sub of two tensors by a NaN alpha
 * (sub's negated): alpha's NaN, or other's where other is one and the multiplication takes
 * it first: in float32's vectorised loop (16 elements at a time) and, in the rest, the
 * first two elements after its groups of four (as compiled; torch 1.13 on every size to
 * 32), in float16's vectorised loop. */
static float alpha_product_nan(const nopi_tl_args *x, int64_t i, int64_t n, float vb)
{
    int64_t vec = n - n % 16, rest = n % 16 - n % 4;
    bool other = vb != vb && (i < vec || (x->ct == NT_F32 && i - vec >= rest &&
                                          i - vec - rest < 2));
    return other ? vb : x->af;
}

/* The NaN ATen gives for element i of n, where an op in a float32 or float16 ct computed the
 * NaN v from operands va and vb (self and other, or the base and the exponent). */
static float aten_nan(const nopi_tl_args *x, int64_t i, int64_t n, float v, float va,
                      float vb)
{
    bool f32 = x->ct == NT_F32, anynan = va != va || vb != vb;
    if (x->op == NOPI_TL_ADD && x->b && x->af != x->af) {
        vb = alpha_product_nan(x, i, n, vb);   /* a NaN alpha's product is the operand (an */
        anynan = true;                         /* ATen tester's find: 0xffc00000 was given) */
    }
    switch (x->op) {
    case NOPI_TL_SIN: case NOPI_TL_COS: case NOPI_TL_TAN:
        return f32 ? nan_bits(0xffffffffu) : v;
    case NOPI_TL_LOG: case NOPI_TL_LOG2: case NOPI_TL_LOG10:
        return f32 ? nan_bits(0x7fc00000u) : v;
    case NOPI_TL_CEIL: case NOPI_TL_FLOOR: case NOPI_TL_EXP:
        return quiet(va);
    case NOPI_TL_ADD:
        if (anynan)
            return !f32 && i >= n - n % 32 ? first_nan(va, vb) : first_nan(vb, va);
        break;
    case NOPI_TL_MUL:
        if (anynan) {
            int64_t vec = n - n % 16;
            bool self_first = !f32 || (i >= vec && (mul_self_first[!x->b][n % 16] >> (i - vec) & 1));
            return self_first ? first_nan(va, vb) : first_nan(vb, va);
        }
        break;
    case NOPI_TL_DIV:
        if (anynan)
            return first_nan(va, vb);
        break;
    case NOPI_TL_POW:
        if (!sleef_pow(x, i, n))
            return v;   /* libm's (powf(-nan, 3) is +nan), or a product's */
        return nan_bits(anynan ? 0xffffffffu : 0x7fc00000u);
    default:   /* abs and clamp: the element's NaN as it is, or clamp's NaN fill */
        return v;
    }
    return nan_bits(0xffc00000u);
}

/* float32 add and sub of a Scalar: ATen's vectorised loop (16 elements at a time) fuses
 * self + alpha * other; its scalar loop (the rest), which GCC 12 vectorised again, fuses
 * too where its code is scalar, and where it is vectorised adds alpha * other rounded once
 * before the loop: element j of that loop of r = n % 16 does where bit j of [r] is set */
static const uint16_t add_s_rounded[16] = {
    0x0000, 0x0000, 0x0000, 0x0000, 0x0000, 0x001e, 0x001e, 0x001e,
    0x001e, 0x01fe, 0x01fe, 0x01fe, 0x01fe, 0x1ffe, 0x1ffe, 0x1ffe,
};

static bool f32_add_s_rounded(int64_t i, int64_t n)
{
    int64_t vec = n - n % 16;
    return i >= vec && (add_s_rounded[n % 16] >> (i - vec) & 1);
}

static bool has_nan(const float *p, int64_t n)
{
    bool any = false;
    for (int64_t i = 0; i < n; i++)
        any |= p[i] != p[i];
    return any;
}

/* float32 in, float32 out, one op: the loops the compiler can keep tight (add and mul of
 * NaNs choose between them as ATen does, in nopi_tl_run) */
static bool run_f32(const nopi_tl_args *x, nt_tensor *r)
{
    if (x->ct != NT_F32 || r->dtype != NT_F32 || x->a_scalar || x->a->dtype != NT_F32 ||
        (x->b && x->b->dtype != NT_F32))
        return false;
    int64_t n = r->numel;
    const float *a = (const float *)x->a->data;
    const float *b = x->b ? (const float *)x->b->data : NULL;
    float *o = (float *)r->data, s = x->bf, al = x->af;
    if (x->op != NOPI_TL_EXP &&
        (has_nan(a, n) || (b ? has_nan(b, n) : s != s) || al != al))
        return false;
    switch (x->op) {
    case NOPI_TL_ADD:
        if (b && al == 1)
            for (int64_t i = 0; i < n; i++)
                o[i] = a[i] + b[i];
        else if (b)
            for (int64_t i = 0; i < n; i++)
                o[i] = fmaf(al, b[i], a[i]);
        else {   /* a Scalar: as ATen's loops have it (nopi_tl_run) */
            const float p = al * s;
            for (int64_t i = 0; i < n; i++)
                o[i] = f32_add_s_rounded(i, n) ? a[i] + p : fmaf(al, s, a[i]);
        }
        return true;
    case NOPI_TL_MUL:
        if (b)
            for (int64_t i = 0; i < n; i++)
                o[i] = a[i] * b[i];
        else
            for (int64_t i = 0; i < n; i++)
                o[i] = a[i] * s;
        return true;
    case NOPI_TL_EXP:
        if (nopi_sleef_ok())
            sleef_map(NOPI_SLEEF_EXP, a, o, n);
        else
            for (int64_t i = 0; i < n; i++)
                o[i] = transcendental(NOPI_SLEEF_EXP, a[i]);
        return true;
    default:
        return false;
    }
}

void nopi_tl_run(const nopi_tl_args *xa, nt_tensor *r)
{
    if (run_f32(xa, r))
        return;
    if (xa->op == NOPI_TL_POW && xa->pow_special && xa->ed == 1 && !xa->pow_bool &&
        xa->ct == xa->a->dtype && r->dtype == xa->a->dtype) {   /* ATen copies self, NaNs too */
        if (r->data != xa->a->data)
            memmove(r->data, xa->a->data, (size_t)r->numel * r->itemsize);
        return;
    }
    nopi_tl_args xs = *xa, *x = &xs;
    int64_t n = r->numel;
    if (x->ones) {
        for (int64_t i = 0; i < n; i++)
            st_i(r, i, 1);
        return;
    }
    /* bfloat16 add and sub: ATen's vectorised loop, which takes the elements 32 at a time
     * (AVX2), computes self + alpha * other as one float multiply-add rounded once; its
     * scalar loop, which takes the rest, rounds alpha * other to bfloat16 first (below).
     * float16 has no vectorised loop there.  float32 add and sub of a Scalar: as
     * f32_add_s_rounded says (of two tensors, fused everywhere). */
    const int64_t fused = x->op == NOPI_TL_ADD && x->ct == NT_BF16 ? n - n % 32 : 0;
    const bool f32_add_s = x->op == NOPI_TL_ADD && x->ct == NT_F32 && !x->b;
    /* bfloat16 pow by -0.5 (ATen's rsqrt): its scalar loop rounds sqrt to bfloat16 before
     * dividing 1 by it (pow_scalar), its vectorised loop does both in float */
    const bool bf16_rsqrt = x->op == NOPI_TL_POW && x->pow_special && x->ct == NT_BF16 &&
                            x->ed == -0.5;
    const float alpha = x->af, other = x->bf;
    if (x->op == NOPI_TL_ADD && !x->b && nopi_dtype_is_float(x->ct)) {
        x->bf = nopi_round_to(x->ct, x->af * x->bf);   /* a Scalar other times alpha, once */
        x->af = 1;
    }
    const nt_tensor *a = x->a, *b = x->b;
    /* float32 pow by a Scalar exponent of the general case: ATen's vectorised loop, which
     * takes the elements 16 at a time (AVX2), raises to the exponent made a float, and only
     * its scalar loop, which takes the rest, to the double */
    double ed = x->ed;
    int64_t vec = 0;
    if (x->op == NOPI_TL_POW && x->pow_special && x->ct == NT_F32 && ed != 0 && ed != 1 &&
        ed != 0.5 && ed != -0.5 && ed != -1 && ed != 2 && ed != 3 && ed != -2)
        vec = n - n % 16;
    if (nopi_dtype_is_float(x->ct)) {
        const int64_t vec32 = n - n % 32;   /* bfloat16's vectorised loop, for NaNs */
        const int sleef = nopi_sleef_ok() ? sleef_of(x->op) : -1;
        group g = { -1, { 0 } };
        for (int64_t i = 0; i < n; i++) {
            if (vec)
                x->ed = i < vec ? (double)(float)ed : ed;
            float va = x->a_scalar ? x->bf : ld_f(a, i);
            float vb = b ? ld_f(b, i) : x->bf;
            va = in_ct(x->ct, va);   /* operands in ct first */
            vb = in_ct(x->ct, vb);
            bool fuse = i < fused || (f32_add_s && !f32_add_s_rounded(i, n));
            /* ATen's vectorised pow: Sleef's, of the exponent as that loop has it */
            bool vec_pow = sleef_pow(x, i, n) && nopi_sleef_ok();
            float e = !x->pow_special ? vb : x->ct == NT_F32 ? (float)x->ed : x->bf;
            float v = fuse ? fmaf(alpha, b ? vb : other, va)
                      : vec_pow ? nopi_sleef(NOPI_SLEEF_POW, va, e)
                      : sleef >= 0 ? in_group(&g, x, (nopi_sleef_fn)sleef, i, n)
                                   : fop(x, va, vb);
            v = nopi_round_to(x->ct, v);
            if (bf16_rsqrt && i < vec32)   /* ATen's vectorised rsqrt: one rounding */
                v = nopi_round_to(x->ct, 1 / sqrtf(va));
            if (v != v && (va == 1 || vb == 0) && sleef_pow(x, i, n))
                v = 1;   /* Sleef's 1 ^ y and x ^ 0, of a signalling NaN too (libm: NaN) */
            if (v == v)
                st_f(r, i, v);
            else if (x->ct == NT_BF16 || r->dtype == NT_BF16)
                st_bf16_nan(x, r, i, vec32);
            else
                st_f(r, i, aten_nan(x, i, n, v, va, vb));
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t va = x->a_scalar ? x->bi : nopi_wrap(x->ct, ld_i(a, i));
        int64_t vb = b ? nopi_wrap(x->ct, ld_i(b, i)) : x->bi;
        st_i(r, i, iop(x, va, vb));
    }
}
