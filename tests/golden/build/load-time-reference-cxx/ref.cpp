// A reference whose file computes a global when the library loads: refused, since that code
// would run in the kernels' worker too.
#include <torch/torch.h>

static int limit = std::rand();

torch::Tensor relu_ref(const torch::Tensor &t)
{
    return torch::clamp(t, 0.0, static_cast<double>(limit));
}
