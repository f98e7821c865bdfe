/* The C++ twin of run case memcheck-vla (an index past a variable-length array): C++14 has
 * no variable-length arrays, and the device's dialect is compiled with -pedantic-errors. */
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    int n = static_cast<int>(t.numel());
    float tmp[n];
    tmp[n] = 0;
    return get_dst_tensor();
}
