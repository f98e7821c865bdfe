/* negate_cxx shape function and registration: host code.  The output is a 1-D float32
 * tensor as long as the input; NEURON_LIBRARY gives neuronop the op, so the manifest lists
 * no ops. */
#include <stdint.h>
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor negate_shape(const torch::Tensor &t_in)
{
    size_t num_elem = t_in.numel();
    return torch::zeros({num_elem}, torch::kFloat);
}

NEURON_LIBRARY(negate_ops, m) {
    m.def("negate", &negate_shape, "negate");
}
