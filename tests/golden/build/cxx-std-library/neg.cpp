// Kernels link no C++ standard library.
#include <torch/torch.h>
#include <string>

torch::Tensor neg(const torch::Tensor &t)
{
    std::string s(static_cast<size_t>(t.numel()), 'x');
    printf("%s\n", s.c_str());
    return get_dst_tensor();
}
