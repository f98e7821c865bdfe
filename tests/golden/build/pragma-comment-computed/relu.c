/* relu forward and backward with the standard accessor, as in the seed's training tutorial. */
#include <neuronop.h>
#define QUIET "detail/quiet.h"   /* which file a macro names, only the compiler knows: */
#include QUIET                    /* every file of the folder is looked at */

nt_tensor *relu_forward(const nt_tensor *t_in)
{
    nt_tensor *t_out = nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
    nt_accessor in = nt_accessor_of(t_in), out = nt_accessor_of(t_out);
    int64_t n = nt_size(t_in, 0), m = nt_size(t_in, 1);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            float v = nt_get_f32(&in, i, j);
            nt_set_f32(&out, v > 0.0f ? v : 0.0f, i, j);
        }
    return t_out;
}

nt_tensor *relu_backward(const nt_tensor *t_grad, const nt_tensor *t_in)
{
    nt_tensor *t_out = nt_zeros(nt_dim(t_grad), nt_sizes(t_grad), NT_F32);
    nt_accessor grad = nt_accessor_of(t_grad), in = nt_accessor_of(t_in);
    nt_accessor out = nt_accessor_of(t_out);
    int64_t n = nt_size(t_grad, 0), m = nt_size(t_grad, 1);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
            nt_set_f32(&out, nt_get_f32(&in, i, j) > 0.0f ? nt_get_f32(&grad, i, j) : 0.0f,
                       i, j);
    return t_out;
}
