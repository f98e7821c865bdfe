/*
 * torch/detail/types.h - the value types of the device's torch subset: dtypes
 * (c10::ScalarType, torch::kFloat ...), c10::TensorOptions, c10::BFloat16 and c10::Half,
 * torch::Scalar and torch::IntArrayRef.  Included by <torch/torch.h>; not on its own.
 *
 * Each is a small value over the C API of <neuronop.h>: a ScalarType names an nt_dtype (with
 * c10's numbers, converted by to_nt and from_nt), a Scalar is an nt_scalar (same layout: the
 * generated glue passes one for the other), an IntArrayRef holds up to 8 sizes, the device's
 * limit.
 */
#ifndef NEURONOP_TORCH_DETAIL_TYPES_H
#define NEURONOP_TORCH_DETAIL_TYPES_H

namespace torch {
namespace detail {
/* false, but only once a template is instantiated: for static_asserts that fire on use */
template <class...> struct never { static constexpr bool value = false; };
} // namespace detail
} // namespace torch

namespace c10 {

/* The device's element types, with torch's names and c10's values (c10/core/ScalarType.h),
 * so static_cast<int>(t.scalar_type()) is what torch gives: Byte 0, Char 1, Short 2, Int 3,
 * Long 4, Half 5, Float 6, BFloat16 15.  Double 7 and Bool 11 are there only because
 * Scalar::type() answers them, as c10's does: the device has no such tensors, so
 * torch::kDouble and kBool are no dtype of a tensor (below), and a factory given one is
 * refused.  c10's others (complex, quantized ...) are not there.  neuronop.h's nt_dtype numbers them differently:
 * torch::detail::to_nt and from_nt convert. */
enum class ScalarType : int8_t {
    Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
    Bool = 11, BFloat16 = 15,
};

/* c10's facts of a ScalarType (c10/core/ScalarType.h), with its answers: its name as
 * toString gives it ("Float"; "UNKNOWN_SCALAR" for a number that is none), its element's
 * size in bytes (elementSize stops the core for any other number: c10's complex and
 * quantized types, which the device does not have, or none, where c10 throws), and its
 * kind.  No ScalarType here is complex. */
inline const char *toString(ScalarType t) noexcept
{
    switch (t) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    }
    return "UNKNOWN_SCALAR";
}
inline size_t elementSize(ScalarType t) noexcept
{
    switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: case ScalarType::Double: return 8;
    }
    nt__cxx_check(NT__CXX_UNKNOWN_TYPE, nullptr, static_cast<int>(t), 0);
    return 0;
}
inline bool isIntegralType(ScalarType t, bool includeBool) noexcept
{
    return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Int ||
           t == ScalarType::Long || t == ScalarType::Short ||
           (includeBool && t == ScalarType::Bool);
}
inline bool isFloatingType(ScalarType t) noexcept
{
    return t == ScalarType::Double || t == ScalarType::Float || t == ScalarType::Half ||
           t == ScalarType::BFloat16;
}
inline bool isComplexType(ScalarType) noexcept { return false; }

/* c10's type promotion of two dtypes (c10/core/ScalarType.h's table, for the types here):
 * bool gives way to anything, an integer to a floating type, Byte and Char meet in Short,
 * Half and BFloat16 in Float, and otherwise the wider wins.  ATen's spelling is
 * at::promote_types (torch.h).  A number that is no ScalarType stops the core, where c10
 * throws. */
inline ScalarType promoteTypes(ScalarType a, ScalarType b) noexcept
{
    elementSize(a);   /* each stops the core for a number that is none */
    elementSize(b);
    if (a == b || b == ScalarType::Bool)
        return a;
    if (a == ScalarType::Bool)
        return b;
    if (isFloatingType(a) != isFloatingType(b))
        return isFloatingType(a) ? a : b;
    const bool pair16 = (a == ScalarType::Half && b == ScalarType::BFloat16) ||
                        (a == ScalarType::BFloat16 && b == ScalarType::Half);
    const bool pair8 = (a == ScalarType::Byte && b == ScalarType::Char) ||
                       (a == ScalarType::Char && b == ScalarType::Byte);
    if (pair16)
        return ScalarType::Float;
    if (pair8)
        return ScalarType::Short;
    return elementSize(a) >= elementSize(b) ? a : b;
}

/* 16-bit floats as stored in tensors and TCM buffers: two bytes, converted to and from float
 * (round to nearest even) by the runtime, exactly as the C API's nt_f32_to_bf16 does.  Their
 * conversions and arithmetic are c10's (c10/util/BFloat16-inl.h, Half-inl.h), operator for
 * operator, so the same expression rounds where torch's rounds:
 *   - h op h (+ - * /) computes in float and rounds to the 16-bit type: a 16-bit result;
 *   - h op float is a float, h op double a double (no rounding);
 *   - h op int and h op int64_t round the integer to the 16-bit type first: a 16-bit result;
 *   - h op= x converts x to the 16-bit type first, then rounds the result again: two roundings
 *     (h += 0.1f is h = h + BFloat16(0.1f)), and float op= h is float arithmetic.
 * Each implicit conversion is c10's too: from float (so from any number, by a standard
 * conversion first) and to float. */
