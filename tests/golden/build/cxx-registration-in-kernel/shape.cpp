#include <torch/torch.h>

torch::Tensor neg_shape(const torch::Tensor &t) { return torch::empty(t.sizes(), t.scalar_type()); }
