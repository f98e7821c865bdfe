/* relu through a 1024-float TCM buffer, one core, as the seed tutorial's TCM variant. */
#include <torch/torch.h>

static constexpr int64_t buf_elems = 1024;

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::neuron::get_dst_tensor();
    float *buf = static_cast<float *>(tcm_malloc(sizeof(float) * buf_elems));
    if (buf == nullptr)
        return t_out;
    nt_tcm_accessor in = nt_tcm_accessor_of(t_in.nt()), out = nt_tcm_accessor_of(t_out.nt());
    const int64_t n = t_in.numel();
    for (int64_t i = 0; i < n; i += buf_elems) {
        const int64_t k = n - i < buf_elems ? n - i : buf_elems;
        nt_tensor_to_tcm(&in, buf, i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        nt_tcm_to_tensor(&out, buf, i, k);
    }
    tcm_free(buf);
    return t_out;
}
