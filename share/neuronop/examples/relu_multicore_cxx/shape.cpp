/* relu_multicore_cxx shape function and registration: host code.  In multicore the shape
 * function's tensor is what get_dst_tensor() gives each core: float32, the input's shape. */
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor relu_fwd_shape(const torch::Tensor &t_in)
{
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(relu_multicore_ops, m) {
    m.def("relu_forward", &relu_fwd_shape, "relu_forward");
}
