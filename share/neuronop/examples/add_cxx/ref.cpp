/* add_cxx reference for neuronop test: host code, the tensor library's torch::add. */
#include <torch/torch.h>

torch::Tensor add_ref(const torch::Tensor &t_a, const torch::Tensor &t_b)
{
    return torch::add(t_a, t_b);
}
