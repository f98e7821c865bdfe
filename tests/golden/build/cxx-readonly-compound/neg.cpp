// A read-only accessor's element is a const T &: a compound assignment to it does not
// compile, and the message says why in the API's terms.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto a = t.accessor<float, 1>();
    a[0] += 1.0f;
    return get_dst_tensor();
}
