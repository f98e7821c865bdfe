#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = torch::neuron::get_dst_tensor();
    return out + undeclared;
}
