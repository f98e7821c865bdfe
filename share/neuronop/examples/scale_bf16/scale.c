/* out = x * factor for bfloat16 x, 512 elements (1 KB of TCM) at a time. */
#include <neuronop.h>

enum { CHUNK = 512 };

nt_tensor *scale(const nt_tensor *x, double factor)
{
    nt_tensor *out = get_dst_tensor();
    uint16_t *buf = tcm_malloc(sizeof(uint16_t) * CHUNK);
    if (!buf)
        return out;
    nt_tcm_accessor in = nt_tcm_accessor_of(x), o = nt_tcm_accessor_of(out);
    int64_t n = nt_numel(x);
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t k = n - i < CHUNK ? n - i : CHUNK;
        nt_tensor_to_tcm(&in, buf, i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = nt_f32_to_bf16(nt_bf16_to_f32(buf[j]) * (float)factor);
        nt_tcm_to_tensor(&o, buf, i, k);
    }
    tcm_free(buf);
    return out;
}
