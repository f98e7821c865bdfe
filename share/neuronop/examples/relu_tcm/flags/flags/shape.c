/* Shape functions: the output has the input's shape, float32. */
#include <neuronop.h>

nt_tensor *relu_fwd_shape(const nt_tensor *t_in)
{
    return nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
}
