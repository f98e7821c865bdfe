/*
 * tensorlib.c - the device's tensor library: the entry points of the element-wise ops in the
 * torch subset of gpsimd.md (each in an allocating form and an _out form) and of full and
 * fill_.  Each call checks the device's own rules (no broadcasting, an _out of self's shape,
 * bitwise ops on integral tensors only), works out what ATen would (the result dtype by type
 * promotion, the dtype it computes in, its Scalars converted to that dtype), refuses what
 * ATen refuses with ATen's reason, and leaves the elements to tlkernel.c.  Each runs on the
 * host thread's stack (nopi_runtime_call): the kernel's STACK_SIZE pays for its entry only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "outtrack.h"
#include "tensorlib.h"

/* How an op's result dtype relates to its operands'. */
typedef enum kind {
    PROMOTE,        /* result_type of the operands, an _out any dtype it casts to */
    FLOAT_RESULT,   /* ... with integral promoted to float32 (division, sin, exp, ...) */
    SAME_DTYPE,     /* result_type, and an _out of exactly that dtype (abs, clamp, pow) */
    INTEGRAL_ONLY,  /* bitwise ops: promoted, integral tensors only */
    INTEGRAL_SAME,  /* bitwise_not: both */
    ANY_OUT         /* pow of a base of 1: ATen fills an _out of any dtype with ones */
} kind;

static bool integral_only(kind k) { return k == INTEGRAL_ONLY || k == INTEGRAL_SAME; }

/* One call, as the messages name it: "nt_add(int32 tensor, int32 tensor, 2.5)".  Its text is
 * written only when the call is refused: formatting costs stack, and kernels have little. */
typedef struct call {
    const char *fn;
    char fmt[8];                /* the operands in order: 't' a tensor, 's' a Scalar */
    const nt_tensor *ts[3];
    const nt_scalar *ss[3];     /* the caller's, alive for the call */
    int nt, ns;
    int dtype;                  /* nt_full's dtype, or -1 */
} call;

static void arg_t(call *k, const nt_tensor *t)
{
    k->fmt[k->nt + k->ns] = 't';
    k->ts[k->nt++] = t;
}

static void arg_s(call *k, const nt_scalar *s)
{
    k->fmt[k->nt + k->ns] = 's';
    k->ss[k->ns++] = s;
}

/* "NT_I8" for messages (the C++ layer's names replace these) */
static void dtype_const(nt_dtype d, char *buf, size_t size)
{
    const char *sfx = nopi_dtype_suffix(d);
    size_t n = (size_t)snprintf(buf, size, "NT_");
    for (; *sfx && n + 1 < size; sfx++)
        buf[n++] = (char)(*sfx >= 'a' && *sfx <= 'z' ? *sfx - 'a' + 'A' : *sfx);
    buf[n] = '\0';
}

static void call_text(const call *k, char *buf, size_t size)
{
    size_t o = (size_t)snprintf(buf, size, "%s(%s", k->fn, k->dtype >= 0 ? "..., " : "");
    int t = 0, sc = 0;
    for (int i = 0; i < k->nt + k->ns && o < size; i++) {
        char arg[64];
        if (k->fmt[i] == 't')
            snprintf(arg, sizeof arg, "%s tensor", nopi_dtype_name(k->ts[t++]->dtype));
        else
            nopi_scalar_str(*k->ss[sc++], arg, sizeof arg);
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", arg);
    }
    if (k->dtype >= 0 && o < size) {
        char dt[16];
        dtype_const((nt_dtype)k->dtype, dt, sizeof dt);
        o += (size_t)snprintf(buf + o, size - o, ", %s", dt);
    }
    if (o < size)
        snprintf(buf + o, size - o, ")");
}

