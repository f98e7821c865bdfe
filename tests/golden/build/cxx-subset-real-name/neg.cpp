// A real torch function the subset lacks, a letter from one it has (sum, sub): no "did you
// mean", which would change what the kernel computes.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor x = t;
    return torch::sum(x);
}
