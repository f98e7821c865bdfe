/* The reference relu, through a helper of the shape function code's. */
#include <neuronop.h>

double clamp_low(double v);

nt_tensor *relu_ref(const nt_tensor *t)
{
    nt_tensor *out = nt_empty(nt_dim(t), nt_sizes(t), NT_F32);
    nt_accessor in = nt_accessor_of(t), o = nt_accessor_of(out);
    for (int64_t i = 0; i < nt_size(t, 0); i++)
        for (int64_t j = 0; j < nt_size(t, 1); j++)
            nt_set_f32(&o, (float)clamp_low(nt_get_f32(&in, i, j)), i, j);
    return out;
}
