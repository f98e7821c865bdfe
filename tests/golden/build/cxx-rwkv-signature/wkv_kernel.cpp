#include <torch/torch.h>

torch::Tensor forward_cpu(torch::Tensor w, torch::Tensor u, torch::Tensor k, torch::Tensor v,
                          torch::Tensor y, torch::Tensor out)
{
    (void)w; (void)u; (void)k; (void)v; (void)y;
    return out;
}
