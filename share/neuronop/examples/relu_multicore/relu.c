/*
 * Multicore relu.  Each core takes n / count elements from its own offset; the last core also
 * takes the remainder.  The public sample computed the last core's offset from its enlarged
 * share and ran past the end when n is not a multiple of the core count; here the offset is
 * computed before the share is enlarged.
 */
#include <neuronop.h>

enum { BUF = 1024 };

nt_tensor *relu_forward(const nt_tensor *t_in)
{
    int64_t n = nt_numel(t_in);
    nt_tensor *t_out = get_dst_tensor();
    uint32_t id = get_cpu_id(), count = get_cpu_count();
    int64_t part = n / count, begin = part * id;
    if (id == count - 1)
        part = n - begin;
    float *buf = tcm_malloc(sizeof(float) * BUF);
    if (!buf)
        return t_out;
    nt_tcm_accessor in = nt_tcm_accessor_of(t_in), out = nt_tcm_accessor_of(t_out);
    for (int64_t i = 0; i < part; i += BUF) {
        int64_t k = part - i < BUF ? part - i : BUF;
        nt_tensor_to_tcm(&in, buf, begin + i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        nt_tcm_to_tensor(&out, buf, begin + i, k);
    }
    tcm_free(buf);
    return t_out;
}
