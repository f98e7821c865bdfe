/*
 * torch/detail/printf.h - printf in C++ kernels: the device's printf (nt_printf), taking a
 * c10::BFloat16 or c10::Half as the float it stands for.  Included by <torch/torch.h>.
 *
 * `printf("%f\n", out_acc[i])` is what a kernel author writes to debug; with a 16-bit float
 * element a C variadic call would pass its two bytes as raw bits: a wrong number printed,
 * silently.  So in C++, printf is a variadic template that turns each c10::BFloat16 or
 * c10::Half into its value before the call; every other argument passes unchanged.
 */
#ifndef NEURONOP_TORCH_DETAIL_PRINTF_H
#define NEURONOP_TORCH_DETAIL_PRINTF_H

namespace torch {
namespace detail {

template <class T> struct printf_arg {
    template <class U> static U &&get(U &&v) noexcept { return static_cast<U &&>(v); }
};
template <> struct printf_arg<c10::BFloat16> {
    static double get(c10::BFloat16 v) noexcept { return static_cast<float>(v); }
};
template <> struct printf_arg<c10::Half> {
    static double get(c10::Half v) noexcept { return static_cast<float>(v); }
};

} // namespace detail
} // namespace torch

template <class... A> inline int nt__cxx_printf(const char *fmt, A &&...args) noexcept
{
    return nt_printf(fmt, torch::detail::printf_arg<typename std::decay<A>::type>::get(
                              static_cast<A &&>(args))...);
}

#undef printf
#define printf nt__cxx_printf
namespace std {
using ::nt__cxx_printf;   /* std::printf too */
}

#endif /* NEURONOP_TORCH_DETAIL_PRINTF_H */
