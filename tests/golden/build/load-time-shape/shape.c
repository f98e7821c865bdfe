/* Shape functions: the output has the input's shape, float32. */
#include <neuronop.h>

nt_tensor *relu_fwd_shape(const nt_tensor *t_in)
{
    return nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
}

nt_tensor *relu_bwd_shape(const nt_tensor *t_grad, const nt_tensor *t_in)
{
    (void)t_in;
    return nt_zeros(nt_dim(t_grad), nt_sizes(t_grad), NT_F32);
}

/* runs when the library loads, the reference's worker included: refused */
__attribute__((constructor)) static void at_load(void)
{
}
