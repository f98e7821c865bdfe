// Host torch's accessors have data(); the device's have none: the build says so and what
// to use.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    float *p = o.data();
    p[0] = 1.0f;
    return out;
}
