/* tensorlib_cxx shape functions and registration: host code.  Both outputs are float32 with
 * x's shape.  The registration reads each op's argument types from its shape function's
 * parameters: double, int64_t and torch::Scalar become double, int64 and scalar. */
#include <stdint.h>
#include <torch/torch.h>
#include <torchneuron/register.h>

torch::Tensor softclip_shape(const torch::Tensor &x, double limit, const torch::Scalar &alpha)
{
    (void)limit;
    (void)alpha;
    return torch::empty(x.sizes(), torch::kFloat);
}

torch::Tensor poly_shape(const torch::Tensor &x, int64_t exponent, const torch::Scalar &scale,
                         double shift)
{
    (void)exponent;
    (void)scale;
    (void)shift;
    return torch::empty(x.sizes(), torch::kFloat);
}

NEURON_LIBRARY(tensorlib_ops, m) {
    m.def("softclip", &softclip_shape, "softclip");
    m.def("poly", &poly_shape, "poly");
}
