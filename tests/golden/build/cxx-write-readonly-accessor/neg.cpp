/* The C++ twin of the run-time rule "inputs are read-only" (run case access-write-input):
 * an input is a const Tensor, its accessor is read-only, and a write through it does not
 * compile. */
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto a = t.accessor<float, 1>();
    a[0] = -a[0];
    return get_dst_tensor();
}
