/*
 * torch/torch.h - the device's port of the torch C++ API, as neuronop runs it.
 *
 * C++ kernel, shape and reference sources include this one header, as on the device:
 *
 *     torch::Tensor relu_forward(const torch::Tensor &t_in) {
 *         torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
 *         auto in = t_in.accessor<float, 2>();    // read-only: t_in is const
 *         auto out = t_out.accessor<float, 2>();
 *         ...
 *     }
 *
 * It has what the device's torch subset has - Tensor and Scalar, eight dtypes, the factories
 * and element-wise operations, standard, streaming and TCM accessors, get_dst_tensor,
 * get_cpu_id/get_cpu_count, torch::neuron::tcm_malloc/tcm_free, printf - and nothing more:
 * anything else torch has is a compile error that says it is not in the device's subset.
 * Reference, with what neuronop checks for each rule: neuronop-cxx(3).
 *
 * It is a thin layer over the C API of <neuronop.h> (header-only, inline, no exceptions, no
 * operator new, no static objects: the device's C++ runtime has none of them), so every device
 * rule is checked, counted and priced exactly as for a C kernel.  Sources are compiled as
 * C++14, the device's dialect.
 */
#ifndef NEURONOP_TORCH_TORCH_H
#define NEURONOP_TORCH_TORCH_H

#if !defined(__cplusplus) || __cplusplus < 201402L
#error "torch/torch.h is C++14: compile C++ sources (.cpp, .cc, .cxx) with neuronop build"
#endif
#if defined(NEURONOP_H) && !defined(NT__TORCH_API)
#error "include <torch/torch.h> before <neuronop.h> (or only torch/torch.h) in C++ sources"
#endif

/* The standard headers torch's header brings with it (the file says which and why).
 * neuronop build also gives it to every C++ source before its first line, precompiled, so
 * that parsing them costs a unit little (neuronop-build(1), "Precompiled header"); included
 * here as well, for a compiler run without neuronop. */
#include <torch/detail/std.h>
/* assert as the source's NDEBUG has it here: a source that defines NDEBUG and then includes
 * this header has no assertions, as against libtorch, though the standard headers were
 * given to it before its first line (<assert.h> is made to be included again). */
#include <assert.h>

#define NT__TORCH_API 1
#include <neuronop.h>

#include <torch/detail/types.h>
#include <torch/detail/accessors.h>
#include <torch/detail/tensor.h>
#include <torch/detail/ops.h>
#include <torch/detail/printf.h>
#include <torch/detail/unported.h>
#include <neuron/neuron-utils.hpp>

/* The namespaces nest as libtorch's do: at:: has every name of c10:: (c10/macros/Macros.h's
 * using namespace c10) and ATen's types and functions, and torch:: has every name of at::
 * (torch/types.h's using namespace at).  So at::kFloat, c10::kInt, at::Half, at::BFloat16,
 * torch::Half, torch::toString, at::zeros and at::TensorAccessor name what they name in
 * libtorch; the device's own names (get_dst_tensor, the stream and TCM accessors ...) stay
 * in torch::, where the device has them. */
namespace at {
using namespace c10;
using torch::Tensor;
using torch::TensorAccessor;
using torch::empty;
using torch::zeros;
using torch::ones;
using torch::full;
using torch::eye;
using torch::abs; using torch::abs_out; using torch::ceil; using torch::ceil_out;
using torch::floor; using torch::floor_out; using torch::sin; using torch::sin_out;
using torch::cos; using torch::cos_out; using torch::tan; using torch::tan_out;
using torch::log; using torch::log_out; using torch::log2; using torch::log2_out;
using torch::log10; using torch::log10_out; using torch::exp; using torch::exp_out;
using torch::pow; using torch::pow_out; using torch::clamp; using torch::clamp_out;
using torch::add; using torch::add_out; using torch::sub; using torch::sub_out;
using torch::mul; using torch::mul_out; using torch::div; using torch::div_out;
using torch::bitwise_and; using torch::bitwise_and_out; using torch::bitwise_or;
using torch::bitwise_or_out; using torch::bitwise_not; using torch::bitwise_not_out;
/* ATen's name of c10::promoteTypes (torch::promote_types) */
inline ScalarType promote_types(ScalarType a, ScalarType b) noexcept
{
    return promoteTypes(a, b);
}
} // namespace at
namespace torch {
using namespace at;
} // namespace torch

#endif /* NEURONOP_TORCH_TORCH_H */
