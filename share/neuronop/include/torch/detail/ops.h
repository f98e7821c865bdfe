/*
 * torch/detail/ops.h - the device's tensor library: the factories (empty, zeros, ones, full,
 * eye) and the element-wise operations, each with the form that allocates its result and
 * the `_out` form that writes into a given tensor.  Included by <torch/torch.h>.
 *
 * Names, overloads and parameter const-ness are those of the device's API reference (the
 * unary operations take `Tensor &`, as it lists them).  No broadcasting: shapes must match,
 * and the runtime checks it as it does for the C API's nt_exp and friends, which these call.
 */
#ifndef NEURONOP_TORCH_DETAIL_OPS_H
#define NEURONOP_TORCH_DETAIL_OPS_H

namespace c10 {
/* c10's empty optional, only for what the device's calls refuse (a missing clamp bound) */
struct nullopt_t {
    constexpr explicit nullopt_t(int) noexcept {}
};
constexpr nullopt_t nullopt{0};
} // namespace c10

#define NT__TORCH_CLAMP_ONE                                                                   \
    "torch::clamp with one bound is not in the device's torch subset: its clamp takes "       \
    "both, clamp(t, min, max) (for a float tensor and min alone, max "                        \
    "std::numeric_limits<float>::infinity())"
#define NT__TORCH_CLAMP_NONE                                                                  \
    "a missing bound of torch::clamp ({} or c10::nullopt, which torch takes as no bound) is " \
    "not in the device's torch subset: its clamp takes both bounds, as Scalars"

