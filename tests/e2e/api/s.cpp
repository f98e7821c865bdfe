/* Shape functions and the registration of the API fixture. */
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor same(const torch::Tensor &t) { return torch::empty(t.sizes(), t.scalar_type()); }
torch::Tensor same4(const torch::Tensor &t, double, int64_t, const torch::Scalar &)
{
    return torch::empty(t.sizes(), t.scalar_type());
}

NEURON_LIBRARY(api, m)
{
    m.def("print_elements", &same, "print_elements");
    m.def("index_3d", &same, "index_3d");
    m.def("stream_scope", &same, "stream_scope");
    m.def("tensorlib", &same4, "tensorlib");
    m.def("bf16_halve", &same, "bf16_halve");
    m.def("coherence", &same, "coherence");
}
