// The device's C++ runtime has no exceptions.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    if (t.numel() == 0)
        throw 1;
    return get_dst_tensor();
}
