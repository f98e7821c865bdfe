#include <neuronop.h>

nt_tensor *add_shape(const nt_tensor *a, const nt_tensor *b)
{
    (void)b;
    return nt_empty(nt_dim(a), nt_sizes(a), NT_F32);
}
