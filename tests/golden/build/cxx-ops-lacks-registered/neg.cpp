#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    (void)t;
    return torch::neuron::get_dst_tensor();
}
