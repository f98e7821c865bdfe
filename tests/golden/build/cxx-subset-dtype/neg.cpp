// No float64 tensors on the device.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::zeros(t.sizes(), torch::kDouble);
}
