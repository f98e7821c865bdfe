// auto of a writable accessor's element would be a handle on the element, not a copy.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    auto prev = o[0];
    o[1] = prev;
    return out;
}
