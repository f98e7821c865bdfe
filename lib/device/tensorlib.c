/*
 * tensorlib.c - the device's tensor library: element-wise ops in the torch subset of
 * gpsimd.md, each in an allocating form and an _out form.  No broadcasting: shapes must
 * match.  Results keep self's dtype, except that the transcendental ops (sin, exp, log, ...)
 * and division give float32 for integral inputs, as torch does.  Bitwise ops take integral
 * tensors only; a scalar operand is cast to the tensor's dtype.
 */
#include <math.h>
#include <stdio.h>

#include "api_impl.h"
#include "outtrack.h"

typedef enum kind { FLOAT_RESULT, SAME_DTYPE, INTEGRAL_ONLY } kind;

/* Fails the core unless a and b have one shape (the library never broadcasts). */
static void require_same_shape(nopi_core *c, const nt_tensor *a, const nt_tensor *b,
                               const char *fn, const char *aname, const char *bname)
{
    if (nopi_same_shape(a, b))
        return;
    char x[96], y[96];
    nopi_shape_str(a, x, sizeof x);
    nopi_shape_str(b, y, sizeof y);
    nopi_core_fail(c, "%s: %s is %s but %s is %s; shapes must match (no broadcasting)", fn,
                   aname, x, bname, y);
}

/* The tensor an op writes: out (checked) or a new one shaped like self. */
static nt_tensor *result(nopi_core *c, nt_tensor *out, const nt_tensor *self, kind k,
                         const char *fn)
{
    nopi_check_data(c, self, fn);
    if (self == c->run->dst)
        nopi_out_read(c, 0, self->numel, fn);
    if (k == INTEGRAL_ONLY && nopi_dtype_is_float(self->dtype))
        nopi_core_fail(c, "%s on a %s tensor: bitwise ops take integral tensors only", fn,
                       nopi_dtype_name(self->dtype));
    if (!out) {
        nt_dtype d = k == FLOAT_RESULT && !nopi_dtype_is_float(self->dtype) ? NT_F32
                                                                            : self->dtype;
        return nopi_new_tensor(c, d, self->ndim, self->sizes, fn);
    }
    nopi_check_writable(c, out, fn);
    require_same_shape(c, out, self, fn, "out", "self");
    if (k == INTEGRAL_ONLY && nopi_dtype_is_float(out->dtype))
        nopi_core_fail(c, "%s: out is %s; bitwise ops write integral tensors only", fn,
                       nopi_dtype_name(out->dtype));
    if (out == c->run->dst)
        nopi_out_write(c, 0, out->numel);
    return out;
}

static void same_shape(nopi_core *c, const nt_tensor *a, const nt_tensor *b, const char *fn)
{
    nopi_check_data(c, b, fn);
    if (b == c->run->dst)
        nopi_out_read(c, 0, b->numel, fn);
    require_same_shape(c, a, b, fn, "self", "other");
}

static void count(nopi_core *c, const nt_tensor *t)
{
    c->n.tensorlib_calls++;
    c->n.tensorlib_elems += t->numel;
}

/* ---- unary ------------------------------------------------------------------------------ */

static double f_abs(double x) { return fabs(x); }

static nt_tensor *unary(nt_tensor *out, const nt_tensor *self, double (*f)(double), kind k,
                        const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    nt_tensor *r = result(c, out, self, k, fn);
    for (int64_t i = 0; i < self->numel; i++)
        nopi_set_f(r, i, f(nopi_get_f(self, i)));
    count(c, r);
    return r;
}

static nt_tensor *bitnot(nt_tensor *out, const nt_tensor *self, const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    nt_tensor *r = result(c, out, self, INTEGRAL_ONLY, fn);
    for (int64_t i = 0; i < self->numel; i++)
        nopi_set_i(r, i, ~nopi_get_i(self, i));
    count(c, r);
    return r;
}

