// No bool tensors on the device: torch::kBool is there for Scalar::type() only.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::zeros(t.sizes(), torch::TensorOptions().dtype(torch::kBool));
}
