/* negate_cxx kernel: the standard accessor, accessor<float, 1>, one element per call.  Each
 * a[i] is a runtime call: the simplest way to reach tensor data, and the slowest.  The input
 * is 1-D: N must be the tensor's number of dimensions, and on a 2-D tensor the device stops
 * the core and says to use accessor<float, 2> (as relu_cxx does). */
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor negate(const torch::Tensor &t_in)
{
    size_t num_elem = t_in.numel();
    torch::Tensor t_out = torch::zeros({num_elem}, torch::kFloat);

    auto in_acc = t_in.accessor<float, 1>();     /* read-only: t_in is const */
    auto out_acc = t_out.accessor<float, 1>();
    for (size_t i = 0; i < num_elem; i++)
        out_acc[i] = -in_acc[i];
    return t_out;
}
