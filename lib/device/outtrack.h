/*
 * outtrack.h - tracking which output elements each core writes (internal; see outtrack.c).
 */
#ifndef NEURONOP_OUTTRACK_H
#define NEURONOP_OUTTRACK_H

#include <string.h>

#include "core.h"

/* The calling core wrote output elements [begin, end). */
void nopi_out_write(nopi_core *c, int64_t begin, int64_t end);
/* The calling core reads output elements [begin, end): fails it (initcheck) unless it wrote
 * them itself. */
void nopi_out_read(nopi_core *c, int64_t begin, int64_t end, const char *fn);
/* The messages of a read of output elements (initcheck), each with the call that reads them,
 * the first one's index and their count (long long): of a single core's output it did not
 * write; of a multicore output, one element of which the reading core did not write (the
 * index, long long) and, in the first, the core that did (int). */
#define NOPI_OUT_UNINIT_FMT "%s(offset=%lld, n=%lld): reads output elements no core has " \
    "written yet (initcheck); the output starts undefined on the device"
#define NOPI_OUT_OTHER_FMT "%s(offset=%lld, n=%lld): reads output element %lld, which core " \
    "%d wrote (initcheck): cores never synchronise, so what one reads of another's part " \
    "depends on the order they run in; read back only what this core wrote"
#define NOPI_OUT_UNOWNED_FMT "%s(offset=%lld, n=%lld): reads output element %lld, which this " \
    "core has not written yet (initcheck): the output starts undefined on the device, and " \
    "cores never synchronise, so a core may read back only what it wrote itself"

/* C++ element references (outtrack.c's top comment): gives a single-core float32 output's
 * never-written elements their pattern, once, when the init check is on. */
void nopi_out_pattern(nopi_core *c);
/* Element i's pattern: a signalling NaN (quiet bit 22 clear) marked by payload bits 21-19
 * set to 101, with the low 19 bits of i.  Three bits, not one: the canonical NaNs kernels
 * and torch make have those bits all clear (0x7fc00000) or all set (Sleef's 0xffffffff, a
 * bfloat16 or half NaN widened: 0xffff0000), and with bit 21 alone as the mark each of the
 * latter copied to the output was taken for a read of an unwritten element (a C++ idioms
 * tester's find); nor is it the TCM's fill pattern (0x7fa5, tcm.c), 100 there.  And no
 * more than three: the index keeps 19 bits, which name exactly the element of an output of
 * up to 2^19 (with five, 512x512 outputs were named wrongly: a reviewer's find). */
#define NOPI_PATTERN_MARK 0x7fa80000u
#define NOPI_PATTERN_MARK_BITS 0x7fb80000u   /* exponent and payload bits 21-19 */
#define NOPI_PATTERN_QUIET 0x00400000u
#define NOPI_PATTERN_INDEX 0x0007ffffu
static inline uint32_t nopi_out_pattern_bits(int64_t i)
{
    return NOPI_PATTERN_MARK | ((uint32_t)i & NOPI_PATTERN_INDEX);
}
/* What output element i holds, once the pattern is in (c->out_pattern): */
#define NOPI_OUT_WRITTEN (-1)        /* a value written to it */
#define NOPI_OUT_NEVER_WRITTEN (-2)  /* its own pattern */
/* ... or a value made from never-written element k, which was read: k is returned.  Inline:
 * C++ element references ask on each call. */
static inline int64_t nopi_out_pattern_source(const nopi_core *c, int64_t i)
{
    const nt_tensor *t = c->run->dst;
    uint32_t raw;
    memcpy(&raw, t->data + (size_t)i * 4, 4);
    if (raw == nopi_out_pattern_bits(i))
        return NOPI_OUT_NEVER_WRITTEN;
    uint32_t b = raw & 0x7fffffffu;   /* a sign change (-x) keeps the source */
    if ((b & NOPI_PATTERN_MARK_BITS) != NOPI_PATTERN_MARK)
        return NOPI_OUT_WRITTEN;
    if ((b & ~NOPI_PATTERN_QUIET) == nopi_out_pattern_bits(i))
        return i;    /* its own pattern, made quiet or negated: read, then written */
    /* another element's: the nearest below i with those low bits (outputs of more than
     * 2^19 elements are told apart by the low bits only) */
    int64_t low = (int64_t)(b & NOPI_PATTERN_INDEX);
    int64_t k = (i & ~(int64_t)NOPI_PATTERN_INDEX) | low;
    if (k >= t->numel)
        k -= (int64_t)NOPI_PATTERN_INDEX + 1;
    return k >= 0 ? k : low;
}
/* At the kernel's end: -1 and msg filled when an output element holds a value made from a
 * never-written element (initcheck); else 0, with the core's written ranges made what the
 * elements hold.  Does nothing without the pattern. */
int nopi_out_pattern_end(nopi_core *c, char *msg, size_t size);
/* After all cores: fills d->msg and returns -1 for a race or output no core wrote (as the
 * run's checks ask), 0 otherwise. */
int nopi_out_finish(nopi_run *run, nop_diag *d);

#endif /* NEURONOP_OUTTRACK_H */
