#include <neuronop.h>

nt_tensor *segv(const nt_tensor *t)
{
    volatile int *p = (int *)16;
    *p = 1;
    return get_dst_tensor();
}

nt_tensor *divzero(const nt_tensor *t, int64_t d)
{
    volatile int64_t x = 10 / d;
    (void)x;
    return get_dst_tensor();
}

static int recurse(int n)
{
    volatile char frame[512];
    frame[0] = (char)n;
    return n ? recurse(n - 1) + frame[0] : 0;
}

nt_tensor *deep(const nt_tensor *t)
{
    recurse(100);   /* about 50 KB of stack: far over the 6 KB default */
    return get_dst_tensor();
}

nt_tensor *spin(const nt_tensor *t)
{
    volatile int x = 0;
    for (;;)
        x++;
    return 0;
}

nt_tensor *tcm_past_end(const nt_tensor *t)
{
    float *buf = tcm_malloc(64 * sizeof(float));
    nt_tcm_accessor a = nt_tcm_accessor_of(t);
    nt_tensor_to_tcm(&a, buf, nt_numel(t) - 2, 4);
    return get_dst_tensor();
}

nt_tensor *tcm_buffer_overrun(const nt_tensor *t)
{
    float *buf = tcm_malloc(4 * sizeof(float));
    nt_tcm_accessor a = nt_tcm_accessor_of(t);
    nt_tensor_to_tcm(&a, buf, 0, 8);
    return get_dst_tensor();
}

nt_tensor *stream_past_end(const nt_tensor *t)
{
    nt_read_stream r = nt_read_stream_of(t);
    for (int64_t i = 0; i <= nt_numel(t); i++)
        nt_stream_read_f32(&r);
    return get_dst_tensor();
}

nt_tensor *stream_after_close(const nt_tensor *t)
{
    nt_read_stream r = nt_read_stream_of(t);
    nt_stream_close(&r);
    nt_stream_read_f32(&r);
    return get_dst_tensor();
}

nt_tensor *wrong_index_count(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);
    nt_get_f32(&a, 0);   /* t is 2-D */
    return get_dst_tensor();
}

nt_tensor *index_out_of_range(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);
    nt_get_f32(&a, 0, nt_size(t, 1));
    return get_dst_tensor();
}

nt_tensor *write_input(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);
    nt_set_f32(&a, 1.0f, 0, 0);
    return get_dst_tensor();
}

nt_tensor *dtype_mismatch(const nt_tensor *t)
{
    nt_accessor a = nt_accessor_of(t);
    nt_get_bf16(&a, 0, 0);
    return get_dst_tensor();
}

nt_tensor *returns_null(const nt_tensor *t)
{
    return 0;
}

nt_tensor *wrong_shape(const nt_tensor *t)
{
    return nt_zeros(NT_SHAPE(1), NT_F32);
}

nt_tensor *incoherent(const nt_tensor *t)
{
    nt_read_stream r = nt_read_stream_of(t);
    nt_accessor a = nt_accessor_of(t);
    (void)a;
    nt_stream_close(&r);
    return get_dst_tensor();
}

nt_tensor *incoherent_verbose(const nt_tensor *t)
{
    nt_set_coherence(t, NT_INCOHERENT_VERBOSE);
    return incoherent(t);
}

nt_tensor *tcm_leak(const nt_tensor *t)
{
    tcm_malloc(100);
    return get_dst_tensor();
}

nt_tensor *unclosed_write(const nt_tensor *t)
{
    nt_write_stream w = nt_write_stream_of(get_dst_tensor());
    nt_stream_write_f32(&w, 1.0f);
    return get_dst_tensor();
}

/* Copies the input to the output through TCM: correct on any core count. */
nt_tensor *copy_via_tcm(const nt_tensor *t)
{
    nt_tensor *out = get_dst_tensor();
    float *buf = tcm_malloc(sizeof(float) * 256);
    nt_tcm_accessor in = nt_tcm_accessor_of(t), o = nt_tcm_accessor_of(out);
    for (int64_t i = 0; i < nt_numel(t); i += 256) {
        int64_t k = nt_numel(t) - i < 256 ? nt_numel(t) - i : 256;
        nt_tensor_to_tcm(&in, buf, i, k);
        nt_tcm_to_tensor(&o, buf, i, k);
    }
    tcm_free(buf);
    return out;
}
