// A TCM accessor of a const tensor cannot copy into it.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto acc = t.tcm_accessor();
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(16));
    acc.tcm_to_tensor<float>(buf, 0, 4);
    torch::neuron::tcm_free(buf);
    return get_dst_tensor();
}
