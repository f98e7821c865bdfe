/* relu_cxx shape functions and registration: host code.  Each output is float32 with the
 * shape of the first input; NEURON_LIBRARY names the two ops and their kernels. */
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor relu_fwd_shape(const torch::Tensor &t_in)
{
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

torch::Tensor relu_bwd_shape(const torch::Tensor &t_grad, const torch::Tensor &t_in)
{
    (void)t_in;
    return torch::zeros(t_grad.sizes(), torch::kFloat);
}

NEURON_LIBRARY(relu_ops, m) {
    m.def("relu_forward", &relu_fwd_shape, "relu_forward");
    m.def("relu_backward", &relu_bwd_shape, "relu_backward");
}
