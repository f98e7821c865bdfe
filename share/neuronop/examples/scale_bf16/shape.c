#include <neuronop.h>

nt_tensor *scale_shape(const nt_tensor *x, double factor)
{
    (void)factor;
    return nt_empty(nt_dim(x), nt_sizes(x), NT_BF16);
}
