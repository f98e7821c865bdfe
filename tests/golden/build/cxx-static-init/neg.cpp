#include <torch/torch.h>

static int64_t start = nt_numel(nullptr);

torch::Tensor neg(const torch::Tensor &t)
{
    (void)t;
    return torch::Tensor(nt_zeros(1, &start, NT_F32));
}
