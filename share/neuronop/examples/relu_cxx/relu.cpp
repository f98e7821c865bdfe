/* relu_cxx kernels: relu forward and backward on 2-D float32 tensors with the standard
 * accessor, accessor<float, 2>, indexed a[i][j] - the training tutorial's first kernels.
 * Every a[i][j] is a runtime call, which makes this the slowest of the three relu variants
 * (compare relu_tcm_cxx and relu_multicore_cxx with neuronop bench). */
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();

    int64_t rows = t_in.size(0), cols = t_in.size(1);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            float v = in_acc[i][j];
            out_acc[i][j] = v > 0.0f ? v : 0.0f;
        }
    }
    return t_out;
}

/* The gradient passes where the forward input was positive, and is 0 elsewhere. */
torch::Tensor relu_backward(const torch::Tensor &t_grad, const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::zeros(t_grad.sizes(), torch::kFloat);
    auto grad_acc = t_grad.accessor<float, 2>();
    auto in_acc = t_in.accessor<float, 2>();
    auto out_acc = t_out.accessor<float, 2>();

    int64_t rows = t_grad.size(0), cols = t_grad.size(1);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++)
            out_acc[i][j] = in_acc[i][j] > 0.0f ? grad_acc[i][j] : 0.0f;
    }
    return t_out;
}
