/*
 * torch/detail/subset.h - torch functions the device's port does not have.  Included by
 * <torch/torch.h>; not on its own.
 *
 * Calling one is a compile error at the call that says so in one line, where g++ would
 * otherwise print "is not a member of 'torch'" (for the commonest, these) or a page of
 * overload candidates.  Any other name torch has and this list lacks still fails to compile;
 * `neuronop build` words that error the same way (lib/build/syscc.c).
 */
#ifndef NEURONOP_TORCH_DETAIL_SUBSET_H
#define NEURONOP_TORCH_DETAIL_SUBSET_H

#define NT__TORCH_NOT_ON_DEVICE(name)                                                         \
    template <class... A> inline Tensor name(A &&...)                                         \
    {                                                                                         \
        static_assert(detail::never<A...>::value, "'torch::" #name "' is not in the device's " \
                      "torch subset (neuronop-cxx(3) lists what it has)");                    \
        return Tensor();                                                                      \
    }

namespace torch {
NT__TORCH_NOT_ON_DEVICE(matmul) NT__TORCH_NOT_ON_DEVICE(mm) NT__TORCH_NOT_ON_DEVICE(bmm)
NT__TORCH_NOT_ON_DEVICE(mv) NT__TORCH_NOT_ON_DEVICE(dot) NT__TORCH_NOT_ON_DEVICE(einsum)
NT__TORCH_NOT_ON_DEVICE(relu) NT__TORCH_NOT_ON_DEVICE(sigmoid) NT__TORCH_NOT_ON_DEVICE(tanh)
NT__TORCH_NOT_ON_DEVICE(sqrt) NT__TORCH_NOT_ON_DEVICE(rsqrt) NT__TORCH_NOT_ON_DEVICE(neg)
NT__TORCH_NOT_ON_DEVICE(softmax) NT__TORCH_NOT_ON_DEVICE(log_softmax)
NT__TORCH_NOT_ON_DEVICE(sum) NT__TORCH_NOT_ON_DEVICE(mean) NT__TORCH_NOT_ON_DEVICE(max)
NT__TORCH_NOT_ON_DEVICE(min) NT__TORCH_NOT_ON_DEVICE(maximum) NT__TORCH_NOT_ON_DEVICE(minimum)
NT__TORCH_NOT_ON_DEVICE(argmax) NT__TORCH_NOT_ON_DEVICE(argmin) NT__TORCH_NOT_ON_DEVICE(where)
NT__TORCH_NOT_ON_DEVICE(cat) NT__TORCH_NOT_ON_DEVICE(stack) NT__TORCH_NOT_ON_DEVICE(reshape)
NT__TORCH_NOT_ON_DEVICE(transpose) NT__TORCH_NOT_ON_DEVICE(from_blob)
NT__TORCH_NOT_ON_DEVICE(tensor) NT__TORCH_NOT_ON_DEVICE(arange) NT__TORCH_NOT_ON_DEVICE(linspace)
NT__TORCH_NOT_ON_DEVICE(rand) NT__TORCH_NOT_ON_DEVICE(randn) NT__TORCH_NOT_ON_DEVICE(randint)
NT__TORCH_NOT_ON_DEVICE(empty_like) NT__TORCH_NOT_ON_DEVICE(zeros_like)
NT__TORCH_NOT_ON_DEVICE(ones_like) NT__TORCH_NOT_ON_DEVICE(full_like)
NT__TORCH_NOT_ON_DEVICE(sign) NT__TORCH_NOT_ON_DEVICE(round) NT__TORCH_NOT_ON_DEVICE(trunc)
NT__TORCH_NOT_ON_DEVICE(erf) NT__TORCH_NOT_ON_DEVICE(fmod) NT__TORCH_NOT_ON_DEVICE(remainder)
NT__TORCH_NOT_ON_DEVICE(exp2) NT__TORCH_NOT_ON_DEVICE(expm1) NT__TORCH_NOT_ON_DEVICE(log1p)
NT__TORCH_NOT_ON_DEVICE(sinh) NT__TORCH_NOT_ON_DEVICE(cosh) NT__TORCH_NOT_ON_DEVICE(asin)
NT__TORCH_NOT_ON_DEVICE(acos) NT__TORCH_NOT_ON_DEVICE(atan) NT__TORCH_NOT_ON_DEVICE(atan2)
NT__TORCH_NOT_ON_DEVICE(bitwise_xor) NT__TORCH_NOT_ON_DEVICE(conv1d)
NT__TORCH_NOT_ON_DEVICE(conv2d) NT__TORCH_NOT_ON_DEVICE(linear)
} // namespace torch

#undef NT__TORCH_NOT_ON_DEVICE

#endif /* NEURONOP_TORCH_DETAIL_SUBSET_H */
