/* libFuzzer target: the .npy reader, on any bytes, and the tensor it makes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("in.npy", data, size);
    nop_tensor *t = NULL;
    nop_error err;
    if (nop_tensor_load_npy(&t, path, &err) == 0) {
        nop_tensor_stats st;
        nop_tensor_stats_of(t, &st);
        char shape[96];
        nop_tensor_shape_str(t, shape, sizeof shape);
    }
    nop_tensor_free(t);
    return 0;
}
