/*
 * hostmem.c - host memory for tensors' data and other large buffers, laid out so that the
 * kernel can map it cheaply.
 *
 * Why: on the virtual machines neuronop runs on, whose page tables the hypervisor shadows,
 * the first touch of each 4 KiB page costs a fault (15 us here, 2 ms for a 512 KiB tensor),
 * and a page the kernel filled (a pipe's read) costs another when user code first reads it.
 * One 2 MiB transparent huge page costs one fault.  So a buffer of NOPI_HUGE_FROM bytes or
 * more is 2 MiB-aligned, whole huge pages, advised MADV_HUGEPAGE: at most 2 MiB more than
 * it holds, and the kernel may refuse (then it is ordinary pages, as before).  Smaller ones
 * come from malloc.  Every buffer here is freed with free().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* n bytes in whole huge pages, 2 MiB-aligned and advised for them; NULL on no memory. */
static void *huge_block(size_t n)
{
    if (n > SIZE_MAX - HUGE_PAGE)
        return NULL;
    size_t size = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, size) != 0)
        return NULL;
    madvise(p, size, MADV_HUGEPAGE);   /* a request: refused, it stays ordinary pages */
    return p;
}

void *nopi_host_zalloc(size_t n)
{
    if (n < NOPI_HUGE_FROM) {
        void *p = calloc(n ? n : 1, 1);
        if (p)
            nopi_prefault(p, n);
        return p;
    }
    void *p = huge_block(n);
    if (p)   /* maps it too: malloc may hand back memory it had, not zeros */
        memset(p, 0, n);
    return p;
}

void *nopi_host_block(size_t n)
{
    if (n < NOPI_HUGE_FROM) {
        void *p = malloc(n ? n : 1);
        if (p)
            nopi_prefault(p, n);
        return p;
    }
    return huge_block(n);   /* its one fault comes with the first bytes written */
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
