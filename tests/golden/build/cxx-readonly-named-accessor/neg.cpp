// A helper taking torch::TensorAccessor<float, 1>, given a row of an input's accessor: libtorch
// takes it, the device's read-only accessor type does not; the error says why and what to do.
#include <torch/torch.h>

static float dot(torch::TensorAccessor<float, 1> a, torch::TensorAccessor<float, 1> b)
{
    float s = 0;
    for (int64_t i = 0; i < a.size(0); i++)
        s += a[i] * b[i];
    return s;
}

torch::Tensor neg(const torch::Tensor &t)
{
    auto x = t.accessor<float, 2>();
    torch::Tensor out = torch::zeros(t.sizes(), torch::kFloat);
    auto o = out.accessor<float, 2>();
    o[0][0] = dot(x[0], x[0]);
    return out;
}
