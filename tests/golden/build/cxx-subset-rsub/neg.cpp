// rsub, which the subset has as sub with its operands swapped: said so, never "did you mean
// 'sub'", whose result has the other sign.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor x = t;
    torch::Tensor one = torch::ones(t.sizes(), t.scalar_type());
    return torch::rsub(x, one);
}
