/* relu_tcm_cxx reference for neuronop test: host code that reads and writes the flattened
 * tensors in order with streams - deliberately not the kernel's chunked TCM path, so a
 * chunk boundary off by one cannot go unnoticed. */
#include <torch/torch.h>

torch::Tensor relu_ref(const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::empty(t_in.sizes(), torch::kFloat);
    auto in = t_in.read_stream_accessor<float>();
    auto out = t_out.write_stream_accessor<float>();
    for (int64_t i = 0; i < t_in.numel(); i++) {
        float v = in.read();
        out.write(v > 0.0f ? v : 0.0f);
    }
    out.close();
    return t_out;
}