namespace torch {

/* ---- factories: each tensor is the device's for the rest of the op -------------------- */

inline Tensor empty(IntArrayRef size, TensorOptions options) noexcept
{
    return Tensor(nt_empty(size.nt_ndim(), size.data(), detail::to_nt(options.dtype())));
}
inline Tensor zeros(IntArrayRef size, TensorOptions options) noexcept
{
    return Tensor(nt_zeros(size.nt_ndim(), size.data(), detail::to_nt(options.dtype())));
}
inline Tensor ones(IntArrayRef size, TensorOptions options) noexcept
{
    return Tensor(nt_ones(size.nt_ndim(), size.data(), detail::to_nt(options.dtype())));
}
/* without a dtype, full's is its fill value's: int64 for a whole number, bool for a bool
 * (ATen), which the device does not have */
inline Tensor full(IntArrayRef size, const Scalar &fill_value, TensorOptions options) noexcept
{
    if (!options.has_dtype() && fill_value.isBoolean())
        nt__cxx_check(NT__CXX_BOOL_FULL, nullptr, 0, 0);
    ScalarType d = options.has_dtype() || !fill_value.isIntegral() ? options.dtype() : kLong;
    return Tensor(nt_full(size.nt_ndim(), size.data(), fill_value.nt(), detail::to_nt(d)));
}
inline Tensor eye(int64_t n, int64_t m, TensorOptions options) noexcept
{
    return Tensor(nt_eye(n, m, detail::to_nt(options.dtype())));
}
/* n x n, as ATen's eye(n) is eye(n, n) */
inline Tensor eye(int64_t n, TensorOptions options) noexcept
{
    return Tensor(nt_eye(n, n, detail::to_nt(options.dtype())));
}

/* ---- element-wise operations ---------------------------------------------------------- */

#define NT__TORCH_UNARY(name)                                                                 \
    inline Tensor &name##_out(Tensor &result, Tensor &self) noexcept                          \
    {                                                                                         \
        nt_##name##_out(result.nt(), self.nt());                                              \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor name(Tensor &self) noexcept { return Tensor(nt_##name(self.nt())); }
NT__TORCH_UNARY(abs) NT__TORCH_UNARY(ceil) NT__TORCH_UNARY(floor) NT__TORCH_UNARY(sin)
NT__TORCH_UNARY(cos) NT__TORCH_UNARY(tan) NT__TORCH_UNARY(log) NT__TORCH_UNARY(log2)
NT__TORCH_UNARY(log10) NT__TORCH_UNARY(exp)
#undef NT__TORCH_UNARY

inline Tensor &pow_out(Tensor &result, const Tensor &self, const Scalar &exponent) noexcept
{
    nt_pow_out(result.nt(), self.nt(), exponent.nt());
    return result;
}
inline Tensor &pow_out(Tensor &result, const Scalar &self, const Tensor &exponent) noexcept
{
    nt_pow_s_out(result.nt(), self.nt(), exponent.nt());
    return result;
}
inline Tensor &pow_out(Tensor &result, const Tensor &self, const Tensor &exponent) noexcept
{
    nt_pow_t_out(result.nt(), self.nt(), exponent.nt());
    return result;
}
inline Tensor pow(const Tensor &self, const Scalar &exponent) noexcept
{
    return Tensor(nt_pow(self.nt(), exponent.nt()));
}
inline Tensor pow(const Scalar &self, const Tensor &exponent) noexcept
{
    return Tensor(nt_pow_s(self.nt(), exponent.nt()));
}
inline Tensor pow(const Tensor &self, const Tensor &exponent) noexcept
{
    return Tensor(nt_pow_t(self.nt(), exponent.nt()));
}

/* The device's clamp takes both bounds, as Scalars (torch's takes c10::optional<Scalar>s, or
 * tensors).  A bound is a ClampBound so that what torch takes as no bound - {} and
 * c10::nullopt - is refused, not taken as the Scalar 0, and tensor bounds are refused by
 * name; a single bound by the overloads after these. */
namespace detail {
struct ClampBound {
    Scalar s;
    template <class T, typename std::enable_if<std::is_convertible<const T &, Scalar>::value,
                                               int>::type = 0>
    ClampBound(const T &v) noexcept : s(v) {}
    template <class D = void> ClampBound() noexcept : s()
    {
        static_assert(never<D>::value, NT__TORCH_CLAMP_NONE);
    }
    template <class D = void> ClampBound(c10::nullopt_t) noexcept : s()
    {
        static_assert(never<D>::value, NT__TORCH_CLAMP_NONE);
    }
    template <class D = void> ClampBound(const Tensor &) noexcept : s()
    {
        static_assert(never<D>::value, "torch::clamp with tensor bounds is not in the "
                      "device's torch subset: its bounds are Scalars");
    }
};
} // namespace detail

inline Tensor &clamp_out(Tensor &result, const Tensor &self, const detail::ClampBound &minval,
                         const detail::ClampBound &maxval) noexcept
{
    nt_clamp_out(result.nt(), self.nt(), minval.s.nt(), maxval.s.nt());
    return result;
}
inline Tensor clamp(const Tensor &self, const detail::ClampBound &minval,
                    const detail::ClampBound &maxval) noexcept
{
    return Tensor(nt_clamp(self.nt(), minval.s.nt(), maxval.s.nt()));
}
template <class M> inline Tensor &clamp_out(Tensor &result, const Tensor &, const M &) noexcept
{
    static_assert(detail::never<M>::value, NT__TORCH_CLAMP_ONE);
    return result;
}
template <class M> inline Tensor clamp(const Tensor &, const M &) noexcept
{
    static_assert(detail::never<M>::value, NT__TORCH_CLAMP_ONE);
    return Tensor();
}
#undef NT__TORCH_CLAMP_ONE
#undef NT__TORCH_CLAMP_NONE

/* add and sub: self +- alpha * other, other a tensor or a scalar */
#define NT__TORCH_ALPHA(name)                                                                 \
    inline Tensor &name##_out(Tensor &result, const Tensor &self, const Scalar &other,       \
                              const Scalar &alpha = 1) noexcept                               \
    {                                                                                         \
        nt_##name##_s_out(result.nt(), self.nt(), other.nt(), alpha.nt());                    \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor &name##_out(Tensor &result, const Tensor &self, const Tensor &other,       \
                              const Scalar &alpha = 1) noexcept                               \
    {                                                                                         \
        nt_##name##_out(result.nt(), self.nt(), other.nt(), alpha.nt());                      \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor name(const Tensor &self, const Scalar &other, const Scalar &alpha = 1) noexcept \
    {                                                                                         \
        return Tensor(nt_##name##_s(self.nt(), other.nt(), alpha.nt()));                      \
    }                                                                                         \
    inline Tensor name(const Tensor &self, const Tensor &other, const Scalar &alpha = 1) noexcept \
    {                                                                                         \
        return Tensor(nt_##name(self.nt(), other.nt(), alpha.nt()));                          \
    }
NT__TORCH_ALPHA(add) NT__TORCH_ALPHA(sub)
#undef NT__TORCH_ALPHA

/* mul, div, bitwise_and, bitwise_or: other a tensor or a scalar */
#define NT__TORCH_BINARY(name)                                                                \
    inline Tensor &name##_out(Tensor &result, const Tensor &self, const Scalar &other) noexcept \
    {                                                                                         \
        nt_##name##_s_out(result.nt(), self.nt(), other.nt());                                \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor &name##_out(Tensor &result, const Tensor &self, const Tensor &other) noexcept \
    {                                                                                         \
        nt_##name##_out(result.nt(), self.nt(), other.nt());                                  \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor name(const Tensor &self, const Scalar &other) noexcept                      \
    {                                                                                         \
        return Tensor(nt_##name##_s(self.nt(), other.nt()));                                  \
    }                                                                                         \
    inline Tensor name(const Tensor &self, const Tensor &other) noexcept                      \
    {                                                                                         \
        return Tensor(nt_##name(self.nt(), other.nt()));                                      \
    }
NT__TORCH_BINARY(mul) NT__TORCH_BINARY(div)
NT__TORCH_BINARY(bitwise_and) NT__TORCH_BINARY(bitwise_or)
#undef NT__TORCH_BINARY

/* bitwise and/or of a scalar and a tensor: the scalar is cast to the tensor's dtype, and the
 * operation commutes */
#define NT__TORCH_BITWISE_ST(name)                                                            \
    inline Tensor &name##_out(Tensor &result, const Scalar &self, const Tensor &other) noexcept \
    {                                                                                         \
        nt_##name##_s_out(result.nt(), other.nt(), self.nt());                                \
        return result;                                                                        \
    }                                                                                         \
    inline Tensor name(const Scalar &self, const Tensor &other) noexcept                      \
    {                                                                                         \
        return Tensor(nt_##name##_s(other.nt(), self.nt()));                                  \
    }
NT__TORCH_BITWISE_ST(bitwise_and) NT__TORCH_BITWISE_ST(bitwise_or)
#undef NT__TORCH_BITWISE_ST

inline Tensor &bitwise_not_out(Tensor &result, const Tensor &self) noexcept
{
    nt_bitwise_not_out(result.nt(), self.nt());
    return result;
}
inline Tensor bitwise_not(const Tensor &self) noexcept { return Tensor(nt_bitwise_not(self.nt())); }
/* The API reference also lists this form: it writes into result, as bitwise_not_out does. */
inline Tensor bitwise_not(Tensor &result, const Tensor &self) noexcept
{
    return bitwise_not_out(result, self);
}

} // namespace torch

#endif /* NEURONOP_TORCH_DETAIL_OPS_H */
