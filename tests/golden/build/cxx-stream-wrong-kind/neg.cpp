/* The C++ twin of run case misuse-stream-kind (nt_stream_write_f32 on a read stream): a
 * read stream accessor has no write(), so the misuse does not compile. */
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    auto r = t.read_stream_accessor<float>();
    r.write(1.0f);
    return get_dst_tensor();
}
