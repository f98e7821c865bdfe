/*
 * torch/detail/std.h - the standard headers libtorch 1.13's <torch/torch.h> brings with it,
 * so that a kernel that uses std::max, std::vector, std::numeric_limits, memcpy or int64_t
 * without including their headers compiles here as it does there: those that header
 * includes, as g++ -M lists them (tests/fixtures/cxx/stdnames/probe.sh compares the names
 * both make usable).
 *
 * Less <iostream>, whose static std::ios_base::Init object would be a static initialiser in
 * every source (neuronop-cxx(3)): no std::cout or std::cerr; and less what is not standard
 * C++ and comes only with some builds of it: <unistd.h> (glog's) and <x86intrin.h> (the
 * profiler's, on x86).  Not the C++ <math.h> either, which libtorch's does not include:
 * <cmath> makes the C functions global but leaves their float overloads in std, so an
 * unqualified exp(x) of a float computes in double, as against libtorch (t0130's
 * libm_unqualified).  Using what needs the C++ runtime (std::vector's operator new, say) is
 * a build error in a kernel; shape and reference sources are host code and may use it all.
 *
 * Only standard headers, and nothing that depends on a macro a source defines: neuronop
 * build gives this file to every C++ source before its first line (-include), precompiled
 * once per compiler and flags (neuronop-build(1), "Precompiled header"), where parsing it
 * would cost every unit about 0.7 s of CPU.  <assert.h> and <cassert> have no include guard, so a
 * source that defines NDEBUG before including <torch/torch.h> still gets its assert.
 */
#ifndef NEURONOP_TORCH_DETAIL_STD_H
#define NEURONOP_TORCH_DETAIL_STD_H

/* libc's stdio first: neuronop.h, and then torch/detail/printf.h, make printf the device's
 * printf, and a later <cstdio> must not undo that, so it is included here, before the
 * macro exists. */
#include <stdio.h>
#include <cstdio>
#include <stddef.h>
#include <stdint.h>
#include <assert.h>
#include <float.h>
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

#endif /* NEURONOP_TORCH_DETAIL_STD_H */
