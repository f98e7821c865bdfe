/*
 * k.cpp - the case table of tests/diff/diff.py through the C++ overloads of torch::: the same
 * rows as k.c, each op called as a C++ kernel calls it (tensors and Scalars moved with the C
 * API's TCM calls, which this file leaves to k.c's layout).
 */
#include <string.h>
#include <torch/torch.h>
#include "table.h"

static int elem_size(nt_dtype d)
{
    return d == NT_I64 ? 8 : d == NT_F32 || d == NT_I32 ? 4 : d == NT_I8 || d == NT_U8 ? 1 : 2;
}

/* the table's dtypes are the C API's nt_dtype (or -1: none); torch's ScalarType numbers them
 * as c10 does */
static torch::ScalarType scalar_type(int64_t d)
{
    static_assert(NT_U8 == 7, "nt_dtype has eight dtypes");
    const torch::ScalarType of[] = { torch::kFloat, torch::kBFloat16, torch::kHalf, torch::kInt,
                                     torch::kChar, torch::kLong, torch::kShort, torch::kByte };
    return d >= 0 && d <= NT_U8 ? of[d] : torch::kFloat;
}

static torch::Tensor make(nt_tcm_accessor *data, int64_t at, int64_t n, nt_dtype d)
{
    torch::Tensor t = torch::empty({ n }, scalar_type(d));
    int64_t *v = static_cast<int64_t *>(tcm_malloc(MAXN * 8));
    unsigned char *raw = static_cast<unsigned char *>(tcm_malloc(MAXN * 8));
    nt_tensor_to_tcm(data, v, at, n);
    for (int64_t i = 0; i < n; i++)
        memcpy(raw + i * elem_size(d), &v[i], elem_size(d));
    nt_tcm_accessor acc = nt_tcm_accessor_of(t.nt());
    nt_tcm_to_tensor(&acc, raw, 0, n);
    tcm_free(raw);
    tcm_free(v);
    return t;
}

static torch::Scalar scalar(int64_t kind, int64_t bits)
{
    if (kind == S_INT)
        return torch::Scalar(bits);
    double f;
    memcpy(&f, &bits, 8);
    return torch::Scalar(f);
}

#define UN(fn) return out ? torch::fn##_out(*out, a) : torch::fn(a)
static torch::Tensor unary(int op, torch::Tensor *out, torch::Tensor &a)
{
    switch (op) {
    case ABS: UN(abs);
    case CEIL: UN(ceil);
    case FLOOR: UN(floor);
    case SIN: UN(sin);
    case COS: UN(cos);
    case TAN: UN(tan);
    case LOG: UN(log);
    case LOG2: UN(log2);
    case LOG10: UN(log10);
    case EXP: UN(exp);
    default: return out ? torch::bitwise_not_out(*out, a) : torch::bitwise_not(a);
    }
}

#define TWO(fn) \
    return b ? (out ? torch::fn##_out(*out, a, *b) : torch::fn(a, *b)) \
             : (out ? torch::fn##_out(*out, a, s1) : torch::fn(a, s1))
#define ALPHA(fn) \
    return b ? (out ? torch::fn##_out(*out, a, *b, s2) : torch::fn(a, *b, s2)) \
             : (out ? torch::fn##_out(*out, a, s1, s2) : torch::fn(a, s1, s2))
static torch::Tensor binary(int op, torch::Tensor *out, const torch::Tensor &a,
                            const torch::Tensor *b, const torch::Scalar &s1,
                            const torch::Scalar &s2)
{
    switch (op) {
    case ADD: ALPHA(add);
    case SUB: ALPHA(sub);
    case MUL: TWO(mul);
    case DIV: TWO(div);
    case AND: TWO(bitwise_and);
    case OR: TWO(bitwise_or);
    case POW: return out ? torch::pow_out(*out, a, s1) : torch::pow(a, s1);
    case POW_T: return out ? torch::pow_out(*out, a, *b) : torch::pow(a, *b);
    case POW_S: return out ? torch::pow_out(*out, s1, a) : torch::pow(s1, a);
    default: return out ? torch::clamp_out(*out, a, s1, s2) : torch::clamp(a, s1, s2);
    }
}

torch::Tensor cases(const torch::Tensor &spec, const torch::Tensor &data)
{
    nt_tcm_accessor sa = nt_tcm_accessor_of(spec.nt()), da = nt_tcm_accessor_of(data.nt());
    torch::Tensor dst = get_dst_tensor();
    nt_tcm_accessor oa = nt_tcm_accessor_of(dst.nt());
    int64_t *row = static_cast<int64_t *>(tcm_malloc((2 + MAXN) * 8));
    unsigned char *raw = static_cast<unsigned char *>(tcm_malloc(MAXN * 8));
    int64_t *f = static_cast<int64_t *>(tcm_malloc(NF * 8));
    for (int64_t c = 0; c < spec.size(0); c++) {
        nt_tensor_to_tcm(&sa, f, c * NF, NF);
        int op = static_cast<int>(f[F_OP]), form = static_cast<int>(f[F_FORM]);
        int64_t n = f[F_N];
        torch::Scalar s1 = scalar(f[F_S1_KIND], f[F_S1]), s2 = scalar(f[F_S2_KIND], f[F_S2]);
        torch::ScalarType outd = scalar_type(f[F_OUT]);
        torch::Tensor r;
        if (op == FULL) {
            r = torch::full({ n }, s1, outd);
        } else {
            torch::Tensor a = make(&da, f[F_SELF_AT], n, static_cast<nt_dtype>(f[F_SELF]));
            torch::Tensor b = f[F_OTHER] >= 0
                ? make(&da, f[F_OTHER_AT], n, static_cast<nt_dtype>(f[F_OTHER])) : torch::Tensor();
            torch::Tensor o = form == OUT_NEW ? torch::empty({ n }, outd)
                            : form == OUT_SELF ? a : form == OUT_OTHER ? b : torch::Tensor();
            torch::Tensor *out = form == ALLOC ? nullptr : &o;
            if (op == FILL)
                r = a.fill_(s1);
            else if (op <= NOT)
                r = unary(op, out, a);
            else
                r = binary(op, out, a, b.defined() ? &b : nullptr, s1, s2);
        }
        nt_dtype d = nt_dtype_of(r.nt());
        memset(row, 0, (2 + MAXN) * 8);
        row[0] = d;
        row[1] = r.numel();
        nt_tcm_accessor ra = nt_tcm_accessor_of(r.nt());
        nt_tensor_to_tcm(&ra, raw, 0, r.numel());
        for (int64_t i = 0; i < r.numel(); i++)
            memcpy(&row[2 + i], raw + i * elem_size(d), elem_size(d));
        nt_tcm_to_tensor(&oa, row, c * (2 + MAXN), 2 + MAXN);
    }
    tcm_free(f);
    tcm_free(raw);
    tcm_free(row);
    return dst;
}
