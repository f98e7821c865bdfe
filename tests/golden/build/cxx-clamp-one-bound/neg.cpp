// torch::clamp(t, min): torch's bounds are optional, the device's clamp takes both.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::clamp(t, 0);
}
