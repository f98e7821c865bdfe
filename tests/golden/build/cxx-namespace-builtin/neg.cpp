// NEURON_LIBRARY(builtin, m) in shape.cpp: gpsimd.md reserves the library name 'builtin',
// which is refused there as it is as a manifest's name.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    return torch::mul(t, -1);
}