struct BFloat16 {
    uint16_t x;
    struct from_bits_t {};
    static constexpr from_bits_t from_bits() noexcept { return from_bits_t(); }
    BFloat16() = default;
    constexpr BFloat16(unsigned short bits, from_bits_t) noexcept : x(bits) {}
    /* c10 makes every NaN 0x7fc0 (its sign and payload are dropped) */
    BFloat16(float v) noexcept : x(v != v ? static_cast<uint16_t>(0x7fc0) : nt_f32_to_bf16(v)) {}
    operator float() const noexcept { return nt_bf16_to_f32(x); }
};
struct Half {
    uint16_t x;
    struct from_bits_t {};
    static constexpr from_bits_t from_bits() noexcept { return from_bits_t(); }
    Half() = default;
    constexpr Half(unsigned short bits, from_bits_t) noexcept : x(bits) {}
    Half(float v) noexcept : x(nt_f32_to_f16(v)) {}
    /* c10 widens with float arithmetic (fp16_ieee_to_fp32_value), which quiets a signalling
     * NaN: 0x7d00 is 0x7fe00000, not 0x7fa00000 (its payload kept) */
    operator float() const noexcept
    {
        float f = nt_f16_to_f32(x);
        if ((x & 0x7c00u) == 0x7c00u && (x & 0x3ffu)) {
            uint32_t u;
            memcpy(&u, &f, sizeof u);
            u |= 0x400000u;
            memcpy(&f, &u, sizeof f);
        }
        return f;
    }
};

#define NT__TORCH_F16_OP(H, op)                                                               \
    inline H operator op(const H &a, const H &b) noexcept                                     \
    { return H(static_cast<float>(a) op static_cast<float>(b)); }                             \
    inline H &operator op##=(H &a, const H &b) noexcept { a = a op b; return a; }             \
    inline float operator op(H a, float b) noexcept { return static_cast<float>(a) op b; }    \
    inline float operator op(float a, H b) noexcept { return a op static_cast<float>(b); }    \
    inline float &operator op##=(float &a, const H &b) noexcept                               \
    { return a op##= static_cast<float>(b); }                                                 \
    inline double operator op(H a, double b) noexcept { return static_cast<double>(a) op b; } \
    inline double operator op(double a, H b) noexcept { return a op static_cast<double>(b); } \
    inline H operator op(H a, int b) noexcept { return a op static_cast<H>(b); }              \
    inline H operator op(int a, H b) noexcept { return static_cast<H>(a) op b; }              \
    inline H operator op(H a, int64_t b) noexcept { return a op static_cast<H>(b); }          \
    inline H operator op(int64_t a, H b) noexcept { return static_cast<H>(a) op b; }
#define NT__TORCH_F16_OPS(H)                                                                  \
    NT__TORCH_F16_OP(H, +) NT__TORCH_F16_OP(H, -) NT__TORCH_F16_OP(H, *)                      \
    NT__TORCH_F16_OP(H, /)                                                                    \
    inline H operator-(const H &a) noexcept { return H(-static_cast<float>(a)); }
NT__TORCH_F16_OPS(BFloat16)
NT__TORCH_F16_OPS(Half)
#undef NT__TORCH_F16_OPS
#undef NT__TORCH_F16_OP

/* c10's bitwise operators of BFloat16 (BFloat16-inl.h; Half has none): on the bits, and, as
 * c10 writes them, they change their left operand (a non-const BFloat16) and return it, so
 * a | b sets a to a | b. */
#define NT__TORCH_BF16_BITWISE(op)                                                            \
    inline BFloat16 &operator op(BFloat16 &a, const BFloat16 &b) noexcept                     \
    {                                                                                         \
        a.x = static_cast<uint16_t>(a.x op b.x);                                              \
        return a;                                                                             \
    }
NT__TORCH_BF16_BITWISE(|) NT__TORCH_BF16_BITWISE(^) NT__TORCH_BF16_BITWISE(&)
#undef NT__TORCH_BF16_BITWISE

} // namespace c10

/* std::numeric_limits of the 16-bit floats, c10's (Half-inl.h, BFloat16-inl.h) member for
 * member: without them the primary template answers 0 for max(), epsilon() and the rest. */
