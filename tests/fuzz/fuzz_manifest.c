/* libFuzzer target: the manifest loader (YAML, every key's validation), on any bytes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* sources the manifests of the corpus name, so validation goes past "not found" */
    static int once;
    if (!once++) {
        static const char *const srcs[] = { "relu.c", "shape.c", "k.c", "s.c", "ref.c" };
        for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
            fuzz_file(srcs[i], (const uint8_t *)"", 0);
    }
    const char *path = fuzz_file("neuronop.yaml", data, size);
    nop_manifest *m = NULL;
    nop_error err;
    if (nop_manifest_load(&m, path, &err) == 0) {
        for (int i = 0; i < nop_manifest_op_count(m); i++) {
            nop_opinfo op;
            nop_manifest_op(m, i, &op);
        }
        for (int i = 0; i < nop_manifest_test_count(m); i++) {
            nop_testinfo t;
            nop_manifest_test(m, i, &t);
        }
    }
    nop_manifest_free(m);
    return 0;
}
