/*
 * cxxcheck.c - the checks the C++ layer (share/neuronop/include/torch) asks the runtime for.
 *
 * torch::Tensor's accessors are typed (`accessor<float, 2>()`, `tensor_to_tcm<float>`) where
 * the C API's are not, and torch checks what the types claim: the element type against the
 * tensor's dtype, and N against its dimensions.  The header calls nt__cxx_check when it
 * makes an accessor (or, for TCM copies, when a copy's T differs from the tensor's dtype);
 * a broken rule stops the core with a message that names the C++ call the user wrote, so a
 * C++ kernel is told in its own terms what a C kernel is told in C's.
 */
#include <stdbool.h>
#include <string.h>

#include "api_impl.h"
#include "tensorlib.h"

/* The C++ element type of each dtype, as torch/torch.h spells it. */
static const char *cxx_type(int64_t d)
{
    static const char *const names[] = {
        [NT_F32] = "float", [NT_BF16] = "c10::BFloat16", [NT_F16] = "c10::Half",
        [NT_I32] = "int32_t", [NT_I8] = "int8_t", [NT_I64] = "int64_t", [NT_I16] = "int16_t",
        [NT_U8] = "uint8_t",
    };
    return d >= 0 && d <= NT_U8 ? names[d] : "?";
}

/* The call a kind of check is made for, as the user wrote it, in two parts around its
 * element type: "tcm_accessor().tensor_to_tcm<" T ">()". */
static const char *const call_head[] = {
    [NT__CXX_ACCESSOR] = "accessor<", [NT__CXX_READ_STREAM] = "read_stream_accessor<",
    [NT__CXX_WRITE_STREAM] = "write_stream_accessor<",
    [NT__CXX_TO_TCM] = "tcm_accessor().tensor_to_tcm<",
    [NT__CXX_FROM_TCM] = "tcm_accessor().tcm_to_tensor<",
};

/* Nothing is formatted unless a rule is broken: this runs on the kernel's small stack on
 * every accessor a C++ kernel makes, and a formatter needs kilobytes of it. */
void nopi_api_cxx_check(int what, const nt_tensor *t, int64_t a, int64_t b)
{
    NOPI_API(c, NOP_COST_OTHER);
    char shape[96];
    if (what == NT__CXX_SIZES) {
        if (!t)
            nopi_core_fail(c, "IntArrayRef: index %lld is out of range for a list of %lld "
                           "sizes", (long long)a, (long long)b);
        nopi_check_tensor(c, t, "sizes()");
        if (a >= 0 && a < t->ndim)
            return;
        nopi_shape_str(t, shape, sizeof shape);
        nopi_core_fail(c, "sizes()[%lld] of a tensor of %d dimension%s (%s): the index must be "
                       "below dim()", (long long)a, t->ndim, t->ndim == 1 ? "" : "s", shape);
    }
    if (what == NT__CXX_DIM) {   /* nt_size's report, with the int64 dim the kernel gave */
        nopi_check_tensor(c, t, "size");
        nopi_core_fail(c, "size(dim=%lld): the tensor has %d dimension%s", (long long)a,
                       t->ndim, t->ndim == 1 ? "" : "s");
    }
    if (what == NT__CXX_SLICE)   /* c10's ArrayRef::slice check, in its words */
        nopi_core_fail(c, "IntArrayRef::slice(%lld, %lld): ArrayRef: invalid slice, N = %lld; "
                       "M = %lld; size = %lld", (long long)a, (long long)(b >> 4), (long long)a,
                       (long long)(b >> 4), (long long)(b & 15));
    if (what == NT__CXX_SCALAR) {   /* Scalar::toInt(), to<T>() ...: c10's checked_convert */
        nt_scalar s = nt_scalar_i(a);
        if (!(b & 256)) {
            double f;
            memcpy(&f, &a, sizeof f);
            s = nt_scalar_f(f);
        }
        int64_t i;
        float fv;
        nt_dtype d = (nt_dtype)(b & 255);
        if ((b & 255) > NT_U8 || nopi_scalar_checked(s, d, &i, &fv))
            return;
        char v[64];
        nopi_scalar_str(s, v, sizeof v);
        nopi_core_fail(c, "torch::Scalar(%s) to %s: value cannot be converted to type %s "
                       "without overflow", v, nopi_torch_cpp_name(d), nopi_torch_cpp_name(d));
    }
    if (what == NT__CXX_BOOL_FULL)
        nopi_core_fail(c, "torch::full() of a bool without a dtype makes a bool tensor, which "
                       "the device does not have: give the dtype, as in torch::full(size, "
                       "value, torch::kFloat)");
    if (what == NT__CXX_BOOL_SCALAR && a == 0)   /* c10's words, without the full stop */
        nopi_core_fail(c, "torch boolean negative, the `-` operator, is not supported");
    if (what == NT__CXX_BOOL_SCALAR)   /* c10 fails an internal assertion: said plainly */
        nopi_core_fail(c, "torch::Scalar::log() of a bool: c10 has no log of a bool (torch "
                       "fails an internal assertion); convert it first, as in "
                       "torch::Scalar(s.toDouble()).log()");
    if (what == NT__CXX_UNKNOWN_TYPE)   /* c10's complex and quantized ones, or none */
        nopi_core_fail(c, "c10::elementSize() of ScalarType %lld, which the device's torch "
                       "subset does not have (neuronop-cxx(3) lists its types)", (long long)a);
    if (what < NT__CXX_ACCESSOR || what > NT__CXX_FROM_TCM || b < 0 || b > NT_U8)
        nopi_core_fail(c, "nt__cxx_check(%d): not a check torch/torch.h makes", what);
    static const char *const call[] = {
        [NT__CXX_ACCESSOR] = "accessor<T, N>()", [NT__CXX_READ_STREAM] = "read_stream_accessor<T>()",
        [NT__CXX_WRITE_STREAM] = "write_stream_accessor<T>()",
        [NT__CXX_TO_TCM] = "tensor_to_tcm<T>()", [NT__CXX_FROM_TCM] = "tcm_to_tensor<T>()",
    };
    nopi_check_tensor(c, t, call[what]);
    bool accessor = what == NT__CXX_ACCESSOR;
    if (t->dtype != b) {
        char hint[160];
        nopi_input_hint(c, t, (nt_dtype)b, hint, sizeof hint);
        if (accessor)
            nopi_core_fail(c, "accessor<%s, %lld>() on %s %s tensor: the element type must be "
                           "the tensor's; use accessor<%s, %lld>()%s", cxx_type(b),
                           (long long)a, nopi_dtype_article(t->dtype), nopi_dtype_name(t->dtype),
                           cxx_type(t->dtype), (long long)a, hint);
        nopi_core_fail(c, "%s%s>() on %s %s tensor: the element type must be the tensor's; "
                       "use %s%s>()%s", call_head[what], cxx_type(b),
                       nopi_dtype_article(t->dtype), nopi_dtype_name(t->dtype), call_head[what],
                       cxx_type(t->dtype), hint);
    }
    if (accessor && a != t->ndim) {
        nopi_shape_str(t, shape, sizeof shape);
        nopi_core_fail(c, "accessor<%s, %lld>() on a tensor of %d dimension%s (%s): N must be "
                       "the tensor's number of dimensions; use accessor<%s, %d>()", cxx_type(b),
                       (long long)a, t->ndim, t->ndim == 1 ? "" : "s", shape, cxx_type(b),
                       t->ndim);
    }
}