namespace std {
#define NT__TORCH_F16_LIMITS(H, iec, dig, dig10, maxdig10, minexp, minexp10, maxexp, maxexp10, \
                             bmin, blowest, bmax, beps, bround, binf, bqnan, bsnan)            \
    template <> class numeric_limits<c10::H> {                                                \
    public:                                                                                   \
        static constexpr bool is_specialized = true;                                          \
        static constexpr bool is_signed = true;                                               \
        static constexpr bool is_integer = false;                                             \
        static constexpr bool is_exact = false;                                               \
        static constexpr bool has_infinity = true;                                            \
        static constexpr bool has_quiet_NaN = true;                                           \
        static constexpr bool has_signaling_NaN = true;                                       \
        static constexpr auto has_denorm = numeric_limits<float>::has_denorm;                 \
        static constexpr auto has_denorm_loss = numeric_limits<float>::has_denorm_loss;       \
        static constexpr auto round_style = numeric_limits<float>::round_style;               \
        static constexpr bool is_iec559 = iec;                                                \
        static constexpr bool is_bounded = true;                                              \
        static constexpr bool is_modulo = false;                                              \
        static constexpr int digits = dig;                                                    \
        static constexpr int digits10 = dig10;                                                \
        static constexpr int max_digits10 = maxdig10;                                         \
        static constexpr int radix = 2;                                                       \
        static constexpr int min_exponent = minexp;                                           \
        static constexpr int min_exponent10 = minexp10;                                       \
        static constexpr int max_exponent = maxexp;                                           \
        static constexpr int max_exponent10 = maxexp10;                                       \
        static constexpr auto traps = numeric_limits<float>::traps;                           \
        static constexpr auto tinyness_before = numeric_limits<float>::tinyness_before;       \
        static constexpr c10::H min() { return c10::H(bmin, c10::H::from_bits()); }           \
        static constexpr c10::H lowest() { return c10::H(blowest, c10::H::from_bits()); }     \
        static constexpr c10::H max() { return c10::H(bmax, c10::H::from_bits()); }           \
        static constexpr c10::H epsilon() { return c10::H(beps, c10::H::from_bits()); }       \
        static constexpr c10::H round_error() { return c10::H(bround, c10::H::from_bits()); } \
        static constexpr c10::H infinity() { return c10::H(binf, c10::H::from_bits()); }      \
        static constexpr c10::H quiet_NaN() { return c10::H(bqnan, c10::H::from_bits()); }    \
        static constexpr c10::H signaling_NaN() { return c10::H(bsnan, c10::H::from_bits()); } \
        static constexpr c10::H denorm_min() { return c10::H(0x0001, c10::H::from_bits()); }  \
    };
NT__TORCH_F16_LIMITS(Half, true, 11, 3, 5, -13, -4, 16, 4, 0x0400, 0xFBFF, 0x7BFF, 0x1400,
                     0x3800, 0x7C00, 0x7E00, 0x7D00)
/* (c10's BFloat16 signaling_NaN() is 0x7F80, infinity's bits: kept, as torch answers it) */
NT__TORCH_F16_LIMITS(BFloat16, false, 8, 2, 4, -125, -37, 128, 38, 0x0080, 0xFF7F, 0x7F7F,
                     0x3C00, 0x3F00, 0x7F80, 0x7FC0, 0x7F80)
#undef NT__TORCH_F16_LIMITS
} // namespace std

namespace c10 {
namespace detail {
/* c10's Double and Bool as torch::kDouble, kFloat64, kF64 and kBool name them: a ScalarType
 * wherever torch's is a value (compared with Scalar::type(), a case of a switch on one,
 * c10's facts of it), but refused as a tensor's dtype when the kernel builds, as the device
 * has no such tensors (a ScalarType variable that holds one is refused at run time) */
template <ScalarType T> struct NonDeviceType {
    constexpr operator ScalarType() const noexcept { return T; }
};
} // namespace detail

#define NT__TORCH_NO_DOUBLE                                                                   \
    "'torch::kDouble' (kFloat64, kF64) is not in the device's torch subset as a dtype: the "  \
    "device has no float64 tensors (its dtypes are kFloat, kBFloat16, kHalf, kInt, kChar, "   \
    "kLong, kShort and kByte); kDouble is there to compare with what Scalar::type() answers"
#define NT__TORCH_NO_BOOL                                                                     \
    "'torch::kBool' is not in the device's torch subset as a dtype: the device has no bool "  \
    "tensors (its dtypes are kFloat, kBFloat16, kHalf, kInt, kChar, kLong, kShort and "       \
    "kByte); kBool is there to compare with what Scalar::type() answers"

/* Options of a factory function.  Only the dtype has an effect (as on the device); a default
 * TensorOptions() has none, which means float, but to full(), which takes its fill value's
 * (int64 for a whole number, as ATen's infer_full_options). */
class TensorOptions {
public:
    TensorOptions() noexcept : dtype_(ScalarType::Float), has_dtype_(false) {}
    TensorOptions(ScalarType d) noexcept : dtype_(d), has_dtype_(true) {}
    template <class D = void>
    TensorOptions(detail::NonDeviceType<ScalarType::Double>) noexcept : TensorOptions()
    {
        static_assert(torch::detail::never<D>::value, NT__TORCH_NO_DOUBLE);
    }
    template <class D = void>
    TensorOptions(detail::NonDeviceType<ScalarType::Bool>) noexcept : TensorOptions()
    {
        static_assert(torch::detail::never<D>::value, NT__TORCH_NO_BOOL);
    }
    TensorOptions dtype(ScalarType d) const noexcept { return TensorOptions(d); }
    /* dtype<T>(), the dtype of element type T (caffe2::TypeMeta::Make<T>() in torch) */
    template <class T> TensorOptions dtype() const noexcept;
    template <ScalarType T>
    TensorOptions dtype(detail::NonDeviceType<T> d) const noexcept { return TensorOptions(d); }
    ScalarType dtype() const noexcept { return dtype_; }
    bool has_dtype() const noexcept { return has_dtype_; }

private:
    ScalarType dtype_;
    bool has_dtype_;
};
#undef NT__TORCH_NO_DOUBLE
#undef NT__TORCH_NO_BOOL

/* c10's names of the dtypes (kDouble and kBool only as values, see NonDeviceType) */
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr detail::NonDeviceType<ScalarType::Double> kDouble{};
constexpr detail::NonDeviceType<ScalarType::Bool> kBool{};

} // namespace c10

