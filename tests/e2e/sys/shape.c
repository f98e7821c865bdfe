#include <neuronop.h>

nt_tensor *negate_shape(const nt_tensor *t_in)
{
    return nt_empty(nt_dim(t_in), nt_sizes(t_in), nt_dtype_of(t_in));
}
