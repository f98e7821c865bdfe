/*
 * hostmem.c - host memory for tensors' data and other large buffers, laid out so that the
 * kernel can map it cheaply.
 *
 * Why: on the virtual machines neuronop runs on, whose page tables the hypervisor shadows,
 * the first touch of each 4 KiB page costs a fault (15 us here, 2 ms for a 512 KiB tensor),
 * and a page the kernel filled (a pipe's read) costs another when user code first reads it.
 * One 2 MiB transparent huge page costs one fault.  So a buffer of NOPI_HUGE_FROM bytes or
 * more is 2 MiB-aligned, whole huge pages, advised MADV_HUGEPAGE: at most 4 times what it
 * holds (2 MiB for 512 KiB), and the kernel may refuse (then it is ordinary pages, as
 * before).  Smaller ones come from malloc.  Every buffer here is freed with free().
 *
 * Only a block malloc mapped on its own is advised, never one on the heap: advising part of
 * the heap splits its mapping in three, and a kept worker, whose requests allocate from a
 * room on its heap, must find its mappings as they were when it took its snapshot
 * (isolate/snapshot.c) or end.  A heap block was most likely touched before anyway.  Under
 * AddressSanitizer a block is not rounded up, so that a write past its end is still found.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* n bytes in whole huge pages, 2 MiB-aligned and advised for them unless they are on the
 * heap; NULL on no memory. */
static void *huge_block(size_t n)
{
    if (n > SIZE_MAX - HUGE_PAGE)
        return NULL;
#ifdef __SANITIZE_ADDRESS__
    size_t size = n;
#else
    size_t size = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
#endif
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, size) != 0)
        return NULL;
    /* the heap lies below its end; malloc maps large blocks far above it */
    if ((uintptr_t)p > (uintptr_t)sbrk(0))
        madvise(p, size, MADV_HUGEPAGE);   /* a request: the kernel may still refuse */
    return p;
}

void *nopi_host_block(size_t n)
{
    /* Mapped now, in one call, whatever the advice got: the kernel may refuse huge pages
     * (THP off, or none at hand), and then each 4 KiB page would cost a fault of its own.
     * Where they are granted this costs the huge pages' own faults, only sooner. */
    void *p = n < NOPI_HUGE_FROM ? malloc(n ? n : 1) : huge_block(n);
    if (p)
        nopi_prefault(p, n);
    return p;
}

void *nopi_host_zalloc(size_t n)
{
    void *p = nopi_host_block(n);
    if (p)   /* malloc may hand back memory it had, not zeros */
        memset(p, 0, n);
    return p;
}

void nopi_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p, (void)len;
#endif
}