namespace torch {

using c10::ScalarType;
using c10::TensorOptions;
using Dtype = c10::ScalarType;

/* c10's own dtype names are c10's (c10/core/ScalarType.h), so c10::kFloat and at::kFloat are
 * there as in libtorch; torch's are the same objects (a using-declaration, not a second
 * constant: a source with using namespace torch and c10 finds one kFloat), and its
 * aliases (kFloat32, kF32 ...) are its own, as torch/types.h has them. */
using c10::kFloat;
using c10::kBFloat16;
using c10::kHalf;
using c10::kInt;
using c10::kChar;
using c10::kLong;
using c10::kShort;
using c10::kByte;
using c10::kDouble;
using c10::kBool;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kF32 = ScalarType::Float;
constexpr ScalarType kF16 = ScalarType::Half;
constexpr ScalarType kI32 = ScalarType::Int;
constexpr ScalarType kI8 = ScalarType::Char;
constexpr ScalarType kI64 = ScalarType::Long;
constexpr ScalarType kI16 = ScalarType::Short;
constexpr ScalarType kU8 = ScalarType::Byte;
/* no tensor's dtype (c10::detail::NonDeviceType): for Scalar::type() */
constexpr c10::detail::NonDeviceType<ScalarType::Double> kFloat64{};
constexpr c10::detail::NonDeviceType<ScalarType::Double> kF64{};

inline TensorOptions dtype(ScalarType d) noexcept { return TensorOptions(d); }
template <ScalarType T> inline TensorOptions dtype(c10::detail::NonDeviceType<T> d) noexcept
{
    return TensorOptions(d);
}

namespace detail {
/* a ScalarType as the C API's nt_dtype; one that is no device dtype (a value cast from an
 * int) keeps its number, which is none of nt_dtype's (c10's Double, 7, becomes 107), and the
 * runtime refuses it where the call names it */
inline nt_dtype to_nt(ScalarType d) noexcept
{
    switch (d) {
    case ScalarType::Float: return NT_F32;
    case ScalarType::BFloat16: return NT_BF16;
    case ScalarType::Half: return NT_F16;
    case ScalarType::Int: return NT_I32;
    case ScalarType::Char: return NT_I8;
    case ScalarType::Long: return NT_I64;
    case ScalarType::Short: return NT_I16;
    case ScalarType::Byte: return NT_U8;
    case ScalarType::Double:   /* no device dtype: refused where the call names it */
    case ScalarType::Bool: break;
    }
    const int v = static_cast<int>(d);
    return static_cast<nt_dtype>(v >= 0 && v <= NT_U8 ? 100 + v : v);
}
inline ScalarType from_nt(nt_dtype d) noexcept
{
    switch (d) {
    case NT_F32: break;
    case NT_BF16: return ScalarType::BFloat16;
    case NT_F16: return ScalarType::Half;
    case NT_I32: return ScalarType::Int;
    case NT_I8: return ScalarType::Char;
    case NT_I64: return ScalarType::Long;
    case NT_I16: return ScalarType::Short;
    case NT_U8: return ScalarType::Byte;
    }
    return ScalarType::Float;
}

/* What each element type is on the device: its dtype, and its stream calls.  Only these
 * eight types have an entry; any other is refused where it is used (elem_ok). */
template <class T> struct elem { static constexpr bool ok = false; };
/* A 16-bit element read from a stream arrives as the float the runtime widened it to, which
 * holds its bits exactly (a NaN's sign and payload too: the runtime does not quiet it).
 * These give the element back bit for bit, as reading it through an accessor does, where
 * converting the float (c10's rounding) would make every NaN one NaN. */
inline c10::BFloat16 bf16_of_stream(float v) noexcept
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return c10::BFloat16(static_cast<unsigned short>(u >> 16), c10::BFloat16::from_bits());
}
inline c10::Half f16_of_stream(float v) noexcept
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u || !(u & 0x7fffffu))
        return c10::Half(v);   /* a number or an infinity: exact */
    return c10::Half(static_cast<unsigned short>((u >> 16 & 0x8000u) | 0x7c00u |
                                                 (u >> 13 & 0x3ffu)),
                     c10::Half::from_bits());
}
/* ... and a 16-bit element written is passed as the float that holds its bits (not c10's
 * conversion, which quiets a float16 NaN), which the runtime stores back exactly. */
