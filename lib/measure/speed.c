/*
 * speed.c - how fast this host runs kernel code: the host-speed factor of the cost model.
 *
 * Kernels are compiled by libtcc, so the reference is too: the relu loop of the TCM example
 * over 64 K floats of mixed signs, compiled in memory and timed.  The device profile says how
 * many cycles the same loop takes per element on the device (reference_loop_cycles), so a
 * kernel's host compute time scales to device cycles the same way on any machine.
 */
#include <stdlib.h>
#include <string.h>

#include "build/compile.h"
#include "base/internal.h"

static const char reference_loop[] =
    "void nt__reference_loop(float *buf, long n, long reps)\n"
    "{\n"
    "    for (long r = 0; r < reps; r++)\n"
    "        for (long j = 0; j < n; j++)\n"
    "            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;\n"
    "}\n";

int nop_host_speed(const char *tcc_dir, double *ns_per_element, nop_error *err)
{
    char dir[1024];
    if (!tcc_dir) {
        if (nop_find_tcc_dir(dir, sizeof dir, err) != 0)
            return -1;
        tcc_dir = dir;
    }
    nopi_cc *cc = nopi_cc_new(NOPI_CC_MEMORY, tcc_dir, NULL, NULL, NULL);
    if (!cc)
        return nopi_nomem(err);
    int rc = -1;
    void (*loop)(float *, long, long) = NULL;
    if (nopi_cc_compile(cc, reference_loop, err) != 0 || nopi_cc_relocate(cc, err) != 0)
        goto out;
    *(void **)&loop = nopi_cc_symbol(cc, "nt__reference_loop");
    if (!loop) {
        nopi_fault(err, NOP_FAULT_HOST, "the host-speed reference loop did not link");
        goto out;
    }
    /* 64 K elements of mixed signs from a fixed generator: too many for a branch predictor
     * to learn, so branches are as unpredictable as on a kernel's random data */
    enum { N = 65536 };
    float *buf = malloc(2 * N * sizeof *buf), *signs = buf + N;
    if (!buf) {
        nopi_nomem(err);
        goto out;
    }
    uint32_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        signs[i] = (x >> 16) & 1 ? 1.0f + (float)(x & 255) : -1.0f - (float)(x & 255);
    }
    /* the best of several timings of the thread's CPU time, as a core's compute is timed
     * (device.c): the host's speed, not its interruptions */
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        memcpy(buf, signs, N * sizeof *buf);
        double t0 = nopi_thread_cpu_now();
        loop(buf, N, 1);
        double t = (nopi_thread_cpu_now() - t0) / N;
        best = t < best ? t : best;
    }
    free(buf);
    *ns_per_element = best * 1e9;
    rc = 0;
out:
    nopi_cc_free(cc);
    return rc;
}
