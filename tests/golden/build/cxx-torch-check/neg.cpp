// TORCH_CHECK throws c10::Error; the device's torch has no such macro (its API reference
// lists none) and no exceptions: the build says so and what to use.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    TORCH_CHECK(t.dim() == 1, "neg takes a 1-D tensor");
    return get_dst_tensor();
}
