// ... and no RTTI.
#include <torch/torch.h>
#include <typeinfo>

torch::Tensor neg(const torch::Tensor &t)
{
    (void)typeid(t);
    return get_dst_tensor();
}
