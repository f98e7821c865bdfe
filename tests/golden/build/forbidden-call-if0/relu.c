/* relu forward and backward; an apostrophe in text the preprocessor skips is no literal. */
#include <stdlib.h>
#include <neuronop.h>

#if 0
it's gone now
#endif

nt_tensor *relu_forward(const nt_tensor *t_in)
{
    nt_tensor *t_out = nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
    nt_accessor in = nt_accessor_of(t_in), out = nt_accessor_of(t_out);
    int64_t n = nt_size(t_in, 0), m = nt_size(t_in, 1);
    if (n < 0)
        exit(1);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            float v = nt_get_f32(&in, i, j);
            nt_set_f32(&out, v > 0.0f ? v : 0.0f, i, j);
        }
    return t_out;
}

nt_tensor *relu_backward(const nt_tensor *t_grad, const nt_tensor *t_in)
{
    (void)t_in;
    return nt_zeros(nt_dim(t_grad), nt_sizes(t_grad), NT_F32);
}
