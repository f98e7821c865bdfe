/*
 * tensorlib.h - what the tensor library's files share (internal): ATen's dtype rules
 * (tlpromote.c) and the element kernels (tlkernel.c) behind the entry points of tensorlib.c.
 *
 * The library computes what ATen (PyTorch 1.12, the device's port) computes on a CPU: each op
 * in its common dtype (torch.result_type of its operands), integers in their own width with
 * two's-complement wraparound, float32 in float, bfloat16 and half in float rounded to their
 * width after each operation, and the result cast to the output's dtype.
 */
#ifndef NEURONOP_TENSORLIB_H
#define NEURONOP_TENSORLIB_H

#include "api_impl.h"

/* ---- tlpromote.c: dtypes as ATen sees them ------------------------------------------- */

/* An operand of type promotion: a tensor (its dtype; a 0-dim tensor ranks below one with
 * dimensions) or a Scalar (a wrapped number: an int64 or a double). */
typedef struct nopi_operand {
    const nt_tensor *t;     /* NULL: the Scalar s */
    nt_scalar s;
} nopi_operand;

/* torch.result_type of n operands (n >= 1). */
nt_dtype nopi_result_type(const nopi_operand *ops, int n);
/* c10::promoteTypes of two dtypes. */
nt_dtype nopi_promote(nt_dtype a, nt_dtype b);
/* c10::canCast: false only from a floating dtype to an integral one. */
bool nopi_can_cast(nt_dtype from, nt_dtype to);
/* c10's names: "Float", "Int", ... (ScalarType) and "float", "int", "at::Half", ...
 * (the C++ type, as c10's overflow message has it). */
const char *nopi_torch_type_name(nt_dtype d);
const char *nopi_torch_cpp_name(nt_dtype d);

/* A Scalar converted to dtype d as c10's checked Scalar::to<T>() converts it: false when the
 * value overflows d (NaN into an integer included); the value in *i (integral d, wrapped to
 * d's width) or *f (floating d, rounded to d). */
bool nopi_scalar_checked(nt_scalar s, nt_dtype d, int64_t *i, float *f);
/* The same conversion without the check (a Scalar operand cast as a 0-dim tensor is). */
void nopi_scalar_cast(nt_scalar s, nt_dtype d, int64_t *i, float *f);

/* Integer v wrapped to integral dtype d's width (sign- or zero-extended back to int64). */
int64_t nopi_wrap(nt_dtype d, int64_t v);
/* Float v rounded to floating dtype d (bf16 and f16: to nearest even; f32: itself). */
float nopi_round_to(nt_dtype d, float v);

/* A Scalar for a message, as the user wrote it: "2", "2.5", "-inf", "nan". */
void nopi_scalar_str(nt_scalar s, char *buf, size_t size);

/* ---- tlkernel.c: element kernels ------------------------------------------------------- */

typedef enum nopi_tl_op {
    NOPI_TL_ABS, NOPI_TL_CEIL, NOPI_TL_FLOOR, NOPI_TL_SIN, NOPI_TL_COS, NOPI_TL_TAN,
    NOPI_TL_LOG, NOPI_TL_LOG2, NOPI_TL_LOG10, NOPI_TL_EXP, NOPI_TL_NOT,
    NOPI_TL_ADD, NOPI_TL_MUL, NOPI_TL_DIV, NOPI_TL_AND, NOPI_TL_OR, NOPI_TL_POW, NOPI_TL_CLAMP
} nopi_tl_op;

/* One element-wise op, resolved: operands a (and b: a tensor, or the scalar in bi/bf),
 * computed in dtype ct and stored into r (any dtype; r may alias a or b).  For ADD, alpha is
 * in ai/af (SUB is ADD with -alpha); for CLAMP the bounds are b (min) and c (max); for POW
 * with a scalar base, a_scalar is set and the base is in bi/bf, the exponent tensor in b. */
typedef struct nopi_tl_args {
    nopi_tl_op op;
    nt_dtype ct;
    const nt_tensor *a, *b;
    bool a_scalar;
    int64_t bi, ci, ai;     /* scalar operands in an integral ct */
    float bf, cf, af;       /* ... in a floating ct (already rounded to ct) */
    double ed;              /* POW by a scalar exponent: the Scalar's value */
    bool pow_special;       /* POW by a scalar exponent: ATen's sqrt/rsqrt/x*x forms */
    bool pow_bool;          /* ... a bool one: not its fill for 0 and copy for 1 */
    bool clamp_nan;         /* CLAMP with a NaN bound: NaN everywhere */
    bool ones;              /* POW of the Scalar base 1: ones everywhere, as ATen fills them */
} nopi_tl_args;

/* Computes r = op(args) for r->numel elements. */
void nopi_tl_run(const nopi_tl_args *x, nt_tensor *r);
/* dst = src, of the same shape, each element cast as ATen's copy_ casts it (C++'s
 * static_cast, float to integer as x86 converts it). */
void nopi_tl_copy_cast(nt_tensor *dst, const nt_tensor *src);

#endif /* NEURONOP_TENSORLIB_H */
