// The API reference lists the unary operations as taking a non-const Tensor &.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::exp(t);
}
