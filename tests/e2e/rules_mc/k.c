#include <neuronop.h>

/* The public multicore relu sample ported as written: the last core's offset is computed
 * from its enlarged partition, so it runs past the end when n % count != 0. */
nt_tensor *sample_relu(const nt_tensor *t_in)
{
    int64_t n = nt_numel(t_in);
    nt_tensor *t_out = get_dst_tensor();
    uint32_t id = get_cpu_id(), count = get_cpu_count();
    int64_t part = n / count;
    if (id == count - 1)
        part = n - part * (count - 1);
    int64_t begin = part * id;
    float *buf = tcm_malloc(sizeof(float) * 1024);
    nt_tcm_accessor in = nt_tcm_accessor_of(t_in), out = nt_tcm_accessor_of(t_out);
    for (int64_t i = 0; i < part; i += 1024) {
        int64_t k = part - i < 1024 ? part - i : 1024;
        nt_tensor_to_tcm(&in, buf, begin + i, k);
        for (int64_t j = 0; j < k; j++)
            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;
        nt_tcm_to_tensor(&out, buf, begin + i, k);
    }
    tcm_free(buf);
    return t_out;
}

nt_tensor *standard_accessor(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);
    (void)a;
    return get_dst_tensor();
}

nt_tensor *no_dst(const nt_tensor *t)
{
    return 0;
}

nt_tensor *talk(const nt_tensor *t)
{
    printf("core %u of %u\n", get_cpu_id(), get_cpu_count());
    return get_dst_tensor();
}
