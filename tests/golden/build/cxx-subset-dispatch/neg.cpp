// ATen's dtype dispatch, as host extension code picks its element type: one line naming the
// macro, at its use (before, g++'s first word was the lambda's 'scalar_t', not declared).
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = torch::empty(t.sizes(), t.scalar_type());
    AT_DISPATCH_FLOATING_TYPES(t.scalar_type(), "neg", [&] {
        auto in = t.accessor<scalar_t, 1>();
        auto o = out.accessor<scalar_t, 1>();
        for (int64_t i = 0; i < t.size(0); i++)
            o[i] = -in[i];
    });
    return out;
}
