// TensorAccessor<const float, 1>: the read-only form is TensorAccessor<float, 1, true> (what
// accessor<float, 1>() of a const tensor gives); const in the element type is said so,
// not as an element type the device lacks.
#include <torch/torch.h>

static void negate_row(torch::TensorAccessor<const float, 1> in, torch::TensorAccessor<float, 1> out)
{
    for (int64_t j = 0; j < in.size(0); j++)
        out[j] = -in[j];
}

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto in = t.accessor<float, 2>();
    auto o = out.accessor<float, 2>();
    for (int64_t i = 0; i < t.size(0); i++)
        negate_row(in[i], o[i]);
    return out;
}
