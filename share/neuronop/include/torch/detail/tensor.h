/*
 * torch/detail/tensor.h - torch::Tensor and torch::CoherencyEnforcer.  Included by
 * <torch/torch.h>; not on its own.
 *
 * A Tensor is a handle: one pointer to the runtime's tensor (the C API's nt_tensor), trivially
 * copyable, so an op's Tensor argument is passed exactly as the C API's `const nt_tensor *`
 * (torchneuron/register.h asserts this) and copying one copies no data.  Tensors are owned by
 * the device for the rest of the op: a factory's result needs no freeing.
 *
 * Const-ness follows the device's API reference: a const Tensor (a kernel's `const
 * torch::Tensor &` inputs) gives read-only accessors; a non-const one gives writable ones.
 * Writing an input through a non-const copy is still a device error (the runtime checks).
 */
#ifndef NEURONOP_TORCH_DETAIL_TENSOR_H
#define NEURONOP_TORCH_DETAIL_TENSOR_H

namespace torch {

/* The coherence policy of a tensor's standard and streaming accessors (neuronop-api(3)). */
class CoherencyEnforcer {
public:
    enum Policy {
        COHERENT = NT_COHERENT,                   /* possibly incoherent access: an error */
        INCOHERENT_VERBOSE = NT_INCOHERENT_VERBOSE,  /* ... a warning */
        INCOHERENT_QUIET = NT_INCOHERENT_QUIET,   /* ... allowed */
    };
};

/* Members torch has and the device does not: a call is a compile error that says so. */
#define NT__TORCH_NOT_A_MEMBER(name)                                                          \
    template <class R = Tensor, class... A> R name(A &&...) const                             \
    {                                                                                         \
        static_assert(detail::never<R, A...>::value, "'torch::Tensor::" #name "' is not in "  \
                      "the device's torch subset (neuronop-cxx(3) lists what it has)");       \
        return R();                                                                           \
    }

class Tensor {
public:
    Tensor() noexcept : t_(nullptr) {}
    /* The tensor of a C API handle (neuronop.h), for code that mixes the two. */
    explicit Tensor(const nt_tensor *t) noexcept : t_(t) {}

    bool defined() const noexcept { return t_ != nullptr; }
    int64_t numel() const noexcept { return nt_numel(t_); }
    int64_t dim() const noexcept { return nt_dim(t_); }
    int64_t ndimension() const noexcept { return nt_dim(t_); }
    /* dim < 0 counts from the end; one no int holds is out of range (not wrapped onto a
     * dimension by nt_size's int) */
    int64_t size(int64_t dim) const noexcept
    {
        if (dim != static_cast<int>(dim))
            nt__cxx_check(NT__CXX_DIM, t_, dim, 0);
        return nt_size(t_, static_cast<int>(dim));
    }
    IntArrayRef sizes() const noexcept { return IntArrayRef(t_); }
    ScalarType scalar_type() const noexcept { return detail::from_nt(nt_dtype_of(t_)); }
    ScalarType dtype() const noexcept { return scalar_type(); }
    /* an element's size in bytes, and all of the tensor's (torch's TensorBase) */
    int64_t element_size() const noexcept
    {
        return static_cast<int64_t>(c10::elementSize(scalar_type()));
    }
    size_t itemsize() const noexcept { return c10::elementSize(scalar_type()); }
    size_t nbytes() const noexcept { return static_cast<size_t>(numel()) * itemsize(); }

    template <class T, size_t N> TensorAccessor<T, N, true> accessor() const & noexcept
    {
        return TensorAccessor<T, N, true>(t_);
    }
    template <class T, size_t N> TensorAccessor<T, N, false> accessor() & noexcept
    {
        return TensorAccessor<T, N, false>(t_);
    }
    template <class T> TensorReadStreamAccessor<T> read_stream_accessor() const & noexcept
    {
        return TensorReadStreamAccessor<T>(t_);
    }
    template <class T> TensorWriteStreamAccessor<T> write_stream_accessor() & noexcept
    {
        return TensorWriteStreamAccessor<T>(t_);
    }
    TensorTcmAccessor<true> tcm_accessor() const & noexcept { return TensorTcmAccessor<true>(t_); }
    TensorTcmAccessor<false> tcm_accessor() & noexcept { return TensorTcmAccessor<false>(t_); }
    /* No && forms, as in the device's API: a temporary (get_dst_tensor().tcm_accessor())
     * takes the const & ones and is read-only there, so it is here too.  Name the tensor
     * first: torch::Tensor out = get_dst_tensor(); */

