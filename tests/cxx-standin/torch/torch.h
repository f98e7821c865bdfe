/*
 * A private stand-in for cxx-api's torch/torch.h, only for cxx-build's tests until the real
 * header is merged: the binary interface of CXX-CONTRACT.md and nothing more.
 */
#ifndef NEURONOP_TEST_TORCH_STANDIN_H
#define NEURONOP_TEST_TORCH_STANDIN_H
#include <neuronop.h>

namespace torch {
class Tensor {
public:
    Tensor() noexcept : t_(nullptr) {}
    explicit Tensor(const nt_tensor *t) noexcept : t_(t) {}
    const nt_tensor *nt() const noexcept { return t_; }
    nt_tensor *mut() const noexcept { return const_cast<nt_tensor *>(t_); }
    bool defined() const noexcept { return t_ != nullptr; }
    int64_t numel() const noexcept { return nt_numel(t_); }
private:
    const nt_tensor *t_;
};
class Scalar {
public:
    Scalar(nt_scalar s) noexcept : s_(s) {}
    Scalar(double v) noexcept : s_(nt_scalar_f(v)) {}
    nt_scalar nt() const noexcept { return s_; }
    double to_double() const noexcept { return nt_scalar_to_f(s_); }
private:
    nt_scalar s_;
};
inline Tensor empty_like(const Tensor &t) noexcept
{
    return Tensor(nt_empty(nt_dim(t.nt()), nt_sizes(t.nt()), nt_dtype_of(t.nt())));
}
namespace neuron {
inline Tensor get_dst_tensor() noexcept { return Tensor(::get_dst_tensor()); }
}
} // namespace torch
#endif
