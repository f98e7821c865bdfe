#include <neuronop.h>
nt_tensor *same(const nt_tensor *t) { return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }
nt_tensor *same_r(const nt_tensor *t, int64_t rounds) { (void)rounds; return same(t); }
