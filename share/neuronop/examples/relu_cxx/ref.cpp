/* relu_cxx references for neuronop test: host code that reaches the answer another way than
 * the kernels - the forward with the tensor library's clamp, the backward reading the
 * flattened tensors in order with streams - so the kernels' 2-D indexing is checked too. */
#include <float.h>
#include <torch/torch.h>

torch::Tensor relu_fwd_ref(const torch::Tensor &t_in)
{
    return torch::clamp(t_in, 0.0, static_cast<double>(FLT_MAX));
}

torch::Tensor relu_bwd_ref(const torch::Tensor &t_grad, const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::empty(t_grad.sizes(), torch::kFloat);
    auto grad = t_grad.read_stream_accessor<float>();
    auto in = t_in.read_stream_accessor<float>();
    auto out = t_out.write_stream_accessor<float>();
    for (int64_t i = 0; i < t_grad.numel(); i++) {
        float g = grad.read();
        out.write(in.read() > 0.0f ? g : 0.0f);
    }
    out.close();
    return t_out;
}