inline float stream_of(c10::BFloat16 v) noexcept { return nt_bf16_to_f32(v.x); }
inline float stream_of(c10::Half v) noexcept { return nt_f16_to_f32(v.x); }
template <class T> inline T stream_of(T v) noexcept { return v; }
#define NT__TORCH_ELEM(T, sfx, dt, of)                                                        \
    template <> struct elem<T> {                                                              \
        static constexpr bool ok = true;                                                      \
        static constexpr nt_dtype dtype = dt;                                                 \
        static T read(nt_read_stream *s) noexcept { return of(nt_stream_read_##sfx(s)); }     \
        static void write(nt_write_stream *s, T v) noexcept                                   \
        { nt_stream_write_##sfx(s, stream_of(v)); }                                           \
    };
NT__TORCH_ELEM(float, f32, NT_F32, float)
NT__TORCH_ELEM(c10::BFloat16, bf16, NT_BF16, bf16_of_stream)
NT__TORCH_ELEM(c10::Half, f16, NT_F16, f16_of_stream)
NT__TORCH_ELEM(int32_t, i32, NT_I32, int32_t)
NT__TORCH_ELEM(int8_t, i8, NT_I8, int8_t)
NT__TORCH_ELEM(int64_t, i64, NT_I64, int64_t)
NT__TORCH_ELEM(int16_t, i16, NT_I16, int16_t)
NT__TORCH_ELEM(uint8_t, u8, NT_U8, uint8_t)
#undef NT__TORCH_ELEM

#define NT__TORCH_ELEM_TYPES                                                                  \
    "the element type must be one of the device's: float, c10::BFloat16, c10::Half, "        \
    "int32_t, int8_t, int64_t, int16_t or uint8_t (no double: the device has no float64 "    \
    "tensors)"
template <class T> struct elem_ok {
    static_assert(elem<typename std::remove_cv<T>::type>::ok, NT__TORCH_ELEM_TYPES);
    static constexpr nt_dtype dtype = elem<typename std::remove_cv<T>::type>::dtype;
};
/* The options of dtype<T>(): T's dtype; double and bool are refused as kDouble and kBool
 * are, any other T as an accessor's element type is */
template <class T> struct nondevice_of {};
template <> struct nondevice_of<double> {
    typedef c10::detail::NonDeviceType<ScalarType::Double> type;
};
template <> struct nondevice_of<bool> {
    typedef c10::detail::NonDeviceType<ScalarType::Bool> type;
};
template <class T, class = void> struct options_of {
    static TensorOptions get() noexcept { return TensorOptions(from_nt(elem_ok<T>::dtype)); }
};
template <class T>
struct options_of<T, typename std::enable_if<std::is_same<T, double>::value ||
                                             std::is_same<T, bool>::value>::type> {
    static TensorOptions get() noexcept { return TensorOptions(typename nondevice_of<T>::type()); }
};
} // namespace detail

template <class T> inline TensorOptions dtype() noexcept { return detail::options_of<T>::get(); }
} // namespace torch

namespace c10 {
template <class T> inline TensorOptions TensorOptions::dtype() const noexcept
{
    return torch::detail::options_of<T>::get();
}
} // namespace c10

namespace torch {

namespace detail {
/* c10's overflow check of a Scalar converted to dtype d (checked_convert, c10/util/Half.h's
 * overflows): an integral d takes the whole numbers of its range (uint8 also -255 to -1,
 * which wrap) and the doubles inside it (NaN never); a floating d takes any double but a
 * finite one past its largest value, and any int64 but one past float16's. */
inline bool scalar_fits(nt_scalar s, nt_dtype d) noexcept
{
    if (d == NT_F32 || d == NT_BF16 || d == NT_F16) {
        const double max = d == NT_F16 ? 65504.0 : d == NT_BF16 ? ldexp(255.0, 120)
                                                                 : static_cast<double>(FLT_MAX);
        const double v = s.is_int ? static_cast<double>(s.i) : s.f;
        return v != v || (!s.is_int && (v == HUGE_VAL || v == -HUGE_VAL)) ||
               (v <= max && v >= -max);
    }
    const int64_t lo = d == NT_I8 ? INT8_MIN : d == NT_I16 ? INT16_MIN : d == NT_I32 ? INT32_MIN
                     : d == NT_I64 ? INT64_MIN : 0;
    const int64_t hi = d == NT_I8 ? INT8_MAX : d == NT_I16 ? INT16_MAX : d == NT_I32 ? INT32_MAX
                     : d == NT_I64 ? INT64_MAX : UINT8_MAX;
    if (s.is_int)
        return s.i <= hi && (d == NT_U8 ? s.i >= -255 : s.i >= lo);
    return s.f >= static_cast<double>(lo) && s.f <= static_cast<double>(hi);
}

/* How c10::Scalar takes a value of type T (bool aside): 1 as an integer (int64_t and the
 * types its constructors take exactly or by promotion to int, unscoped enums too, and those
 * whose underlying type is int64_t), 2 as a double (float, double), 3 not at all, as
 * ambiguous (unsigned int, long long, unsigned long, char32_t, long double, and enums of
 * those: none of its constructors is better than another), 0 not a number (a scoped enum
 * such as ScalarType among them: so no overload taking a Scalar is viable). */
template <class T, class = void> struct scalar_kind {
    static constexpr int value = std::is_same<T, long double>::value ? 3
                               : std::is_floating_point<T>::value ? 2 : 0;
};
template <class T>
struct scalar_kind<T, typename std::enable_if<(std::is_integral<T>::value ||
                                               (std::is_enum<T>::value &&
                                                std::is_convertible<T, int>::value)) &&
                                              !std::is_same<T, bool>::value>::type> {
    typedef typename std::decay<decltype(+std::declval<T>())>::type promoted;
    /* an enum promotes to its underlying type, so one of int64_t's is an int64 too, and one
     * of unsigned int's ambiguous, as in c10 */
    static constexpr int value = std::is_same<T, int64_t>::value ||
                                 std::is_same<promoted, int>::value ||
                                 (std::is_enum<T>::value &&
                                  std::is_same<promoted, int64_t>::value) ? 1 : 3;
};
/* a == b for Scalar::equal, as c10 writes it; between arithmetic types with C++'s usual
 * conversions made explicit, so that an int64 against an unsigned number compares as c10's
 * does without a -Wsign-compare warning in the kernel's build */
template <class A, class B,
          typename std::enable_if<std::is_arithmetic<B>::value, int>::type = 0>
inline bool same_value(A a, B b) noexcept
{
    typedef typename std::common_type<A, B>::type C;
    return static_cast<C>(a) == static_cast<C>(b);
}
template <class A, class B,
          typename std::enable_if<!std::is_arithmetic<B>::value, int>::type = 0>
inline bool same_value(A a, B b) noexcept
{
    return a == b;   /* c10::Half, c10::BFloat16: through float, as in c10 */
}
} // namespace detail

/* A number passed to an op or a tensor operation: a double or an int64, as torch's.  Its
 * layout is nt_scalar's, so an op's Scalar argument arrives as the runtime made it.
 * Converting it out (toInt(), to<T>() ...) is checked as c10 checks it: a value the type
 * cannot hold stops the core, where torch throws. */
class Scalar {
public:
    Scalar() noexcept : s_(nt_scalar_i(0)) {}
    template <class T, typename std::enable_if<detail::scalar_kind<T>::value == 1, int>::type = 0>
    Scalar(T v) noexcept : s_(nt_scalar_i(static_cast<int64_t>(v))) {}
    /* c10::Scalar has constructors for uint8_t, int8_t, int16_t, int, int64_t, float and
     * double (and bool, Half, BFloat16), so from a type that is none of them and does not
     * promote to int, g++ calls it ambiguous: refused here too, with what to write */
    template <class T, typename std::enable_if<detail::scalar_kind<T>::value == 3, int>::type = 0>
    Scalar(T v) noexcept : s_(nt_scalar_i(0))
    {
        static_assert(detail::never<T>::value, "torch::Scalar from an unsigned int, long long, "
                      "unsigned long (size_t, uint64_t), char32_t or long double is ambiguous "
                      "in torch (c10::Scalar takes bool, uint8_t, int8_t, int16_t, int, "
                      "int64_t, float, double, c10::Half, c10::BFloat16): convert it first, "
                      "static_cast<int64_t>(n) or static_cast<double>(x)");
        (void)v;
    }
    /* a bool stays one, as c10's: not integral unless asked (isIntegral(true)), and refused
     * as alpha and by sub */
    template <class T, typename std::enable_if<std::is_same<T, bool>::value, int>::type = 0>
    Scalar(T v) noexcept : s_(nt_scalar_i(v ? 1 : 0))
    {
        s_.is_bool = 1;
    }
    template <class T, typename std::enable_if<detail::scalar_kind<T>::value == 2, int>::type = 0>
    Scalar(T v) noexcept : s_(nt_scalar_f(static_cast<double>(v))) {}
    Scalar(c10::BFloat16 v) noexcept : s_(nt_scalar_f(static_cast<float>(v))) {}
    Scalar(c10::Half v) noexcept : s_(nt_scalar_f(static_cast<float>(v))) {}
    explicit Scalar(nt_scalar s) noexcept : s_(s) {}

    bool isIntegral(bool includeBool = false) const noexcept
    {
        return s_.is_int && (!s_.is_bool || includeBool);
    }
    bool isFloatingPoint() const noexcept { return !s_.is_int; }
    bool isBoolean() const noexcept { return s_.is_bool; }
    /* the device has no complex numbers, so no Scalar is complex (c10's may be) */
    bool isComplex() const noexcept { return false; }
    /* c10's conj(): a Scalar that is not complex is its own conjugate, a bool too */
    Scalar conj() const noexcept { return *this; }
    /* c10's log(): the natural log as a double Scalar, of an int64 converted to a double
     * (log(0) is -inf, a negative number's NaN); of a bool c10 fails an internal assertion,
     * so here the core stops */
    Scalar log() const noexcept
    {
        if (s_.is_bool)
            nt__cxx_check(NT__CXX_BOOL_SCALAR, nullptr, 1, 0);
        return Scalar(nt_scalar_f(::log(s_.is_int ? static_cast<double>(s_.i) : s_.f)));
    }
    /* c10's: the type the value is held as, Long, Double or Bool (never a device dtype but
     * Long), whatever it was made from: Scalar(1.5f).type() is Double */
    ScalarType type() const noexcept
    {
        return s_.is_bool ? ScalarType::Bool : s_.is_int ? ScalarType::Long : ScalarType::Double;
    }
    /* c10's unary minus: the same kind of Scalar, negated.  An int64 wraps (-INT64_MIN is
     * INT64_MIN, as torch's build computes it), a double's sign flips (a NaN's too), and a
     * bool is refused as c10 refuses it (torch throws; here the core stops) */
    Scalar operator-() const noexcept
    {
        if (s_.is_bool)
            nt__cxx_check(NT__CXX_BOOL_SCALAR, nullptr, 0, 0);
        if (s_.is_int)
            return Scalar(nt_scalar_i(static_cast<int64_t>(0u - static_cast<uint64_t>(s_.i))));
        return Scalar(nt_scalar_f(-s_.f));
    }
    /* c10's equal(num): the held value compared with num by C++'s == (so an int64 Scalar
     * equals 2.0, -1 equals UINT64_MAX but not 4294967295u, NaN equals nothing), and a bool
     * Scalar equals only a bool, as a bool equals only a bool Scalar */
    template <class T, typename std::enable_if<!std::is_same<T, bool>::value, int>::type = 0>
    bool equal(T num) const noexcept
    {
        if (s_.is_bool)
            return false;
        return s_.is_int ? detail::same_value(s_.i, num) : detail::same_value(s_.f, num);
    }
    bool equal(bool num) const noexcept { return s_.is_bool && (s_.i != 0) == num; }
    double toDouble() const noexcept { return nt_scalar_to_f(s_); }
    float toFloat() const noexcept { return single(NT_F32); }
    c10::Half toHalf() const noexcept { return c10::Half(single(NT_F16)); }
    c10::BFloat16 toBFloat16() const noexcept { return c10::BFloat16(single(NT_BF16)); }
    int64_t toLong() const noexcept { return whole(NT_I64); }
    int32_t toInt() const noexcept { return static_cast<int32_t>(whole(NT_I32)); }
    int16_t toShort() const noexcept { return static_cast<int16_t>(whole(NT_I16)); }
    int8_t toChar() const noexcept { return static_cast<int8_t>(whole(NT_I8)); }
    uint8_t toByte() const noexcept { return static_cast<uint8_t>(whole(NT_U8)); }
    /* c10 never refuses a bool: any nonzero value, NaN too, is true */
    bool toBool() const noexcept { return s_.is_int ? s_.i != 0 : s_.f != 0; }
    /* torch's types only (the others are deleted there): see the specialisations below */
    template <class T> T to() const noexcept;
    nt_scalar nt() const noexcept { return s_; }   /* the C API's value (neuronop.h) */

private:
    /* the value as a double, once c10's check for dtype d passes */
    double checked(nt_dtype d) const noexcept
    {
        if (!detail::scalar_fits(s_, d))
            refuse(d);
        return nt_scalar_to_f(s_);
    }
    /* the value as a float for floating dtype d, once c10's check passes: an int64 converted
     * straight to float, as c10's static_cast<float>(int64_t) (through a double it would
     * round twice: 2^60 + 2^36 + 1 is 2^60 + 2^37 in torch, not 2^60) */
    float single(nt_dtype d) const noexcept
    {
        const double v = checked(d);
        return s_.is_int ? static_cast<float>(s_.i) : static_cast<float>(v);
    }
    /* the value as an int64 for integral dtype d: a double truncated toward zero */
    int64_t whole(nt_dtype d) const noexcept
    {
        if (!detail::scalar_fits(s_, d))
            refuse(d);
        if (s_.is_int)
            return s_.i;
        return s_.f >= 9223372036854775808.0 ? INT64_MIN : static_cast<int64_t>(s_.f);
    }
    /* stops the core with c10's message (the runtime formats it) */
    void refuse(nt_dtype d) const noexcept
    {
        int64_t raw = s_.i;
        if (!s_.is_int)
            memcpy(&raw, &s_.f, sizeof raw);
        nt__cxx_check(NT__CXX_SCALAR, nullptr, raw, static_cast<int64_t>(d) | (s_.is_int ? 256 : 0));
    }
    nt_scalar s_;
};

template <class T> inline T Scalar::to() const noexcept
{
    static_assert(detail::never<T>::value, "torch::Scalar::to<T>(): T must be one of torch's: "
                  "bool, uint8_t, int8_t, int16_t, int, int64_t, float, double, c10::Half or "
                  "c10::BFloat16");
    return T();
}
template <> inline bool Scalar::to<bool>() const noexcept { return toBool(); }
template <> inline uint8_t Scalar::to<uint8_t>() const noexcept { return toByte(); }
template <> inline int8_t Scalar::to<int8_t>() const noexcept { return toChar(); }
template <> inline int16_t Scalar::to<int16_t>() const noexcept { return toShort(); }
template <> inline int32_t Scalar::to<int32_t>() const noexcept { return toInt(); }
template <> inline int64_t Scalar::to<int64_t>() const noexcept { return toLong(); }
template <> inline float Scalar::to<float>() const noexcept { return toFloat(); }
template <> inline double Scalar::to<double>() const noexcept { return toDouble(); }
template <> inline c10::Half Scalar::to<c10::Half>() const noexcept { return toHalf(); }
template <> inline c10::BFloat16 Scalar::to<c10::BFloat16>() const noexcept
{
    return toBFloat16();
}

/* A list of sizes: a tensor's sizes(), or a braced list given to a factory ({32, 4096}, or
 * {num_elem} of a size_t, as the published samples write it).  It holds its sizes (at most
 * 8, the device's limit on dimensions; a longer list is refused by the factory it reaches).
 * Indexing past the end stops the core, where torch would read past the array. */
class IntArrayRef {
public:
    /* One size of a braced list: any integer type, so {n} with a size_t n is no narrowing. */
    struct Size {
        int64_t v;
        template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
        constexpr Size(I i) noexcept : v(static_cast<int64_t>(i)) {}
    };

    IntArrayRef() noexcept : n_(0), of_(nullptr), ext_(nullptr), v_() {}
    IntArrayRef(std::initializer_list<Size> sizes) noexcept
        : n_(sizes.size()), of_(nullptr), ext_(nullptr), v_()
    {
        size_t i = 0;
        for (const Size &s : sizes)
            if (i < kMax)
                v_[i++] = s.v;
    }
    IntArrayRef(const int64_t *sizes, size_t n) noexcept
        : n_(n), of_(nullptr), ext_(nullptr), v_()
    {
        for (size_t i = 0; i < n && i < kMax; i++)
            v_[i] = sizes[i];
    }
    /* c10::ArrayRef's other implicit sources: one size (torch::zeros(n, torch::kFloat) is 1-D),
     * a C array or std::array of int64_t, and a std::vector<int64_t> (host code: in a kernel a
     * vector needs operator new, which is refused at build time) */
    IntArrayRef(const int64_t &one) noexcept : IntArrayRef(&one, 1) {}
    template <size_t N> IntArrayRef(const int64_t (&sizes)[N]) noexcept : IntArrayRef(sizes, N) {}
    template <size_t N>
    IntArrayRef(const std::array<int64_t, N> &sizes) noexcept : IntArrayRef(sizes.data(), N) {}
    template <class A>
    IntArrayRef(const std::vector<int64_t, A> &sizes) noexcept
        : IntArrayRef(sizes.data(), sizes.size()) {}
    /* The sizes of tensor t (Tensor::sizes()): data() points into the tensor, as torch's
     * does, so it stays valid after this list is gone. */
    explicit IntArrayRef(const nt_tensor *t) noexcept
        : IntArrayRef(nt_sizes(t), static_cast<size_t>(nt_dim(t)))
    {
        of_ = t;
        ext_ = nt_sizes(t);
    }

    size_t size() const noexcept { return n_; }
    bool empty() const noexcept { return n_ == 0; }
    const int64_t *data() const noexcept { return ext_ ? ext_ : v_; }
    const int64_t *begin() const noexcept { return data(); }
    const int64_t *end() const noexcept { return data() + (n_ < kMax ? n_ : kMax); }
    const int64_t *cbegin() const noexcept { return begin(); }
    const int64_t *cend() const noexcept { return end(); }
    std::reverse_iterator<const int64_t *> rbegin() const noexcept
    {
        return std::reverse_iterator<const int64_t *>(end());
    }
    std::reverse_iterator<const int64_t *> rend() const noexcept
    {
        return std::reverse_iterator<const int64_t *>(begin());
    }
    /* c10's slice(N, M), the M sizes from the Nth on, and slice(N), those from the Nth to the
     * end; past the end the core stops, where c10 throws */
    IntArrayRef slice(size_t N, size_t M) const noexcept
    {
        const size_t n = n_ < kMax ? n_ : kMax;
        if (N > n || M > n - N) {
            const uint64_t m = M < (uint64_t{1} << 58) ? M : (uint64_t{1} << 58);
            nt__cxx_check(NT__CXX_SLICE, nullptr, static_cast<int64_t>(N),
                          static_cast<int64_t>(m << 4 | n));
            return IntArrayRef();
        }
        return IntArrayRef(data() + N, M);
    }
    IntArrayRef slice(size_t N) const noexcept { return slice(N, N <= n_ ? n_ - N : 0); }
    int64_t operator[](size_t i) const noexcept
    {
        if (i >= n_ || i >= kMax)
            nt__cxx_check(NT__CXX_SIZES, of_, static_cast<int64_t>(i), static_cast<int64_t>(n_));
        return v_[i < kMax ? i : 0];
    }
    int64_t at(size_t i) const noexcept { return (*this)[i]; }
    int64_t front() const noexcept { return (*this)[0]; }
    int64_t back() const noexcept { return (*this)[n_ - 1]; }
    /* the sizes as a std::vector, as c10's vec() (host code: a kernel's is refused for its
     * operator new) */
    std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
    bool equals(const IntArrayRef &o) const noexcept
    {
        if (n_ != o.n_)
            return false;
        for (size_t i = 0; i < n_ && i < kMax; i++)
            if (v_[i] != o.v_[i])
                return false;
        return true;
    }
    /* The (ndim, sizes) pair the C API's factories take. */
    int nt_ndim() const noexcept { return static_cast<int>(n_); }

private:
    enum : size_t { kMax = 8 };   /* an enum: never odr-used, never needs a definition */
    size_t n_;
    const nt_tensor *of_;       /* the tensor these are the sizes of, for error reports */
    const int64_t *ext_;        /* ... and its own array of them (nt_sizes), or NULL */
    int64_t v_[kMax];
};

inline bool operator==(const IntArrayRef &a, const IntArrayRef &b) noexcept { return a.equals(b); }
inline bool operator!=(const IntArrayRef &a, const IntArrayRef &b) noexcept { return !a.equals(b); }

} // namespace torch

namespace c10 {
using torch::IntArrayRef;
using torch::Scalar;
} // namespace c10

#endif /* NEURONOP_TORCH_DETAIL_TYPES_H */
