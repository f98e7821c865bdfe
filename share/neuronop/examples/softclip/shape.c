#include <neuronop.h>

nt_tensor *softclip_shape(const nt_tensor *x, double limit, nt_scalar alpha)
{
    (void)limit;
    (void)alpha;
    return nt_empty(nt_dim(x), nt_sizes(x), NT_F32);
}
