/* relu through TCM: copy a chunk in, compute in fast memory, copy it out. */
#include <neuronop.h>

enum { BUF = 1024 };

nt_tensor *relu_forward(const nt_tensor *t_in)
{
    int64_t n = nt_numel(t_in);
    nt_tensor *t_out = get_dst_tensor();
    float *buf = tcm_malloc(sizeof(float) * BUF);
    if (!buf)
        return t_out;
    nt_tcm_accessor in = nt_tcm_accessor_of(t_in), out = nt_tcm_accessor_of(t_out);
    for (int64_t i = 0; i < n; i += BUF) {
        int64_t k = n - i < BUF ? n - i : BUF;
        nt_tensor_to_tcm(&in, buf, i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        nt_tcm_to_tensor(&out, buf, i, k);
    }
    tcm_free(buf);
    return t_out;
}
