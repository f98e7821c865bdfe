/* add_cxx shape function and registration: host code.  a and b have one shape (there is no
 * broadcasting: the kernel adds element by element, and a b of another shape would be read
 * past its end or stopped short of); the output is float32 with that shape. */
#include <cassert>
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor add_shape(const torch::Tensor &t_a, const torch::Tensor &t_b)
{
    assert(t_a.sizes() == t_b.sizes() && "a and b must have one shape: add does not broadcast");
    return torch::empty(t_a.sizes(), torch::kFloat);
}

NEURON_LIBRARY(add_ops, m) {
    m.def("add", &add_shape, "add");
}
