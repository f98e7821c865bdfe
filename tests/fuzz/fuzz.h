/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share: writing an input to a file in a
 * private scratch folder, for the loaders that read files.
 */
#ifndef NEURONOP_FUZZ_H
#define NEURONOP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libneuronop.h"

/* A scratch folder for this process, made once (a fuzzer runs one input at a time), in
 * $TMPDIR (run.sh gives each run a folder of its own, which it removes afterwards). */
static inline const char *fuzz_dir(void)
{
    static char dir[512];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/neuronop-fuzz.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

/* Writes data to dir/name and returns the path (static storage). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[640];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return path;
}

#endif /* NEURONOP_FUZZ_H */
