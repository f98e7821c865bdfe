/*
 * torchneuron/register.h - NEURON_LIBRARY and torch::Library::def: an op library's registration.
 *
 *     NEURON_LIBRARY(my_ops, m) {
 *         m.def("relu_forward", &relu_fwd_shape, "relu_forward");
 *     }
 *
 * Each def names an op, its shape function (host code, in shape_srcs) and its kernel function
 * (device code, in compute_srcs), which takes the same parameters.  `neuronop build` runs the
 * registration - nothing else - in a child process to learn the ops, so a manifest may leave
 * out `ops:`.  The parameter types an op may have are the device's: torch::Tensor,
 * torch::Scalar, double and int64_t, each by value or by const reference; def refuses any
 * other at compile time with a message that says which rule it breaks.  See neuronop-cxx(3)
 * and neuronop.yaml(5).
 */
#ifndef TORCHNEURON_REGISTER_H
#define TORCHNEURON_REGISTER_H

#include <stdint.h>
#include <type_traits>

#include <neuronop/registry.h>
#include <torch/torch.h>

namespace torch {
namespace neuron_detail {

template <class T> struct kind_of { static constexpr int value = -1; };
template <> struct kind_of<torch::Tensor> { static constexpr int value = NT_REG_TENSOR; };
template <> struct kind_of<torch::Scalar> { static constexpr int value = NT_REG_SCALAR; };
template <> struct kind_of<double> { static constexpr int value = NT_REG_DOUBLE; };
template <> struct kind_of<int64_t> { static constexpr int value = NT_REG_INT64; };

/* One parameter type P of a shape function: its kind, whether it is a const reference, and
 * the rule it breaks when it is neither.  The conditions below are exclusive, so a bad type
 * gets exactly one message. */
template <class P> struct param {
    typedef typename std::remove_reference<P>::type unref;
    typedef typename std::remove_cv<unref>::type type;
    static constexpr bool lref = std::is_lvalue_reference<P>::value;
    static constexpr bool rref = std::is_rvalue_reference<P>::value;
    static constexpr bool mutable_ref = lref && !std::is_const<unref>::value;
    static constexpr int base = kind_of<type>::value;
    static constexpr bool other_int = std::is_integral<type>::value && base < 0;
    static constexpr bool other_float = std::is_floating_point<type>::value && base < 0;
    static_assert(!other_int, "NEURON_LIBRARY: an op's integer parameters must be int64_t, "
                  "as in torch (not int, long long or another integer type)");
    static_assert(!other_float, "NEURON_LIBRARY: an op's floating-point parameters must be "
                  "double, as in torch (not float)");
    static_assert(!(base >= 0 && (mutable_ref || rref)), "NEURON_LIBRARY: an op's parameters "
                  "are passed by value or by const reference, not by non-const or rvalue "
                  "reference");
    static_assert(base >= 0 || other_int || other_float, "NEURON_LIBRARY: an op's parameters "
                  "must be torch::Tensor, torch::Scalar, double or int64_t (by value or const "
                  "reference); the device supports no other type (no std::vector, no "
                  "std::tuple)");
    static constexpr int kind = base;
    static constexpr int byref = lref ? 1 : 0;
};

/* The generated glue passes a Tensor as its one nt_tensor pointer and a Scalar as its
 * nt_scalar (torch/detail/tensor.h, types.h): both must keep that layout and stay trivially
 * copyable. */
static_assert(std::is_trivially_copyable<torch::Tensor>::value &&
              std::is_standard_layout<torch::Tensor>::value &&
              sizeof(torch::Tensor) == sizeof(void *),
              "torch::Tensor must be one nt_tensor pointer, trivially copyable");
static_assert(std::is_trivially_copyable<torch::Scalar>::value &&
              std::is_standard_layout<torch::Scalar>::value &&
              sizeof(torch::Scalar) == sizeof(nt_scalar),
              "torch::Scalar must be one nt_scalar, trivially copyable");

template <class R> struct returns_tensor {
    static_assert(std::is_same<R, torch::Tensor>::value, "NEURON_LIBRARY: a shape function "
                  "must return torch::Tensor");
};

} // namespace neuron_detail

/* The `m` of NEURON_LIBRARY(ns, m). */
class Library {
public:
    Library(nt__registrar *r, const char *ns) noexcept : r_(r), ns_(ns) {}

    const char *ns() const noexcept { return ns_; }

    /* Registers op `name`: shape function `shape`, kernel function `kernel` (a name in
     * compute_srcs, taking the shape function's parameters). */
    template <class R, class... A>
    Library &def(const char *name, R (*shape)(A...), const char *kernel,
                 const char *file = __builtin_FILE(), int line = __builtin_LINE()) noexcept
    {
        (void)sizeof(neuron_detail::returns_tensor<R>);
        const int kinds[] = { neuron_detail::param<A>::kind..., 0 };
        const int byref[] = { neuron_detail::param<A>::byref..., 0 };
        static_assert(sizeof...(A) <= NT_REG_MAX_ARGS, "NEURON_LIBRARY: an op takes at most "
                      "16 parameters");
        nt__reg_def d = {};
        d.op = name;
        d.kernel = kernel;
        d.shape = reinterpret_cast<const void *>(shape);
        d.nargs = static_cast<int>(sizeof...(A));
        for (int i = 0; i < d.nargs; i++) {
            d.kinds[i] = kinds[i];
            d.byref[i] = byref[i];
        }
        d.file = file;
        d.line = line;
        if (r_ && r_->def)
            r_->def(r_, &d);
        return *this;
    }

private:
    nt__registrar *r_;
    const char *ns_;
};

} // namespace torch

/* NEURON_LIBRARY(ns, m) { m.def(...); ... }: defines the library's registration function,
 * which only neuronop calls. */
#define NEURON_LIBRARY(ns, m)                                                                 \
    static void nt__neuron_library_body_##ns(torch::Library &);                                \
    extern "C" void nt__neuron_library(nt__registrar *nt__r);                                  \
    extern "C" void nt__neuron_library(nt__registrar *nt__r)                                   \
    {                                                                                          \
        if (nt__r && nt__r->library)                                                           \
            nt__r->library(nt__r, #ns, __FILE__, __LINE__);                                    \
        torch::Library nt__lib(nt__r, #ns);                                                    \
        nt__neuron_library_body_##ns(nt__lib);                                                 \
    }                                                                                          \
    static void nt__neuron_library_body_##ns(torch::Library &m)

#endif /* TORCHNEURON_REGISTER_H */
