/*
 * hugepages.c - backing a tensor's data with transparent huge pages (--hugepages), and
 * finding out whether the kernel granted them: madvise is only a request.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/tensor.h"

#define HUGE_PAGE (2u << 20)

/* Huge-page bytes the kernel gave the mapping holding addr (AnonHugePages in smaps). */
static long anon_huge_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    bool inside = false;
    long kb = 0;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

int nop_tensor_hugepages(nop_tensor *t, enum nop_hugepages *state, nop_error *err)
{
    *state = NOP_HUGEPAGES_SMALL;
    size_t bytes = (size_t)t->numel * t->itemsize;
    if (!t->data || bytes < HUGE_PAGE)
        return 0;   /* too small to matter */
    /* Already in huge pages (a large tensor's block may be: lib/base/hostmem.c) is the one
     * case left alone.  An aligned block alone says nothing: the heap's blocks are never
     * advised, and pages already touched in 4 KiB stay so until khugepaged, so such data
     * moves as any other does, into a block advised before it is written. */
    if (((uintptr_t)t->data & (HUGE_PAGE - 1)) == 0 && anon_huge_kb(t->data) > 0) {
        *state = NOP_HUGEPAGES_GRANTED;
        return 0;
    }
    size_t size = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, size) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "out of memory for a huge-page "
                         "buffer of %zu bytes", size);
    madvise(p, size, MADV_HUGEPAGE);   /* a request; the answer is read back below */
    memcpy(p, t->data, bytes);
    free(t->data);
    t->data = p;
    *state = anon_huge_kb(p) > 0 ? NOP_HUGEPAGES_GRANTED : NOP_HUGEPAGES_REFUSED;
    return 0;
}
