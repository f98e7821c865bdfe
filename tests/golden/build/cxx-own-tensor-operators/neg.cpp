// A kernel's own operators on tensors (taking a const torch::Tensor &) are the ones called,
// not the subset's refusals of torch's: this builds, with no message.
#include <torch/torch.h>

static bool operator==(const torch::Tensor &a, const torch::Tensor &b)
{
    return a.sizes() == b.sizes();
}

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor u = torch::mul(t, -1);
    return u == t ? u : t;
}
