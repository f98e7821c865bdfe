/* Shape functions: the output has the input's shape, float32.  The kernel copies the input's
 * bytes into a TCM buffer of floats, so the input must be float32 too (a bfloat16 one would
 * be read as garbage): checked here, where a failed assert is reported with its line. */
#include <assert.h>
#include <neuronop.h>

nt_tensor *relu_fwd_shape(const nt_tensor *t_in)
{
    assert(nt_dtype_of(t_in) == NT_F32 && "relu_forward takes a float32 tensor");
    return nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
}
