// An input is const: its accessor is read-only, so writing through it does not compile.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto a = t.accessor<float, 1>();
    a[0] = -a[0];
    return get_dst_tensor();
}