#define UNARY(n, f, k) \
    nt_tensor *nopi_api_##n(const nt_tensor *self) { return unary(NULL, self, f, k, "nt_" #n); } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self) \
    { \
        return unary(out, self, f, k, "nt_" #n "_out"); \
    }
UNARY(abs, f_abs, SAME_DTYPE)
UNARY(ceil, ceil, SAME_DTYPE)
UNARY(floor, floor, SAME_DTYPE)
UNARY(sin, sin, FLOAT_RESULT)
UNARY(cos, cos, FLOAT_RESULT)
UNARY(tan, tan, FLOAT_RESULT)
UNARY(log, log, FLOAT_RESULT)
UNARY(log2, log2, FLOAT_RESULT)
UNARY(log10, log10, FLOAT_RESULT)
UNARY(exp, exp, FLOAT_RESULT)
nt_tensor *nopi_api_bitwise_not(const nt_tensor *self) { return bitnot(NULL, self, "nt_bitwise_not"); }
nt_tensor *nopi_api_bitwise_not_out(nt_tensor *out, const nt_tensor *self)
{
    return bitnot(out, self, "nt_bitwise_not_out");
}

/* ---- binary: tensor (other != NULL) or scalar operand ----------------------------------- */

typedef enum binop { ADD, SUB, MUL, DIV, AND, OR, POW, POW_S } binop;

static double scalar_f(nt_scalar s) { return s.is_int ? (double)s.i : s.f; }

static nt_tensor *binary(nt_tensor *out, const nt_tensor *self, const nt_tensor *other,
                         nt_scalar s, double alpha, binop op, const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    kind k = op == AND || op == OR ? INTEGRAL_ONLY : op == DIV || op == POW ? FLOAT_RESULT
                                                                            : SAME_DTYPE;
    nt_tensor *r = result(c, out, self, k, fn);
    if (other)
        same_shape(c, self, other, fn);
    for (int64_t i = 0; i < self->numel; i++) {
        if (op == AND || op == OR) {
            int64_t a = nopi_get_i(self, i);
            int64_t b = other ? nopi_get_i(other, i) : nt_scalar_to_i(s);
            nopi_set_i(r, i, op == AND ? (a & b) : (a | b));
            continue;
        }
        double a = nopi_get_f(self, i), b = other ? nopi_get_f(other, i) : scalar_f(s);
        double v;
        switch (op) {
        case ADD: v = a + alpha * b; break;
        case SUB: v = a - alpha * b; break;
        case MUL: v = a * b; break;
        case DIV: v = a / b; break;
        case POW: v = pow(a, b); break;
        default: v = pow(b, a); break;   /* POW_S: scalar ^ tensor, self is the exponent */
        }
        /* integral results of integral inputs stay exact within 2^53 */
        nopi_set_f(r, i, v);
    }
    count(c, r);
    return r;
}

#define BINARY(n, op) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n); \
        return binary(NULL, self, other, nt_scalar_i(0), 1, op, "nt_" #n); \
    } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n "_out"); \
        return binary(out, self, other, nt_scalar_i(0), 1, op, "nt_" #n "_out"); \
    } \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other) \
    { \
        return binary(NULL, self, NULL, other, 1, op, "nt_" #n "_s"); \
    } \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other) \
    { \
        return binary(out, self, NULL, other, 1, op, "nt_" #n "_s_out"); \
    }
BINARY(mul, MUL)
BINARY(div, DIV)
BINARY(bitwise_and, AND)
BINARY(bitwise_or, OR)

#define ALPHA(n, op) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other, nt_scalar alpha) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n); \
        return binary(NULL, self, other, nt_scalar_i(0), scalar_f(alpha), op, "nt_" #n); \
    } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other, \
                                  nt_scalar alpha) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n "_out"); \
        return binary(out, self, other, nt_scalar_i(0), scalar_f(alpha), op, "nt_" #n "_out"); \
    } \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other, nt_scalar alpha) \
    { \
        return binary(NULL, self, NULL, other, scalar_f(alpha), op, "nt_" #n "_s"); \
    } \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other, \
                                    nt_scalar alpha) \
    { \
        return binary(out, self, NULL, other, scalar_f(alpha), op, "nt_" #n "_s_out"); \
    }
ALPHA(add, ADD)
ALPHA(sub, SUB)

nt_tensor *nopi_api_pow(const nt_tensor *self, nt_scalar e)
{
    return binary(NULL, self, NULL, e, 1, POW, "nt_pow");
}
nt_tensor *nopi_api_pow_out(nt_tensor *out, const nt_tensor *self, nt_scalar e)
{
    return binary(out, self, NULL, e, 1, POW, "nt_pow_out");
}
nt_tensor *nopi_api_pow_t(const nt_tensor *self, const nt_tensor *e)
{
    nopi_check_data(nopi_self(), e, "nt_pow_t");
    return binary(NULL, self, e, nt_scalar_i(0), 1, POW, "nt_pow_t");
}
nt_tensor *nopi_api_pow_t_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *e)
{
    nopi_check_data(nopi_self(), e, "nt_pow_t_out");
    return binary(out, self, e, nt_scalar_i(0), 1, POW, "nt_pow_t_out");
}
nt_tensor *nopi_api_pow_s(nt_scalar self, const nt_tensor *e)
{
    return binary(NULL, e, NULL, self, 1, POW_S, "nt_pow_s");
}
nt_tensor *nopi_api_pow_s_out(nt_tensor *out, nt_scalar self, const nt_tensor *e)
{
    return binary(out, e, NULL, self, 1, POW_S, "nt_pow_s_out");
}

static nt_tensor *clamp(nt_tensor *out, const nt_tensor *self, nt_scalar lo, nt_scalar hi,
                        const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    nt_tensor *r = result(c, out, self, SAME_DTYPE, fn);
    double l = scalar_f(lo), h = scalar_f(hi);
    for (int64_t i = 0; i < self->numel; i++) {
        double v = nopi_get_f(self, i);
        nopi_set_f(r, i, v < l ? l : v > h ? h : v);
    }
    count(c, r);
    return r;
}

nt_tensor *nopi_api_clamp(const nt_tensor *self, nt_scalar lo, nt_scalar hi)
{
    return clamp(NULL, self, lo, hi, "nt_clamp");
}
nt_tensor *nopi_api_clamp_out(nt_tensor *out, const nt_tensor *self, nt_scalar lo, nt_scalar hi)
{
    return clamp(out, self, lo, hi, "nt_clamp_out");
}
