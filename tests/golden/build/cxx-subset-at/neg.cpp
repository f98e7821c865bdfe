// A function ATen has and the device's port lacks, named as at:: (libtorch's at:: has
// torch's functions and c10's names): one line saying so, at the call.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return at::sigmoid(t);
}
