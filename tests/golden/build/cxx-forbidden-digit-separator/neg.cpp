// A C++14 digit separator is no character literal: the call after it is still found.
#include <torch/torch.h>
#include <stdlib.h>

torch::Tensor neg(const torch::Tensor &t)
{
    if (t.numel() > 10'000)
        exit(1);
    return get_dst_tensor();
}
