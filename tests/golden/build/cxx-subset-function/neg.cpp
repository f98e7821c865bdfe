// A torch function the device's port lacks: one line saying so, at the call.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::matmul(t, t);
}
