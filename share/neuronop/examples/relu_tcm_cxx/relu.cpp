/* relu_tcm_cxx kernel: relu through a 1024-float TCM buffer on one core, as in the
 * performance tutorial's TCM variant.  Each chunk is copied into the core's fast memory with
 * tensor_to_tcm, computed there with plain pointer access, and copied back out with
 * tcm_to_tensor: two bulk copies per 1024 elements instead of a runtime call per element. */
#include <stdint.h>
#include <stdlib.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor &t_in)
{
    size_t num_elem = t_in.numel();
    torch::Tensor t_out = get_dst_tensor();     /* written in place: no copy of a result */

    static constexpr size_t buffer_size = 1024;  /* 4 KB of the core's 16 KB TCM */
    float *tcm_buffer =
        static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * buffer_size));
    if (tcm_buffer == nullptr) {
        /* Never with this buffer size; stop the core rather than leave the output unwritten. */
        printf("relu_forward: tcm_malloc(%zu) failed\n", sizeof(float) * buffer_size);
        abort();
    }

    auto in_tcm = t_in.tcm_accessor();
    auto out_tcm = t_out.tcm_accessor();
    for (size_t start = 0; start < num_elem; start += buffer_size) {
        size_t left = num_elem - start;
        size_t count = left < buffer_size ? left : buffer_size;

        in_tcm.tensor_to_tcm<float>(tcm_buffer, start, count);
        for (size_t j = 0; j < count; j++)
            tcm_buffer[j] = tcm_buffer[j] > 0.0f ? tcm_buffer[j] : 0.0f;
        out_tcm.tcm_to_tensor<float>(tcm_buffer, start, count);
    }
    torch::neuron::tcm_free(tcm_buffer);
    return t_out;
}
