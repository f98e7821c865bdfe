#include <torch/torch.h>

static constexpr int64_t start = 1;

torch::Tensor neg(const torch::Tensor &t)
{
    (void)t;
    return torch::Tensor(nt_zeros(1, &start, NT_F32));
}
