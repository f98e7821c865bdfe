// A member the subset lacks, given a braced list: no template can take that, g++ says
// "no matching function"; neuronop says what is missing.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return t.view({2, 3});
}
