// c ? element : 0 would make the element an int.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < t.numel(); i++)
        o[i] = o[i] > 0 ? o[i] : 0;
    return out;
}
