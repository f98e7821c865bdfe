/* A scratch array in a section of its own: GNU ld puts .ldata in a second writable segment,
 * which the check of written globals would not compare (compiler: cc, whose objects keep the
 * section). */
#include <neuronop.h>

float relu_scratch[4] __attribute__((section(".ldata")));

nt_tensor *relu_forward(const nt_tensor *t_in)
{
    nt_tensor *out = get_dst_tensor();
    nt_accessor in = nt_accessor_of(t_in), o = nt_accessor_of(out);
    for (int64_t i = 0; i < nt_numel(t_in); i++) {
        relu_scratch[i % 4] = nt_get_f32(&in, i);
        nt_set_f32(&o, relu_scratch[i % 4] > 0 ? relu_scratch[i % 4] : 0, i);
    }
    return out;
}
