/* libFuzzer target: generator specs (randn:32x4096, full:4x4:2.5:bf16, ...). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[256];
    if (size >= sizeof spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    /* the product of the numbers in the spec bounds the tensor: skip the ones too large to
     * make in a fuzzer's time (the parser is what is under test, not the memory) */
    double product = 1, n = 0;
    for (const char *p = spec;; p++) {
        if (*p >= '0' && *p <= '9') {
            n = n * 10 + (*p - '0');
        } else {
            if (n > 1)
                product *= n;
            n = 0;
            if (!*p)
                break;
        }
    }
    if (product > 1e6)
        return 0;
    nop_tensor *t = NULL;
    nop_error err;
    (void)nop_is_generator(spec);
    if (nop_tensor_generate(&t, spec, 1, &err) == 0)
        (void)nop_tensor_numel(t);
    nop_tensor_free(t);
    return 0;
}
