/* Each step allocates its result except the last, which writes into the output (_out). */
#include <neuronop.h>

nt_tensor *softclip(const nt_tensor *x, double limit, nt_scalar alpha)
{
    nt_tensor *e = nt_exp(x);
    nt_tensor *c = nt_clamp(e, nt_scalar_f(0.0), nt_scalar_f(limit));
    return nt_add_out(get_dst_tensor(), c, x, alpha);
}
