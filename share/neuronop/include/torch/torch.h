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
#include <neuron/neuron-utils.hpp>

namespace at {
using torch::Tensor;
using torch::Scalar;
using torch::IntArrayRef;
using torch::ScalarType;
using torch::TensorOptions;
} // namespace at

#endif /* NEURONOP_TORCH_TORCH_H */
