// A read-only bf16 element is a value; assigning to it must not compile (and do nothing).
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto a = t.accessor<c10::BFloat16, 1>();
    a[0] = 1.0f;
    return get_dst_tensor();
}
