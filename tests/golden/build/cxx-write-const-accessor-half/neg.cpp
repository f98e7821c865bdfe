/* A const accessor of half elements: g++ names the element's operator, not which accessor,
 * so the hint says both ways an element is const (a reviewer's find: only the read-only
 * tensor's was said). */
#include <torch/torch.h>

torch::Tensor neg(const torch::Tensor &t)
{
    torch::Tensor out = get_dst_tensor();
    const auto a = out.accessor<c10::Half, 1>();
    a[0] = t.accessor<c10::Half, 1>()[0];
    return out;
}
