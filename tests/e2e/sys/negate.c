#include <stdio.h>
#include <string.h>
#include <math.h>
/* out[i][j] = -in[i][j] for a 2-D float32 tensor, element by element. */
#include <neuronop.h>

nt_tensor *negate(const nt_tensor *t_in)
{
    nt_tensor *t_out = get_dst_tensor();
    nt_accessor in = nt_accessor_of(t_in), out = nt_accessor_of(t_out);
    for (int64_t i = 0; i < nt_size(t_in, 0); i++)
        for (int64_t j = 0; j < nt_size(t_in, 1); j++)
            nt_set_f32(&out, -nt_get_f32(&in, i, j), i, j);
    return t_out;
}
