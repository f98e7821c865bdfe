// torch::neg is host torch's, not the device's: no near-miss suggestion (not 'ones'), and
// what to write instead.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::neg(t);
}
