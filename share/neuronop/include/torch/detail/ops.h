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

inline Tensor &clamp_out(Tensor &result, const Tensor &self, const Scalar &minval,
                         const Scalar &maxval) noexcept
{
    nt_clamp_out(result.nt(), self.nt(), minval.nt(), maxval.nt());
    return result;
}
inline Tensor clamp(const Tensor &self, const Scalar &minval, const Scalar &maxval) noexcept
{
    return Tensor(nt_clamp(self.nt(), minval.nt(), maxval.nt()));
}

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
