#include <neuronop.h>

nt_tensor *row_sums_shape(const nt_tensor *t)
{
    return nt_empty(NT_SHAPE(nt_size(t, 0)), NT_F32);
}
