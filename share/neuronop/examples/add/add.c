/* out = a + b, reading and writing each tensor strictly in order. */
#include <neuronop.h>

nt_tensor *add(const nt_tensor *a, const nt_tensor *b)
{
    nt_tensor *out = get_dst_tensor();
    nt_read_stream ra = nt_read_stream_of(a), rb = nt_read_stream_of(b);
    nt_write_stream w = nt_write_stream_of(out);
    for (int64_t i = 0; i < nt_numel(a); i++)
        nt_stream_write_f32(&w, nt_stream_read_f32(&ra) + nt_stream_read_f32(&rb));
    nt_stream_close(&ra);
    nt_stream_close(&rb);
    nt_stream_close(&w);   /* flushes the writes */
    return out;
}
