#include <torch/torch.h>

torch::Tensor forward_cpu(int64_t B, int64_t T, int64_t C, torch::Tensor w, torch::Tensor u,
                          torch::Tensor k, torch::Tensor v, torch::Tensor y)
{
    (void)B; (void)T; (void)C; (void)w; (void)u; (void)k; (void)v;
    return y;
}
