// Host torch indexes a tensor with t[i]; the device's reaches elements through accessors:
// the build says so and how.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    out.fill_(t[0]);
    return out;
}
