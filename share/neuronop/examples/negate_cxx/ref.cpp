/* negate_cxx reference for neuronop test: host code that computes -x another way, with the
 * tensor library's mul by the Scalar -1, so the kernel is held to an independent answer. */
#include <torch/torch.h>

torch::Tensor negate_ref(const torch::Tensor &t_in)
{
    return torch::mul(t_in, torch::Scalar(-1));
}
