// A misspelt or unknown torch name: the suggestion comes from what the device has.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor x = t;
    return torch::exps(x);
}
