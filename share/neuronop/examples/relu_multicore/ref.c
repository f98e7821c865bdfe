/* The reference relu for the tests: plain host code, held to no device rule, so it may use
 * the simplest accessor.  neuronop test compares the kernel's output with it. */
#include <neuronop.h>

nt_tensor *relu_ref(const nt_tensor *t)
{
    nt_tensor *out = nt_empty(nt_dim(t), nt_sizes(t), NT_F32);
    return nt_clamp_out(out, t, nt_scalar_f(0.0), nt_scalar_f(3.4e38));
}
