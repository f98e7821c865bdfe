// An input is const: it has no write stream.
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto w = t.write_stream_accessor<float>();
    w.write(1.0f);
    return get_dst_tensor();
}
