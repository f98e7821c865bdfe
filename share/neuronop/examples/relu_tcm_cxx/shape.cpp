/* relu_tcm_cxx shape function and registration: host code.  The output is float32 with the
 * input's shape (any number of dimensions: the kernel works on the flattened tensor). */
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor relu_fwd_shape(const torch::Tensor &t_in)
{
    return torch::zeros(t_in.sizes(), torch::kFloat);
}

NEURON_LIBRARY(relu_tcm_ops, m) {
    m.def("relu_forward", &relu_fwd_shape, "relu_forward");
}
