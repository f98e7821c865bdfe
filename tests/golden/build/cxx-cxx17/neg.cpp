#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    if constexpr (sizeof(float) == 4)
        return t;
    return torch::neuron::get_dst_tensor();
}
