// A C++17 library type: g++'s note says why it is missing, and two errors are counted.
#include <torch/torch.h>
#include <optional>

torch::Tensor neg(const torch::Tensor &t)
{
    std::optional<int> o;
    (void)undeclared;
    return get_dst_tensor();
}
