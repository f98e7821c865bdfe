// torch::clamp with tensor bounds: torch has it, the device's clamp takes Scalars.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor lo = torch::zeros(t.sizes(), torch::kFloat);
    return torch::clamp(t, lo, t);
}
