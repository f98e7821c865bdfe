// A comparison, % ^ or a shift of tensors (valid libtorch) is not in the device's subset, which
// has no function for it either: the error says so, and to work on each element instead.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor positive = t > 0;
    return positive;
}
