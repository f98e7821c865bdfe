/* relu through a 1024-float TCM buffer, one core, as the seed tutorial's TCM variant. */
#include <torch/torch.h>

static constexpr int64_t buf_elems = 1024;

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    torch::Tensor t_out = get_dst_tensor();
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * buf_elems));
    if (buf == nullptr)
        return t_out;
    auto in = t_in.tcm_accessor();
    auto out = t_out.tcm_accessor();
    const int64_t n = t_in.numel();
    for (int64_t i = 0; i < n; i += buf_elems) {
        const int64_t k = n - i < buf_elems ? n - i : buf_elems;
        in.tensor_to_tcm<float>(buf, i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        out.tcm_to_tensor<float>(buf, i, k);
    }
    torch::neuron::tcm_free(buf);
    return t_out;
}