    CoherencyEnforcer::Policy get_accessor_coherence_policy() const noexcept
    {
        return static_cast<CoherencyEnforcer::Policy>(nt_get_coherence(t_));
    }
    void set_accessor_coherence_policy(CoherencyEnforcer::Policy policy) const noexcept
    {
        nt_set_coherence(t_, static_cast<int>(policy));
    }

    Tensor &fill_(const Scalar &value) const noexcept
    {
        nt_fill_(mut(), value.nt());
        return const_cast<Tensor &>(*this);
    }

    /* The C API's handle (neuronop.h): for calling the C API from C++. */
    nt_tensor *nt() const noexcept { return mut(); }

    template <class T = void, class... A> T *data_ptr(A &&...) const
    {
        static_assert(detail::never<T, A...>::value, "'torch::Tensor::data_ptr' is not in the "
                      "device's torch subset: reach tensor data through an accessor "
                      "(neuronop-cxx(3))");
        return nullptr;
    }
    NT__TORCH_NOT_A_MEMBER(item) NT__TORCH_NOT_A_MEMBER(view)
    NT__TORCH_NOT_A_MEMBER(reshape) NT__TORCH_NOT_A_MEMBER(contiguous) NT__TORCH_NOT_A_MEMBER(to)
    NT__TORCH_NOT_A_MEMBER(clone) NT__TORCH_NOT_A_MEMBER(copy_) NT__TORCH_NOT_A_MEMBER(zero_)
    NT__TORCH_NOT_A_MEMBER(index) NT__TORCH_NOT_A_MEMBER(select) NT__TORCH_NOT_A_MEMBER(narrow)
    NT__TORCH_NOT_A_MEMBER(slice) NT__TORCH_NOT_A_MEMBER(transpose) NT__TORCH_NOT_A_MEMBER(permute)
    NT__TORCH_NOT_A_MEMBER(squeeze) NT__TORCH_NOT_A_MEMBER(unsqueeze)
    NT__TORCH_NOT_A_MEMBER(flatten) NT__TORCH_NOT_A_MEMBER(sum) NT__TORCH_NOT_A_MEMBER(mean)
    NT__TORCH_NOT_A_MEMBER(max) NT__TORCH_NOT_A_MEMBER(min) NT__TORCH_NOT_A_MEMBER(matmul)
    NT__TORCH_NOT_A_MEMBER(mm) NT__TORCH_NOT_A_MEMBER(add) NT__TORCH_NOT_A_MEMBER(sub)
    NT__TORCH_NOT_A_MEMBER(mul) NT__TORCH_NOT_A_MEMBER(div) NT__TORCH_NOT_A_MEMBER(add_)
    NT__TORCH_NOT_A_MEMBER(sub_) NT__TORCH_NOT_A_MEMBER(mul_) NT__TORCH_NOT_A_MEMBER(div_)
    NT__TORCH_NOT_A_MEMBER(exp) NT__TORCH_NOT_A_MEMBER(relu) NT__TORCH_NOT_A_MEMBER(cpu)
    NT__TORCH_NOT_A_MEMBER(cuda) NT__TORCH_NOT_A_MEMBER(expand) NT__TORCH_NOT_A_MEMBER(repeat)

private:
    nt_tensor *mut() const noexcept { return const_cast<nt_tensor *>(t_); }
    const nt_tensor *t_;
};

#undef NT__TORCH_NOT_A_MEMBER

/* torch's Tensor operators (t * 2, a + b, -t, t += x, t > 0, t % 2 ...) are not in the
 * device's subset: each is a compile error that names the function to call, or, for those
 * the subset has no function for (comparisons, % and ^), says to compute on each element
 * (g++'s own "no match for 'operator%'" would not say the subset lacks it).  By const
 * reference, so that a kernel's own operator on tensors (an operator<< that prints one,
 * taking a const Tensor &) is a better match than these and is the one called. */
namespace detail {
template <class A, class B = Tensor> struct any_tensor {
    static constexpr bool value = std::is_same<typename std::decay<A>::type, Tensor>::value ||
                                  std::is_same<typename std::decay<B>::type, Tensor>::value;
};
} // namespace detail
#define NT__TORCH_TENSOR_OP(op, hint)                                                         \
    template <class A, class B,                                                               \
              typename std::enable_if<detail::any_tensor<A, B>::value, int>::type = 0>        \
    Tensor operator op(const A &, const B &)                                                  \
    {                                                                                         \
        static_assert(detail::never<A, B>::value, "torch::Tensor's operator" #op " is not "   \
                      "in the device's torch subset" hint " (neuronop-cxx(3))");              \
        return Tensor(); /* what libtorch's returns: code that uses it has no other error */  \
    }
#define NT__TORCH_BY_ELEMENT ", nor is a function that does it: compute it on each element " \
                             "through an accessor"
NT__TORCH_TENSOR_OP(+, ": call torch::add") NT__TORCH_TENSOR_OP(-, ": call torch::sub")
NT__TORCH_TENSOR_OP(*, ": call torch::mul") NT__TORCH_TENSOR_OP(/, ": call torch::div")
NT__TORCH_TENSOR_OP(&, ": call torch::bitwise_and")
NT__TORCH_TENSOR_OP(|, ": call torch::bitwise_or")
NT__TORCH_TENSOR_OP(+=, ": call torch::add_out") NT__TORCH_TENSOR_OP(-=, ": call torch::sub_out")
NT__TORCH_TENSOR_OP(*=, ": call torch::mul_out") NT__TORCH_TENSOR_OP(/=, ": call torch::div_out")
NT__TORCH_TENSOR_OP(&=, ": call torch::bitwise_and_out")
NT__TORCH_TENSOR_OP(|=, ": call torch::bitwise_or_out")
NT__TORCH_TENSOR_OP(==, NT__TORCH_BY_ELEMENT) NT__TORCH_TENSOR_OP(!=, NT__TORCH_BY_ELEMENT)
NT__TORCH_TENSOR_OP(<, NT__TORCH_BY_ELEMENT) NT__TORCH_TENSOR_OP(>, NT__TORCH_BY_ELEMENT)
NT__TORCH_TENSOR_OP(<=, NT__TORCH_BY_ELEMENT) NT__TORCH_TENSOR_OP(>=, NT__TORCH_BY_ELEMENT)
NT__TORCH_TENSOR_OP(%, NT__TORCH_BY_ELEMENT) NT__TORCH_TENSOR_OP(^, NT__TORCH_BY_ELEMENT)
NT__TORCH_TENSOR_OP(%=, NT__TORCH_BY_ELEMENT) NT__TORCH_TENSOR_OP(^=, NT__TORCH_BY_ELEMENT)
/* libtorch's << prints a tensor to a stream (a shift is no more libtorch's than the device's) */
NT__TORCH_TENSOR_OP(<<, ", nor is printing one to a stream: print its elements with printf "
                        "through an accessor")
#undef NT__TORCH_BY_ELEMENT
#undef NT__TORCH_TENSOR_OP
#define NT__TORCH_TENSOR_UNARY(op, fn)                                                        \
    template <class A, typename std::enable_if<detail::any_tensor<A>::value &&                \
                                               std::is_same<typename std::decay<A>::type,     \
                                                            Tensor>::value, int>::type = 0>   \
    Tensor operator op(const A &)                                                             \
    {                                                                                         \
        static_assert(detail::never<A>::value, "torch::Tensor's operator" #op " is not in "   \
                      "the device's torch subset: call " fn " (neuronop-cxx(3))");            \
        return Tensor();                                                                      \
    }
NT__TORCH_TENSOR_UNARY(-, "torch::mul(t, -1)") NT__TORCH_TENSOR_UNARY(~, "torch::bitwise_not")
#undef NT__TORCH_TENSOR_UNARY

} // namespace torch

#endif /* NEURONOP_TORCH_DETAIL_TENSOR_H */
