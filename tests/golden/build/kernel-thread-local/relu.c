/* Per-core scratch in thread-local data: one copy per host thread here, one for all cores
 * on the device (initial-exec, which needs no call a build refuses). */
#include <neuronop.h>

__thread __attribute__((tls_model("initial-exec"))) float relu_scratch[4];

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
