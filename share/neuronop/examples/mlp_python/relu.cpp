/* mlp_python kernels: the relu of a training loop, forward and backward, each streaming its
 * tensors through the core's TCM in chunks: two bulk copies per chunk rather than a runtime
 * call per element, which is what keeps a training step quick on the virtual array too. */
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

static constexpr size_t kChunk = 1024;   /* floats: 4 KB of a core's 16 KB TCM */

static float *tcm_floats(size_t n)
{
    float *p = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * n));
    if (p == nullptr) {   /* the pool is 16 KB; one 4 KB chunk at a time cannot fail */
        printf("mlp_python: tcm_malloc(%zu) failed\n", sizeof(float) * n);
        abort();
    }
    return p;
}

/* y = x where x > 0, else 0 */
torch::Tensor relu_forward(const torch::Tensor &x)
{
    torch::Tensor y = get_dst_tensor();
    float *buf = tcm_floats(kChunk);
    auto x_tcm = x.tcm_accessor();
    auto y_tcm = y.tcm_accessor();
    size_t total = x.numel();
    for (size_t at = 0; at < total; at += kChunk) {
        size_t n = total - at < kChunk ? total - at : kChunk;
        x_tcm.tensor_to_tcm<float>(buf, at, n);
        for (size_t k = 0; k < n; k++)
            buf[k] = buf[k] > 0.0f ? buf[k] : 0.0f;
        y_tcm.tcm_to_tensor<float>(buf, at, n);
    }
    torch::neuron::tcm_free(buf);
    return y;
}

/* dx = grad where the forward's input x was > 0, else 0 (what torch.relu's backward does) */
torch::Tensor relu_backward(const torch::Tensor &grad, const torch::Tensor &x)
{
    torch::Tensor dx = get_dst_tensor();
    float *g = tcm_floats(kChunk);
    float *v = tcm_floats(kChunk);
    auto grad_tcm = grad.tcm_accessor();
    auto x_tcm = x.tcm_accessor();
    auto dx_tcm = dx.tcm_accessor();
    size_t total = grad.numel();
    for (size_t at = 0; at < total; at += kChunk) {
        size_t n = total - at < kChunk ? total - at : kChunk;
        grad_tcm.tensor_to_tcm<float>(g, at, n);
        x_tcm.tensor_to_tcm<float>(v, at, n);
        for (size_t k = 0; k < n; k++)
            g[k] = v[k] > 0.0f ? g[k] : 0.0f;
        dx_tcm.tcm_to_tensor<float>(g, at, n);
    }
    torch::neuron::tcm_free(v);
    torch::neuron::tcm_free(g);
    return dx;
}
