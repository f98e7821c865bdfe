/* Inputs are read-only through the TCM accessor too: a const tensor's tcm_accessor() has a
 * tcm_to_tensor that does not compile. */
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float)));
    auto a = t.tcm_accessor();
    a.tcm_to_tensor<float>(buf, 0, 1);
    torch::neuron::tcm_free(buf);
    return get_dst_tensor();
}