/* ATen's refusal: the call and torch's reason (its wording, without the final full stop). */
/* (never inlined: its buffers stay off the stack of every call that is not refused) */
static _Noreturn __attribute__((noinline, cold)) void NOPI_PRINTF(3, 4) refuse(nopi_core *c, const call *k, const char *fmt, ...)
{
    char text[256], why[256];
    call_text(k, text, sizeof text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    nopi_core_fail(c, "%s: %s", text, why);
}

/* Fails the core unless a and b have one shape (the library never broadcasts). */
static void shape_mismatch(nopi_core *c, const nt_tensor *a, const nt_tensor *b, const char *fn,
                           const char *aname, const char *bname);
static void require_same_shape(nopi_core *c, const nt_tensor *a, const nt_tensor *b,
                               const char *fn, const char *aname, const char *bname)
{
    if (!nopi_same_shape(a, b))
        shape_mismatch(c, a, b, fn, aname, bname);
}

/* (never inlined: its buffers stay off the stack of the calls that pass) */
static __attribute__((noinline, cold)) void shape_mismatch(nopi_core *c, const nt_tensor *a,
                                                           const nt_tensor *b, const char *fn,
                                                           const char *aname, const char *bname)
{
    char x[96], y[96];
    nopi_shape_str(a, x, sizeof x);
    nopi_shape_str(b, y, sizeof y);
    nopi_core_fail(c, "%s: %s is %s but %s is %s; shapes must match (no broadcasting)", fn,
                   aname, x, bname, y);
}

/* The library reads and writes tensors in device memory, as a standard accessor does, which
 * gpsimd.md forbids in multicore kernels (only TCM accessors there). */
static void touches_data(nopi_core *c, const char *fn)
{
    nopi_single_core_only(c, fn, "the tensor library");
}

/* An input tensor of the op: data to read, the op's shape, bitwise ops integral only. */
static void input(nopi_core *c, const nt_tensor *t, const nt_tensor *shape, kind k,
                  const char *fn, const char *name)
{
    nopi_check_data(c, t, fn);
    touches_data(c, fn);
    if (t == c->run->dst)
        nopi_out_read(c, 0, t->numel, fn);
    if (shape && t != shape)
        require_same_shape(c, shape, t, fn, "self", name);
    if (integral_only(k) && nopi_dtype_is_float(t->dtype))
        nopi_core_fail(c, "%s on a %s tensor: bitwise ops take integral tensors only", fn,
                       nopi_dtype_name(t->dtype));
}

/* Refuses out unless ATen would cast the result dtype rd to it. */
static void out_cast(nopi_core *c, const call *k, const nt_tensor *out, nt_dtype rd)
{
    if (out && !nopi_can_cast(rd, out->dtype))
        refuse(c, k, "result type %s can't be cast to the desired output type %s",
               nopi_torch_type_name(rd), nopi_torch_type_name(out->dtype));
}

/* The tensor an op writes: out (checked: shape, and that ATen would cast the result dtype rd
 * to it) or a new one of dtype rd shaped like self. */
static nt_tensor *result(nopi_core *c, const call *k, nt_tensor *out, const nt_tensor *self,
                         nt_dtype rd, kind kd)
{
    if (!out)
        return nopi_new_tensor(c, rd, self->ndim, self->sizes, k->fn);
    nopi_check_writable(c, out, k->fn);
    require_same_shape(c, out, self, k->fn, "out", "self");
    if (integral_only(kd) && nopi_dtype_is_float(out->dtype))
        nopi_core_fail(c, "%s: out is %s; bitwise ops write integral tensors only", k->fn,
                       nopi_dtype_name(out->dtype));
    if ((kd == SAME_DTYPE || kd == INTEGRAL_SAME) && out->dtype != rd)
        refuse(c, k, "Found dtype %s but expected %s", nopi_torch_type_name(out->dtype),
               nopi_torch_type_name(rd));
    if (kd != ANY_OUT)
        out_cast(c, k, out, rd);
    if (out == c->run->dst)
        nopi_out_write(c, 0, out->numel);
    return out;
}

/* One call's arguments, carried to the host thread's stack: the library runs there
 * (nopi_runtime_call), so that its frames (the checks, the element loops, Sleef's vectors:
 * over a kilobyte) are not charged to the kernel's STACK_SIZE. */
typedef struct op_args {
    nt_tensor *out;
    const nt_tensor *self, *other;
    nt_scalar s, s2;                /* the Scalar operand, or clamp's bounds */
    const nt_scalar *alpha;
    int op;                         /* nopi_tl_op for unary, binop for binary */
    kind kd;
    bool swap;
    const char *fn;
    int ndim;                       /* nt_full's shape and dtype */
    const int64_t *sizes;
    nt_dtype dtype;
    nt_tensor *r;                   /* what the call returns */
} op_args;

/* A Scalar into the compute dtype, checked as c10's Scalar::to<T>() checks it. */
static void checked(nopi_core *c, const call *k, nt_scalar s, nt_dtype ct, int64_t *i, float *f)
{
    if (!nopi_scalar_checked(s, ct, i, f))
        refuse(c, k, "value cannot be converted to type %s without overflow",
               nopi_torch_cpp_name(ct));
}

/* ---- unary ------------------------------------------------------------------------------ */

static void unary_here(nopi_core *c, void *p)
{
    const op_args *a = p;
    nt_tensor *out = a->out;
    const nt_tensor *self = a->self;
    nopi_tl_op op = (nopi_tl_op)a->op;
    kind kd = a->kd;
    const char *fn = a->fn;
    call k = { .fn = fn, .dtype = -1 };
    input(c, self, NULL, kd, fn, "self");
    if (out)
        arg_t(&k, out);
    arg_t(&k, self);
    nt_dtype ct = kd == FLOAT_RESULT && !nopi_dtype_is_float(self->dtype) ? NT_F32 : self->dtype;
    nt_tensor *r = result(c, &k, out, self, ct, kd);
    if (ct == NT_F16 && op != NOPI_TL_ABS) {   /* ATen's CPU kernels have no half for these */
        char name[32];
        snprintf(name, sizeof name, "%s", fn + 3);   /* "nt_sin_out" -> "sin" */
        char *o = strstr(name, "_out");
        if (o)
            *o = '\0';
        refuse(c, &k, "\"%s_vml_cpu\" not implemented for 'Half'", name);
    }
    nopi_tl_args x = { .op = op, .ct = ct, .a = self };
    nopi_tl_run(&x, r);
    nopi_count_tensorlib(c, r);
    ((op_args *)p)->r = r;
}

static nt_tensor *unary(nt_tensor *out, const nt_tensor *self, nopi_tl_op op, kind kd,
                        const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    op_args a = { .out = out, .self = self, .op = (int)op, .kd = kd, .fn = fn };
    nopi_runtime_call(c, unary_here, &a);
    return a.r;
}

#define UNARY(n, op, kd) \
    nt_tensor *nopi_api_##n(const nt_tensor *self) { return unary(NULL, self, op, kd, "nt_" #n); } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self) \
    { \
        return unary(out, self, op, kd, "nt_" #n "_out"); \
    }
UNARY(abs, NOPI_TL_ABS, SAME_DTYPE)   /* the one op here ATen's CPU kernels have for half */
UNARY(ceil, NOPI_TL_CEIL, SAME_DTYPE)
UNARY(floor, NOPI_TL_FLOOR, SAME_DTYPE)
UNARY(sin, NOPI_TL_SIN, FLOAT_RESULT)
UNARY(cos, NOPI_TL_COS, FLOAT_RESULT)
UNARY(tan, NOPI_TL_TAN, FLOAT_RESULT)
UNARY(log, NOPI_TL_LOG, FLOAT_RESULT)
UNARY(log2, NOPI_TL_LOG2, FLOAT_RESULT)
UNARY(log10, NOPI_TL_LOG10, FLOAT_RESULT)
UNARY(exp, NOPI_TL_EXP, FLOAT_RESULT)
UNARY(bitwise_not, NOPI_TL_NOT, INTEGRAL_SAME)

/* ---- binary: self op other, other a tensor or a Scalar ---------------------------------- */

typedef enum binop { ADD, SUB, MUL, DIV, AND, OR, POW } binop;

static const nopi_tl_op tl_of[] = {
    [ADD] = NOPI_TL_ADD, [SUB] = NOPI_TL_ADD, [MUL] = NOPI_TL_MUL, [DIV] = NOPI_TL_DIV,
    [AND] = NOPI_TL_AND, [OR] = NOPI_TL_OR, [POW] = NOPI_TL_POW,
};

/* self op other (other NULL: the Scalar s), with alpha for add and sub; swap: the Scalar is
 * the base of pow and self the exponent tensor. */
static void binary_here(nopi_core *c, void *p)
{
    const op_args *in = p;
    nt_tensor *out = in->out;
    const nt_tensor *self = in->self, *other = in->other;
    nt_scalar s = in->s;
    const nt_scalar *alpha = in->alpha;
    binop op = (binop)in->op;
    bool swap = in->swap;
    const char *fn = in->fn;
    kind kd = op == AND || op == OR ? INTEGRAL_ONLY : op == DIV ? FLOAT_RESULT : PROMOTE;
    call k = { .fn = fn, .dtype = -1 };
    input(c, self, NULL, kd, fn, swap ? "exponent" : "self");
    if (other)
        input(c, other, self, kd, fn, op == POW ? "exponent" : "other");
    if (out)   /* the call, as written */
        arg_t(&k, out);
    if (swap)
        arg_s(&k, &s);
    arg_t(&k, self);
    if (other)
        arg_t(&k, other);
    else if (!swap)
        arg_s(&k, &s);
    if (alpha)
        arg_s(&k, alpha);

    nopi_operand ops[2] = { { self, s }, { other, s } };
    nt_dtype rd = nopi_result_type(ops, 2), ct = rd;
    bool integral = !nopi_dtype_is_float(rd);
    if (kd == FLOAT_RESULT && integral)
        rd = ct = NT_F32;
    if (kd == INTEGRAL_ONLY && !integral) {   /* an integral tensor with a float Scalar */
        out_cast(c, &k, out, rd);   /* ATen casts the out before it runs */
        refuse(c, &k, "\"%s_cpu\" not implemented for '%s'", op == AND ? "bitwise_and"
               : "bitwise_or", nopi_torch_type_name(rd));
    }

    /* add_out, sub_out, mul_out and div_out of a Scalar (ATen's Scalar_out forms, which 1.13
     * makes of the functional op and a copy into out): into an out the Tensor forms refuse,
     * the result in its own dtype, then copied as copy_ casts it (an idioms tester's find:
     * refused here, computed there); into any other, computed there as now (a reviewer's:
     * the copy lost bfloat16's NaN bits, which the loops below follow) */
    bool copy_out = out && !other && !swap && !nopi_can_cast(rd, out->dtype) &&
                    (op == ADD || op == SUB || op == MUL || op == DIV);
    nopi_tl_args x = { .op = tl_of[op], .ct = ct, .a = self, .b = other, .ai = 1, .af = 1 };
    /* a C++ bool Scalar (no device tensor is bool): ATen's sub_check, then its alpha_check */
    if (op == SUB && !other && s.is_bool)
        refuse(c, &k, "Subtraction, the `-` operator, with a bool tensor is not supported. If "
               "you are trying to invert a mask, use the `~` or `logical_not()` operator instead");
    if (alpha && !copy_out)   /* ATen's iterator, which casts the out, is built before its */
        out_cast(c, &k, out, rd);   /* alpha_check (an ATen tester's find) */
    if (alpha && alpha->is_bool)
        refuse(c, &k, "Boolean alpha only supported for Boolean results");
    if (alpha) {
        if (!nopi_dtype_is_float(ct) && !alpha->is_int)
            refuse(c, &k, "For integral input tensors, argument alpha must not be a floating "
                   "point number");
        nt_scalar a = *alpha;
        if (op == SUB) {   /* sub is add with -alpha */
            if (a.is_int)
                a.i = (int64_t)(0 - (uint64_t)a.i);
            else
                a.f = -a.f;
        }
        checked(c, &k, a, ct, &x.ai, &x.af);
    }
    if (op == POW && !other && !swap) {   /* tensor ^ Scalar: ATen's special exponents */
        if (!nopi_dtype_is_float(self->dtype) && s.is_int && s.i < 0)
            refuse(c, &k, "Integers to negative integer powers are not allowed");
        if (out && out->dtype != rd)   /* (before the exponent's conversion, as ATen) */
            refuse(c, &k, "Found dtype %s but expected %s", nopi_torch_type_name(out->dtype),
                   nopi_torch_type_name(rd));
        x.pow_special = true;
        x.pow_bool = s.is_bool;   /* c10: true equals no 1.0, false no 0.0 */
        x.ed = nt_scalar_to_f(s);
        if (ct == NT_F32)
            x.bf = (float)x.ed;
        else
            checked(c, &k, s, ct, &x.bi, &x.bf);
    } else if (!other) {
        nopi_scalar_cast(s, ct, &x.bi, &x.bf);   /* an operand: cast as a 0-dim tensor is */
    }
    if (swap) {   /* Scalar ^ tensor: the base is the scalar, the exponent self */
        x.a_scalar = true;
        x.b = self;
        /* ATen fills ones for a base that equals 1.0 (not true), whatever the exponent:
         * 1 ^ a signalling NaN too, which libm makes a NaN */
        x.ones = !s.is_bool && (s.is_int ? s.i == 1 : s.f == 1.0);
    }
    nt_tensor *r = result(c, &k, out, self, rd, x.ones || copy_out ? ANY_OUT
                                                : x.pow_special ? SAME_DTYPE : kd);
    if (copy_out) {
        nt_tensor *whole = nopi_tensor_alloc(rd, self->ndim, self->sizes, false);
        if (!whole)
            nopi_core_fail(c, "%s: out of memory", k.fn);
        nopi_tl_run(&x, whole);
        nopi_tl_copy_cast(r, whole);
        nopi_tensor_free(whole);
    } else {
        nopi_tl_run(&x, r);
    }
    nopi_count_tensorlib(c, r);
    ((op_args *)p)->r = r;
}

static nt_tensor *binary(nt_tensor *out, const nt_tensor *self, const nt_tensor *other,
                         nt_scalar s, const nt_scalar *alpha, binop op, bool swap,
                         const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    op_args a = { .out = out, .self = self, .other = other, .s = s, .alpha = alpha,
                  .op = (int)op, .swap = swap, .fn = fn };
    nopi_runtime_call(c, binary_here, &a);
    return a.r;
}

#define BINARY(n, op) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n); \
        return binary(NULL, self, other, nt_scalar_i(0), NULL, op, false, "nt_" #n); \
    } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n "_out"); \
        return binary(out, self, other, nt_scalar_i(0), NULL, op, false, "nt_" #n "_out"); \
    } \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other) \
    { \
        return binary(NULL, self, NULL, other, NULL, op, false, "nt_" #n "_s"); \
    } \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other) \
    { \
        return binary(out, self, NULL, other, NULL, op, false, "nt_" #n "_s_out"); \
    }
BINARY(mul, MUL)
BINARY(div, DIV)
BINARY(bitwise_and, AND)
BINARY(bitwise_or, OR)

#define ALPHA(n, op) \
    nt_tensor *nopi_api_##n(const nt_tensor *self, const nt_tensor *other, nt_scalar alpha) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n); \
        return binary(NULL, self, other, nt_scalar_i(0), &alpha, op, false, "nt_" #n); \
    } \
    nt_tensor *nopi_api_##n##_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *other, \
                                  nt_scalar alpha) \
    { \
        nopi_check_data(nopi_self(), other, "nt_" #n "_out"); \
        return binary(out, self, other, nt_scalar_i(0), &alpha, op, false, "nt_" #n "_out"); \
    } \
    nt_tensor *nopi_api_##n##_s(const nt_tensor *self, nt_scalar other, nt_scalar alpha) \
    { \
        return binary(NULL, self, NULL, other, &alpha, op, false, "nt_" #n "_s"); \
    } \
    nt_tensor *nopi_api_##n##_s_out(nt_tensor *out, const nt_tensor *self, nt_scalar other, \
                                    nt_scalar alpha) \
    { \
        return binary(out, self, NULL, other, &alpha, op, false, "nt_" #n "_s_out"); \
    }
ALPHA(add, ADD)
ALPHA(sub, SUB)

nt_tensor *nopi_api_pow(const nt_tensor *self, nt_scalar e)
{
    return binary(NULL, self, NULL, e, NULL, POW, false, "nt_pow");
}
nt_tensor *nopi_api_pow_out(nt_tensor *out, const nt_tensor *self, nt_scalar e)
{
    return binary(out, self, NULL, e, NULL, POW, false, "nt_pow_out");
}
nt_tensor *nopi_api_pow_t(const nt_tensor *self, const nt_tensor *e)
{
    nopi_check_data(nopi_self(), e, "nt_pow_t");
    return binary(NULL, self, e, nt_scalar_i(0), NULL, POW, false, "nt_pow_t");
}
nt_tensor *nopi_api_pow_t_out(nt_tensor *out, const nt_tensor *self, const nt_tensor *e)
{
    nopi_check_data(nopi_self(), e, "nt_pow_t_out");
    return binary(out, self, e, nt_scalar_i(0), NULL, POW, false, "nt_pow_t_out");
}
nt_tensor *nopi_api_pow_s(nt_scalar self, const nt_tensor *e)
{
    return binary(NULL, e, NULL, self, NULL, POW, true, "nt_pow_s");
}
nt_tensor *nopi_api_pow_s_out(nt_tensor *out, nt_scalar self, const nt_tensor *e)
{
    return binary(out, e, NULL, self, NULL, POW, true, "nt_pow_s_out");
}

/* ---- clamp ------------------------------------------------------------------------------ */

static void clamp_here(nopi_core *c, void *p)
{
    const op_args *a = p;
    nt_tensor *out = a->out;
    const nt_tensor *self = a->self;
    nt_scalar lo = a->s, hi = a->s2;
    const char *fn = a->fn;
    call k = { .fn = fn, .dtype = -1 };
    input(c, self, NULL, PROMOTE, fn, "self");
    if (out)
        arg_t(&k, out);
    arg_t(&k, self);
    arg_s(&k, &lo);
    arg_s(&k, &hi);
    nopi_operand ops[3] = { { self, lo }, { NULL, lo }, { NULL, hi } };
    nt_dtype ct = nopi_result_type(ops, 3);
    nopi_tl_args x = { .op = NOPI_TL_CLAMP, .ct = ct, .a = self };
    /* ATen: a NaN bound makes every element NaN, before converting the bounds */
    x.clamp_nan = (!lo.is_int && isnan(lo.f)) || (!hi.is_int && isnan(hi.f));
    if (out == self && !nopi_can_cast(ct, out->dtype)) {   /* ATen's clamp_ says it so */
        static const char *const meta[] = {
            [NT_I32] = "int", [NT_I8] = "signed char", [NT_I64] = "long int",
            [NT_I16] = "short int", [NT_U8] = "unsigned char",
        };
        nopi_check_writable(c, out, fn);
        refuse(c, &k, "result type %s can't be cast to the desired output type %s",
               nopi_torch_type_name(ct), meta[out->dtype]);
    }
    nt_tensor *r = result(c, &k, out, self, ct, SAME_DTYPE);
    if (!x.clamp_nan) {
        if (ct == NT_F16)   /* ATen's CPU clamp has no half (its NaN fill is no clamp) */
            refuse(c, &k, "\"clamp_scalar_cpu\" not implemented for 'Half'");
        checked(c, &k, lo, ct, &x.bi, &x.bf);
        checked(c, &k, hi, ct, &x.ci, &x.cf);
    }
    nopi_tl_run(&x, r);
    nopi_count_tensorlib(c, r);
    ((op_args *)p)->r = r;
}

static nt_tensor *clamp(nt_tensor *out, const nt_tensor *self, nt_scalar lo, nt_scalar hi,
                        const char *fn)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    op_args a = { .out = out, .self = self, .s = lo, .s2 = hi, .fn = fn };
    nopi_runtime_call(c, clamp_here, &a);
    return a.r;
}

nt_tensor *nopi_api_clamp(const nt_tensor *self, nt_scalar lo, nt_scalar hi)
{
    return clamp(NULL, self, lo, hi, "nt_clamp");
}
nt_tensor *nopi_api_clamp_out(nt_tensor *out, const nt_tensor *self, nt_scalar lo, nt_scalar hi)
{
    return clamp(out, self, lo, hi, "nt_clamp_out");
}

/* ---- full and fill_: the value must fit the dtype --------------------------------------- */

/* ATen's refusal of a fill value the dtype cannot hold (apart: its call text costs stack) */
static __attribute__((noinline, cold)) void refuse_value(nopi_core *c, const char *fn,
                                                         const nt_tensor *t, nt_scalar v)
{
    call k = { .fn = fn, .dtype = t->shape_only || strcmp(fn, "nt_full") == 0 ? (int)t->dtype
                                                                              : -1 };
    if (k.dtype < 0)
        arg_t(&k, t);
    arg_s(&k, &v);
    refuse(c, &k, "value cannot be converted to type %s without overflow",
           nopi_torch_cpp_name(t->dtype));
}

/* Fills t with v (counting it as written when it is the op's output), refused as ATen
 * refuses a value the dtype cannot hold. */
static nt_tensor *fill(nopi_core *c, nt_tensor *t, nt_scalar v, const char *fn)
{
    int64_t i;
    float f;
    if (!nopi_scalar_checked(v, t->dtype, &i, &f))
        refuse_value(c, fn, t, v);
    if (t->shape_only)
        return t;
    touches_data(c, fn);
    if (t == c->run->dst)
        nopi_out_write(c, 0, t->numel);
    bool fl = nopi_dtype_is_float(t->dtype);
    if (t->dtype == NT_BF16 && f != f)
        f = NAN;   /* c10's BFloat16 of any NaN (-nan too) is 0x7fc0 */
    for (int64_t e = 0; e < t->numel; e++) {
        if (fl)
            nopi_set_f(t, e, f);   /* f is already t's value: it stays exact */
        else
            nopi_set_i(t, e, i);
    }
    nopi_count_tensorlib(c, t);
    return t;
}

static void full_here(nopi_core *c, void *p)
{
    op_args *a = p;
    a->r = fill(c, nopi_new_tensor(c, a->dtype, a->ndim, a->sizes, "nt_full"), a->s, "nt_full");
}

nt_tensor *nopi_api_full(int ndim, const int64_t *sizes, nt_scalar v, nt_dtype d)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    op_args a = { .s = v, .ndim = ndim, .sizes = sizes, .dtype = d };
    nopi_runtime_call(c, full_here, &a);
    return a.r;
}

static void fill_here(nopi_core *c, void *p)
{
    op_args *a = p;
    nopi_check_writable(c, a->out, "nt_fill_");
    a->r = fill(c, a->out, a->s, "nt_fill_");
}

nt_tensor *nopi_api_fill_(nt_tensor *t, nt_scalar v)
{
    NOPI_API(c, NOP_COST_TENSORLIB);
    op_args a = { .out = t, .s = v };
    nopi_runtime_call(c, fill_here, &a);
    return a.r;
}
