/* A template helper over the element type, given an input's accessor: libtorch deduces
 * float, the device's read-only accessor is another type (an idioms tester's find: g++'s
 * words alone). */
#include <torch/torch.h>

template <typename scalar_t> scalar_t first(torch::TensorAccessor<scalar_t, 1> a) { return a[0]; }

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    out.accessor<float, 1>()[0] = -first(t.accessor<float, 1>());
    return out;
}
