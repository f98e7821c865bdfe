/* libFuzzer target: reading a library's self-description from its ELF file
 * (nop_library_describe, what `neuronop inspect` does), on any bytes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("lib.so", data, size);
    nop_library *lib = NULL;
    nop_error err;
    if (nop_library_describe(&lib, path, &err) == 0) {
        char *json = nop_library_json(lib);
        free(json);
        for (int i = 0; i < nop_library_op_count(lib); i++) {
            nop_opinfo op;
            nop_library_op(lib, i, &op);
        }
    }
    nop_library_close(lib);
    return 0;
}
