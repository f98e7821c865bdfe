#include <neuronop.h>
nt_tensor *same(const nt_tensor *t) { return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }
nt_tensor *same_i(const nt_tensor *t, int64_t d) { (void)d; return same(t); }
nt_tensor *peek_shape(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);   /* shape functions see no data */
    (void)a;
    return same(t);
}
