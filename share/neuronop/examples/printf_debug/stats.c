/* out[i] = sum of row i, printing each row's sum and the running total. */
#include <neuronop.h>

nt_tensor *row_sums(const nt_tensor *t)
{
    nt_tensor *out = get_dst_tensor();
    nt_accessor in = nt_accessor_of(t), o = nt_accessor_of(out);
    int64_t rows = nt_size(t, 0), cols = nt_size(t, 1);
    double total = 0;
    printf("row_sums: %lld x %lld\n", (long long)rows, (long long)cols);
    for (int64_t i = 0; i < rows; i++) {
        float s = 0;
        for (int64_t j = 0; j < cols; j++)
            s += nt_get_f32(&in, i, j);
        nt_set_f32(&o, s, i);
        total += s;
        printf("  row %lld: sum %.4f, running total %.4f\n", (long long)i, s, total);
    }
    return out;
}
