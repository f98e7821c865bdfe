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

/* libc's stdio first: neuronop.h, and then torch/detail/printf.h, make printf the device's
 * printf, and a later <cstdio> must not undo that, so it is included here, before the
 * macro exists. */
#include <stdio.h>
#include <cstdio>
#include <stddef.h>
#include <stdint.h>
/* What libtorch 1.13's <torch/torch.h> brings with it, so that a kernel that uses
 * std::max, std::vector, std::numeric_limits, memcpy or int64_t without including their
 * headers compiles here as it does there: the standard headers that header includes, as
 * g++ -M lists them (tests/fixtures/cxx/stdnames/probe.sh compares the names both make
 * usable).  Less <iostream>, whose static std::ios_base::Init object would be a static
 * initialiser in every source (neuronop-cxx(3)): no std::cout or std::cerr; and less what
 * is not standard C++ and comes only with some builds of it: <unistd.h> (glog's) and
 * <x86intrin.h> (the profiler's, on x86).
 * Not the C++ <math.h> either, which libtorch's does not include: <cmath> makes the C
 * functions global but leaves their float overloads in std, so an unqualified exp(x) of a
 * float computes in double, as against libtorch.  Using what needs the C++ runtime
 * (std::vector's operator new, say) is a build error in a kernel; shape and reference
 * sources are host code and may use it all. */
#include <assert.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <clocale>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cwchar>
#include <cwctype>
#include <deque>
#include <exception>
#include <forward_list>
#include <functional>
#include <initializer_list>
#include <iomanip>
#include <ios>
#include <iosfwd>
#include <istream>
#include <iterator>
#include <limits>
#include <list>
#include <locale>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <ostream>
#include <queue>
#include <ratio>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <stack>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
/* c10's string_view.h includes it where the library has it (libc++ 7's is an #error) */
#if defined(__has_include) && !defined(_LIBCPP_VERSION)
#if __has_include(<experimental/string_view>)
#include <experimental/string_view>
#endif
#endif

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
