// a[i] of a 2-D accessor is a row, a temporary, as in torch: it binds to no auto &.  The
// message names torch's type for it, not the header's internals, and says what to write.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    auto o = out.accessor<float, 2>();
    auto &row = o[0];
    row[0] = 1.0f;
    return out;
}
