/* mlp_python shape functions and registration: host code that says what each op returns
 * (a float32 tensor shaped like its first input) without touching any data. */
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor relu_forward_shape(const torch::Tensor &x)
{
    return torch::zeros(x.sizes(), torch::kFloat);
}

torch::Tensor relu_backward_shape(const torch::Tensor &grad, const torch::Tensor &x)
{
    return torch::zeros(grad.sizes(), torch::kFloat);
}

NEURON_LIBRARY(my_ops, m)
{
    m.def("relu_forward", &relu_forward_shape, "relu_forward");
    m.def("relu_backward", &relu_backward_shape, "relu_backward");
}
